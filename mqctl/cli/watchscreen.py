"""``--watch`` on a terminal: a full-screen view redrawn in place (Rich Live on the alternate
screen) with a header (cluster, the time of the last complete read, the interval, a late read
said), the view's main table with the deltas of each row (the lag's change and its rate, the
rate between reads, changed states highlighted for a few rounds) and the rows of a broker that
did not answer dimmed with the age of their last good value. ``q`` or Ctrl-C leaves: the
terminal is restored (its mode and the main screen), exit 0. The width follows the terminal on
resize. Cluster data is escaped before it reaches the terminal (Rich ``Text``, no markup)."""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from mqctl.render import emit, main_table, printable, to_json
from mqctl.timeparse import format_local, format_ms
from mqctl.views.watch import SPECS, WatchSpec, run_watch

try:  # (POSIX terminals; elsewhere no key reading, Ctrl-C still leaves)
    import termios
    import tty
except ImportError:  # pragma: no cover
    termios = None  # type: ignore[assignment]
    tty = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Group

    from mqctl.render import Result, Table
    from mqctl.views.watch import WatchRound


def watch_rounds(fetch: Callable[[], Any], render: Callable[[Any], Result], *, fmt: str,
                 interval: float, count: int | None, view: str, title: str,
                 quiet: bool = False, text: bool = False) -> None:
    """The rounds of ``--watch`` (:func:`mqctl.views.watch.run_watch`: rounds never overlap,
    a slow read stretches the interval and says so). On a terminal (not ``-o json``): the
    full-screen :class:`Screen`, ``q`` or Ctrl-C leaves with exit 0. Otherwise one compact
    JSON document per round, one per line (JSON Lines; Ctrl-C: exit 130 as every command);
    ``text`` (a text format asked with ``-o``): each round in it after a time line."""
    spec = SPECS.get(view, WatchSpec(()))

    def rows_of(value: Any) -> list[dict[str, Any]]:
        tables = main_table(render(value))
        return tables[0].rows if tables else []

    if sys.stdout.isatty() and fmt != "json" and not quiet:
        try:
            with Screen(title, render) as screen:
                run_watch(fetch, rows_of, spec, interval, screen.show, count=count,
                          wait=screen.wait)
        except KeyboardInterrupt:  # Ctrl-C leaves the view: the terminal restored, exit 0
            return
        return

    def line(rnd: WatchRound) -> None:
        if text:
            if not quiet:
                sys.stdout.write(f"--- {format_local(rnd.started_ms)} ---\n")
                if rnd.note():
                    sys.stdout.write(f"--- {rnd.note()} ---\n")
            emit(render(rnd.value), fmt, quiet=quiet)
            return
        doc = {**rnd.header(), "capture_time": format_ms(rnd.started_ms), "view": view,
               "note": rnd.note(), "deltas": rnd.deltas, "result": render(rnd.value).structured()}
        if not quiet:
            sys.stdout.write(to_json(doc, compact=True) + "\n")
            sys.stdout.flush()

    run_watch(fetch, rows_of, spec, interval, line, count=count)


def _fmt_rate(v: Any) -> str:
    return "-" if v is None else f"{v:,.1f}"


def _fmt_change(v: Any) -> str:
    return "" if v is None else f"{v:+,}" if isinstance(v, int) else f"{v:+,.1f}"


