"""Scenario generators shared by the benchmarks (fixed shapes, no randomness)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def large_scenario(brokers: int = 32, topics: int = 16, queues_per_topic: int = 4,
                   groups: int = 200, consumers_per_group: int = 2,
                   clock: str = "manual") -> dict[str, Any]:
    """The bundled generator (``mqctl sim up --scenario large``) with a manual clock."""
    from mqctl.sim.generate import large_scenario as generate

    return generate(brokers, topics, queues_per_topic, groups, consumers_per_group, clock)


class SimProcess:
    """A simulated cluster in its own process (``mqctl sim up``), so that client and server
    each get a core, as they would on different machines."""

    def __init__(self, doc: dict[str, Any], *, latency_ms: float = 0.0):
        import tempfile

        import yaml

        if latency_ms:
            doc = dict(doc, faults=[{"action": "latency", "broker": b, "latency_ms": latency_ms}
                                    for b in doc["brokers"]])
        self._dir = tempfile.TemporaryDirectory(prefix="mqctl-bench-")
        self.path = f"{self._dir.name}/scenario.yaml"
        with open(self.path, "w") as fh:
            yaml.safe_dump(doc, fh)
        self.namesrv_addr = ""

    def __enter__(self) -> SimProcess:
        import subprocess
        import sys
        import time

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mqctl", "sim", "up", "--scenario", self.path, "--port", "0"],
            stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("export NAMESRV_ADDR="):
                self.namesrv_addr = line.strip().split("=", 1)[1]
                return self
        self.__exit__()
        raise RuntimeError("the simulated cluster did not start")

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
        self._dir.cleanup()


def demo_data(given: str | None, tmp: str) -> Path:
    """The demo's data for the small-report benches: ``given`` (a directory with snapshots/ and
    logs/, as ``mqctl demo --out`` leaves them), else the demo's timeline (3 simulated hours, a
    snapshot every 2 minutes) captured once into ``tmp`` (the simulated cluster; no Spark)."""
    if given:
        return Path(given)
    import asyncio
    import time

    from mqctl.demo import capture_timeline

    data, t0 = Path(tmp, "demo"), time.perf_counter()
    cap = asyncio.run(capture_timeline(data, hours=3.0, interval_s=120.0))
    print(f"demo timeline: {cap.rows} rows in {cap.captures} captures "
          f"({time.perf_counter() - t0:.1f} s)")
    return data
