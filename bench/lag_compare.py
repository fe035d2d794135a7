"""The lag report by today's engine (transforms) and by the kernel (mqctl/lagjob/kernel.py,
``MQCTL_LAG_ENGINE=kernel``) on the same inputs, every output table compared row by row.

    python bench/lag_compare.py [--cases scenario,real,demo,bench10k] [--master local[2]]
                                [--keep DIR] [--show 20] [--demo DIR]

Cases: ``scenario`` (the lag test builders' scenario: snapshots, mqadmin captures, store
files, client logs), ``real`` (../shared/samples/real, both versions), ``demo`` (the demo's
timeline: 3 simulated hours, no Spark to make), ``bench10k`` (bench/gen_exports.py's 10k rows).
Both runs share one SparkSession, each into its own output directory, the same options.

Each dataset (lag, group_status, rebalance/*, quarantine) and the summary's latest rows are
read back and compared: rows matched by the dataset's key, every column that differs printed
(floats equal within 1e-9 relative), then rows only one engine wrote. Exit 0 when every table
is equal, 1 otherwise. A difference is either a bug of today's engine (then named, with a test
pinning it) or of the kernel.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "lagjob"))

REAL = Path(__file__).resolve().parents[2] / "shared" / "samples" / "real"
# the key of a dataset's rows (what a row describes); a table without one: rows as multisets
KEYS: dict[str, tuple[str, ...]] = {
    "lag": ("cluster", "group", "topic", "broker", "queue_id", "capture_ts"),
    "group_status": ("cluster", "group", "topic", "capture_ts"),
    "rebalance/unowned": ("cluster", "group", "topic", "broker", "queue_id", "start_ts",
                          "source_kind"),
    "summary": ("cluster", "group", "topic"),
    "groups": ("cluster", "group"),
}
DATASETS = ("lag", "group_status", "rebalance/events", "rebalance/moves", "rebalance/storms",
            "rebalance/unowned", "rebalance/locks", "quarantine")
# columns that name the run, not the result
IGNORED = {"run_id", "run_ts", "written_at", "elapsed_ms"}


def case_inputs(name: str, tmp: Path, demo: str | None = None
                ) -> tuple[list[str], dict[str, Any]]:
    """(inputs, report options) of a case (``demo``: the demo's data already captured)."""
    if name == "scenario":
        from builders import build_scenario

        root = tmp / "scenario"
        build_scenario(root)
        return [str(root)], {"tz": "UTC", "log_tz": "UTC"}
    if name == "real":
        return [str(REAL / v) for v in ("4.9.3", "5.3.3")], {"tz": "UTC", "log_tz": "UTC"}
    if name == "demo":
        from sim_common import demo_data

        return [str(demo_data(demo, str(tmp)))], {"tz": "UTC", "log_tz": "UTC"}
    if name == "bench10k":
        from gen_exports import generate

        generate(tmp / "bench10k", 10, 5, 8, 25)
        return [str(tmp / "bench10k")], {"tz": "UTC"}
    raise SystemExit(f"lag_compare: unknown case {name!r}")


def run_engine(spark: Any, engine: str, inputs: list[str], out: Path, opts: dict[str, Any]
               ) -> Any:
    from mqctl.lagjob.job import run_report

    os.environ["MQCTL_LAG_ENGINE"] = engine
    try:
        return run_report(inputs, str(out), spark=spark, incremental=False, **opts)
    finally:
        os.environ.pop("MQCTL_LAG_ENGINE", None)


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    return v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)
    return bool(a == b)


