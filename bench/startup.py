"""Start-up cost of `mqctl --help` against the floor our framework sets.

Runs, interleaved, N times each:
  * `python -c pass`                               (the interpreter alone)
  * a minimal one-command Typer app's `--help`     (the framework floor)
  * `python -m mqctl --help`                       (ours)
and prints medians and the ratio mqctl / minimal-Typer (the requirement is <= 1.5).

    python bench/startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MINIMAL = '''
import typer

app = typer.Typer()


@app.command()
def hello(name: str = "world") -> None:
    """Say hello."""
    print(name)


if __name__ == "__main__":
    app()
'''


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        minimal = Path(d) / "minimal_app.py"
        minimal.write_text(MINIMAL)
        cmds = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "minimal typer --help": [sys.executable, str(minimal), "--help"],
            "mqctl --help": [sys.executable, "-m", "mqctl", "--help"],
        }
        for c in cmds.values():  # warm the page cache / bytecode
            timed(c)
        samples: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.runs):
            for k, c in cmds.items():
                samples[k].append(timed(c))
    med = {k: statistics.median(v) for k, v in samples.items()}
    for k, v in med.items():
        print(f"{k:<24} median {v * 1000:7.1f} ms  (min {min(samples[k]) * 1000:.1f} ms)")
    ratio = med["mqctl --help"] / med["minimal typer --help"]
    print(f"ratio mqctl/minimal-typer: {ratio:.2f}x (requirement: <= 1.50x)")


if __name__ == "__main__":
    main()