class Screen:
    """The terminal view of one watch: :meth:`show` draws a round, :meth:`wait` waits for the
    next while keeping the drawing to the terminal's width and reading ``q``."""

    def __init__(self, title: str, render: Any) -> None:
        self.title = title
        self.render = render  # value -> Result
        self.stop = threading.Event()
        self._last: Any = None
        self._live: Any = None
        self._term: Any = None
        self._keys: threading.Thread | None = None

    def __enter__(self) -> Screen:
        from rich.console import Console
        from rich.live import Live

        console = Console(file=sys.stdout, highlight=False)
        self._live = Live(console=console, screen=True, auto_refresh=False,
                          redirect_stdout=False, redirect_stderr=False)
        self._live.__enter__()
        self._cbreak()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        try:
            if self._live is not None:
                self._live.__exit__(None, None, None)
        finally:
            self._restore()

    # ------------------------------------------------------------ the keyboard

    def _cbreak(self) -> None:
        """``q`` without Enter: stdin in cbreak mode (restored on exit) and a reader thread."""
        if termios is None or tty is None:
            return
        try:
            fd = sys.stdin.fileno()
            if not sys.stdin.isatty():
                return
            self._term = (fd, termios.tcgetattr(fd))
            tty.setcbreak(fd)
        except (OSError, ValueError, AttributeError):
            return
        self._keys = threading.Thread(target=self._read_keys, daemon=True,
                                      name="mqctl-watch-keys")
        self._keys.start()

    def _read_keys(self) -> None:
        fd = sys.stdin.fileno()
        while not self.stop.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], 0.2)
                if ready and os.read(fd, 1) in (b"q", b"Q"):
                    self.stop.set()
            except (OSError, ValueError):
                return

    def _restore(self) -> None:
        if self._term is None or termios is None:
            return
        fd, mode = self._term
        self._term = None
        try:
            termios.tcsetattr(fd, termios.TCSADRAIN, mode)
        except (OSError, termios.error):
            pass

    # ------------------------------------------------------------ drawing

    def show(self, rnd: WatchRound) -> None:
        self._last = rnd
        self._draw()

    def wait(self, seconds: float) -> bool:
        """Until the next round (True: ``q`` was pressed), redrawing at the terminal's width
        when it changes."""
        end = time.monotonic() + seconds
        width = self._width()
        while not self.stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.stop.wait(min(0.2, left))
            if self._width() != width:
                width = self._width()
                self._draw()
        return True

    def _width(self) -> int:
        return int(self._live.console.size.width) if self._live is not None else 80

    def _draw(self) -> None:
        if self._live is None or self._last is None:
            return
        self._live.update(self.frame(self._last), refresh=True)

    def frame(self, rnd: WatchRound) -> Group:
        from rich.console import Group
        from rich.text import Text

        result: Result = self.render(rnd.value)
        cluster = getattr(rnd.value, "cluster", None)
        head = Text(f"{self.title}{f' ({cluster})' if isinstance(cluster, str) else ''}  ",
                    style="bold")
        head.append(f"last read {format_local(rnd.started_ms)}  every {rnd.interval_s:g}s  "
                    f"round {rnd.n}  (q to quit)")
        parts: list[Any] = [head]
        note = rnd.note()
        if note:
            parts.append(Text(note, style="yellow"))
        if rnd.failed:
            parts.append(Text("did not answer this round: " + ", ".join(rnd.failed)
                              + " (their rows: the last good values, dimmed, with their age)",
                              style="red"))
        tables = main_table(result)
        if tables:
            parts.append(self.table(tables[0], rnd))
        for n in result.notes[:5]:
            parts.append(Text(n, style="dim"))
        return Group(*parts)

    def table(self, t: Table, rnd: WatchRound) -> Any:
        from rich.table import Table as RichTable
        from rich.text import Text

        rt = RichTable(box=None, pad_edge=False, expand=False, header_style="bold")
        for c in t.columns:
            rt.add_column(c.header, justify="right" if c.align == "right" else "left",
                          overflow="ellipsis")
        for h in ("Δ", "Δ/s", "RATE/s", "SINCE"):
            rt.add_column(h, justify="right")
        by_key = {tuple(d.get(k) for k in _keys(d)): d for d in rnd.deltas}
        shown = set()
        for row in t.rows:
            d = by_key.get(tuple(row.get(k) for k in _keys_of(rnd)), {})
            shown.add(id(d))
            rt.add_row(*self._cells(t, row, d))
        for d in rnd.deltas:  # stale rows the view no longer lists (their broker is down)
            if d.get("stale") and id(d) not in shown and isinstance(d.get("row"), dict):
                rt.add_row(*self._cells(t, d["row"], d))
        rt.caption = Text(printable(t.title or ""), style="dim") if t.title else None
        return rt

    def _cells(self, t: Table, row: dict[str, Any], d: dict[str, Any]) -> list[Any]:
        from rich.text import Text

        stale = bool(d.get("stale"))
        src = d["row"] if stale and isinstance(d.get("row"), dict) else row
        changed = set(d.get("changed") or ())
        cells: list[Any] = []
        for c in t.columns:
            style = "dim" if stale else "reverse" if c.key in changed else ""
            cells.append(Text(c.display(src), style=style))
        cells += [Text(_fmt_change(d.get("count_change"))),
                  Text(_fmt_rate(d.get("count_per_s")) if d.get("count_per_s") is not None
                       else ""),
                  Text(_fmt_rate(d.get("rate_per_s")) if d.get("rate_per_s") is not None
                       else ""),
                  Text(f"stale {d['stale_age_s']:.0f}s" if stale else "", style="dim")]
        return cells


def _keys(d: dict[str, Any]) -> list[str]:
    return [k for k in d if k not in _DELTA_KEYS]


_DELTA_KEYS = {"count_change", "count_per_s", "rate_per_s", "changed", "stale", "stale_age_s",
               "row"}


def _keys_of(rnd: WatchRound) -> list[str]:
    return _keys(rnd.deltas[0]) if rnd.deltas else []
