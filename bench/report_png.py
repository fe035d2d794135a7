"""Regenerate docs/img/report.png: the lag report's HTML page on the demo data, screenshotted
by a headless Chromium.

    python bench/report_png.py                      # mqctl demo into a temporary directory
    python bench/report_png.py --demo-dir DIR       # reuse `mqctl demo --out DIR` (re-runs
                                                    # only the report on DIR's snapshots/logs)
    python bench/report_png.py --out docs/img/report.png --width 1280 --height 2600

Needs the `spark` extra and a Chromium (Debian: `apt-get install -y chromium`; or set
MQCTL_BROWSER to a Chrome/Chromium binary). Prints the page size and the time each step took.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    env = os.environ.get("MQCTL_BROWSER")
    if env:
        return env if shutil.which(env) or Path(env).is_file() else None
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


def screenshot(browser: str, page: Path, png: Path, width: int, height: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mqctl-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", f"--user-data-dir={profile}", f"--window-size={width},{height}",
               "--virtual-time-budget=15000", f"--screenshot={png}", page.resolve().as_uri()]
        subprocess.run(cmd, check=True, capture_output=True, timeout=180)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo-dir", help="an existing `mqctl demo --out` directory")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "report.png"))
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=2600)
    args = ap.parse_args()
    browser = find_browser()
    if browser is None:
        print("no Chromium found: apt-get install -y chromium, or set MQCTL_BROWSER",
              file=sys.stderr)
        return 2
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    tmp = tempfile.mkdtemp(prefix="mqctl-report-png-")
    try:
        t = time.perf_counter()
        if args.demo_dir:
            from mqctl.lagjob import run_report

            demo = Path(args.demo_dir)
            report = Path(tmp) / "report"
            run_report([f"snapshot={demo / 'snapshots'}", str(demo / "logs")], str(report),
                       master="local[2]", window=10)
            what = f"lag report on {demo}"
        else:
            from mqctl.demo import run_demo

            _cap, res = run_demo(Path(tmp) / "demo", master="local[2]")
            report = Path(res.paths["html"]).parent
            what = "mqctl demo"
        page = report / "report.html"
        print(f"{what}: {time.perf_counter() - t:.1f} s; report.html "
              f"{page.stat().st_size / 1e6:.2f} MB")
        t = time.perf_counter()
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        screenshot(browser, page, out, args.width, args.height)
        print(f"screenshot {out} ({out.stat().st_size / 1e3:.0f} kB): "
              f"{time.perf_counter() - t:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