def read_rows(spark: Any, path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [{k: _norm(v) for k, v in r.asDict(recursive=True).items() if k not in IGNORED}
            for r in spark.read.parquet(str(path)).collect()]


def compare(name: str, old: list[dict[str, Any]], new: list[dict[str, Any]], show: int
            ) -> int:
    """Print the differences of one table; their count."""
    diffs: list[str] = []
    key = KEYS.get(name)
    if key is not None:
        o = {tuple(r.get(k) for k in key): r for r in old}
        n = {tuple(r.get(k) for k in key): r for r in new}
        for k in sorted(set(o) & set(n), key=repr):
            cols = sorted(set(o[k]) | set(n[k]))
            bad = [c for c in cols if not _same(o[k].get(c), n[k].get(c))]
            if bad:
                diffs.append(f"  {dict(zip(key, k, strict=True))}: " + ", ".join(
                    f"{c}: old {o[k].get(c)!r} new {n[k].get(c)!r}" for c in bad))
        diffs += [f"  only old: {o[k]}" for k in sorted(set(o) - set(n), key=repr)]
        diffs += [f"  only new: {n[k]}" for k in sorted(set(n) - set(o), key=repr)]
    else:
        def bag(rows: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
            return Counter(tuple(sorted(r.items())) for r in rows)

        o_bag, n_bag = bag(old), bag(new)
        diffs += [f"  only old: {dict(r)}" for r in sorted((o_bag - n_bag).elements(), key=repr)]
        diffs += [f"  only new: {dict(r)}" for r in sorted((n_bag - o_bag).elements(), key=repr)]
    verdict = "equal" if not diffs else f"{len(diffs)} difference(s)"
    print(f"{name}: {len(old)} rows old, {len(new)} new: {verdict}")
    for d in diffs[:show]:
        print(d)
    if len(diffs) > show:
        print(f"  ... {len(diffs) - show} more (--show)")
    return len(diffs)


# summary.json's parts compared: the latest rows per group and topic and per group, and the
# run's counts, notes and warnings (as one row each)
SUMMARY_PARTS = ("summary", "groups", "counts", "dates", "notes", "warnings")


def summary_rows(out: Path, part: str) -> list[dict[str, Any]]:
    """The rows of one part of summary.json."""
    got = json.loads((out / "summary.json").read_text()).get(part)
    rows = got if isinstance(got, list) and all(isinstance(r, dict) for r in got) else [
        {"value": got}]
    return [{k: _norm(v) for k, v in r.items() if k not in IGNORED} for r in rows]


def session(master: str) -> Any:
    from pyspark.sql import SparkSession

    from mqctl.lagjob.session import JVM_OPTS, default_conf

    builder = SparkSession.builder
    for k, v in default_conf(master).items():  # the settings of the CLI's own session
        builder = builder.config(k, v)
    return (builder.master(master).appName("mqctl-lag-compare")
            .config("spark.driver.extraJavaOptions", JVM_OPTS)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.log.level", "WARN").getOrCreate())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="scenario,real,demo,bench10k")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--keep", help="write the outputs under this directory (else a temporary)")
    ap.add_argument("--demo", help="the demo's data (mqctl demo --out's snapshots/ and logs/), "
                    "else captured first (minutes)")
    ap.add_argument("--show", type=int, default=20, help="differences printed per table")
    a = ap.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # (the workers' pyarrow)
    total = 0
    with tempfile.TemporaryDirectory() as tmpd:
        base = Path(a.keep) if a.keep else Path(tmpd)
        spark = session(a.master)
        try:
            for case in [c.strip() for c in a.cases.split(",") if c.strip()]:
                root = base / case
                root.mkdir(parents=True, exist_ok=True)
                inputs, opts = case_inputs(case, root, a.demo)
                outs = {e: root / f"out-{e}" for e in ("transforms", "kernel")}
                for e, out in outs.items():
                    run_engine(spark, e, inputs, out, opts)
                print(f"== {case}")
                n = 0
                for ds in DATASETS:
                    n += compare(ds, read_rows(spark, outs["transforms"] / ds),
                                 read_rows(spark, outs["kernel"] / ds), a.show)
                for part in SUMMARY_PARTS:
                    n += compare(part, summary_rows(outs["transforms"], part),
                                 summary_rows(outs["kernel"], part), a.show)
                total += n
        finally:
            spark.stop()
    print(f"lag_compare: {total} difference(s)")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
