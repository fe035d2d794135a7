"""report.html in a real headless browser: the page loads without a JavaScript error (it has
no script at all), the overview charts are drawn, every group has its timeline, the legend is
there and hostile names stay text (a hand-built page; tests/lagjob/test_report_browser.py
checks the page Spark produced from the demo). Skipped (with the reason) where no
Chromium/Chrome is installed: Debian `apt-get install -y chromium`, or
MQCTL_BROWSER=/path/to/chrome; `./dev test` installs it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lagjob.test_html_report import EVIL, sample_page

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    env = os.environ.get("MQCTL_BROWSER")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no headless browser: install Chromium (Debian: apt-get install -y "
    "chromium; ./dev test does) or set MQCTL_BROWSER to a Chrome/Chromium binary")

# first thing in <head>: every uncaught error and console.error lands in an attribute of
# <html>, which --dump-dom then shows
CATCH = ("<script>(function(){var d=document.documentElement;function add(m){"
         "d.setAttribute('data-js-errors',(d.getAttribute('data-js-errors')||'')+m+'\\n');}"
         "window.addEventListener('error',function(e){add('error: '+e.message);});"
         "window.addEventListener('unhandledrejection',function(e){add('rejection: '+e.reason);});"
         "var ce=console.error;console.error=function(){add('console.error: '+"
         "Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};})();"
         "</script>")


def _run(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}",
         "--virtual-time-budget=15000", *args], capture_output=True, text=True, timeout=180)


class _Dom(HTMLParser):
    """Elements (tag, attrs) and the text inside elements of a class."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.texts: dict[str, list[str]] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        cls = a.get("class", "").split()
        self._open.append(cls[0] if cls and tag == "span" else None)

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for c in self._open:
            if c:
                self.texts.setdefault(c, []).append(data)

    def all(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.elements
                if t == tag and (cls is None or cls in a.get("class", "").split())]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    page = sample_page().replace("<head>", "<head>" + CATCH, 1)
    path = tmp / "report.html"
    path.write_text(page, encoding="utf-8")
    res = _run(["--dump-dom", path.as_uri()], tmp)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "<html" in res.stdout, res.stderr[-2000:]
    dom = _Dom()
    dom.feed(res.stdout)
    return {"dom": dom, "html": res.stdout, "tmp": tmp, "path": path}


def test_no_javascript_errors_and_the_overview_is_drawn(rendered):
    root = rendered["dom"].all("html")[0]
    assert "data-js-errors" not in root, root.get("data-js-errors")
    # the only script is the test's own error catcher: the page runs none
    assert len(rendered["dom"].all("script")) == 1
    charts = rendered["dom"].all("svg", "overview")
    assert [c["class"] for c in charts] == ["overview olag", "overview otimelag",
                                            "overview rebalance"]
    # lines of both groups in the two value charts, the storm and the event in the timeline
    assert len(rendered["dom"].all("polyline")) >= 4
    assert len(rendered["dom"].all("rect", "ostorm")) == 1
    assert len(rendered["dom"].all("path", "oevent")) == 1


def test_the_error_catcher_catches(tmp_path):
    """The check above can fail: a page with a broken script reports it."""
    path = tmp_path / "broken.html"
    path.write_text(f"<!DOCTYPE html><html><head>{CATCH}</head><body>"
                    "<script>undefinedFunction()</script></body></html>")
    res = _run(["--dump-dom", path.as_uri()], tmp_path)
    assert re.search(r'data-js-errors="error: Uncaught ReferenceError: undefinedFunction',
                     res.stdout), res.stdout[:500]


def test_sections_legend_timelines_and_escaped_names(rendered):
    dom = rendered["dom"]
    ids = {a.get("id") for _, a in dom.elements if a.get("id")}
    assert {"status", "legend", "groups", "overview", "notes", "g-0", "g-1"} <= ids
    sections = dom.all("section", "group")
    assert [s["class"] for s in sections] == ["group st-STOP h-none", "group st-WARN h-none"]
    timelines = dom.all("svg", "timeline")
    assert [t["id"] for t in timelines] == ["svg-0", "svg-1"]  # one per group
    assert len(dom.all("dl", "status-legend")) == 1 and len(dom.all("dl", "column-legend")) == 1
    assert [a["class"] for a in dom.all("tr") if a.get("class")] == ["st-STOP", "st-WARN"]
    # the hostile group name is text in the browser's DOM, no element came out of it
    assert dom.texts["gname"] == ["GID_AUDIT", EVIL]
    assert not dom.all("img")
    assert len(dom.all("rect", "own")) == 3 and len(dom.all("rect", "unowned")) == 2


def png_pixels(data: bytes) -> tuple[int, int, set[tuple[int, int, int]]]:
    """(width, height, the set of RGB colours) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours = bytearray(stride), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(zip(line[0::bpp], line[1::bpp], line[2::bpp], strict=True))
        prev = line
    return w, h, colours


def test_screenshot_shows_the_status_colours(rendered):
    """The page as drawn: the STOP and WARN rows and badges in their colours (the report's
    CSS, mqctl/lagjob/html/page.py), among the many colours of text and charts."""
    png = rendered["tmp"] / "report.png"
    res = _run(["--window-size=1000,700", f"--screenshot={png}", rendered["path"].as_uri()],
               rendered["tmp"])
    assert res.returncode == 0, res.stderr[-2000:]
    w, h, colours = png_pixels(png.read_bytes())
    assert (w, h) == (1000, 700)
    hexes = {f"#{r:02x}{g:02x}{b:02x}" for r, g, b in colours}
    assert {"#ffd6da", "#fff6d8", "#c0162c", "#c99700"} <= hexes, sorted(hexes)[:40]
    assert len(colours) > 50  # text and charts, not a blank page
