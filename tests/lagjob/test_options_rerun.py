"""A re-run with another value of an option that changes results computes every
capture again (the state records the options' fingerprint, mqctl/lagoptions.py), and ends with
the outputs of one full run with the new value. Before the options were declared once, the
fingerprint's hand-written list missed --storm-round-max and --unowned-max: such a re-run was
a bounded one, reusing the derived state computed with the old value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from .builders import snap_row, write_snapshot
from .test_bounded import bounded
from .test_incremental import assert_same

T0 = 1717200000000  # 2024-06-01T00:00:00Z
STEP = 20_000  # a capture every 20 s: G_CHURN's changes make one long rebalance round


def write_capture(root: Path, i: int) -> Path:
    ts = T0 + i * STEP
    rows = []
    for q in range(2):
        b = 1000 + 100 * i
        two = ["c1@1", "c2@2"]
        rows.append(snap_row(ts, "G_OK", "T", q, b, b, owner=two[q], members=two, delay_ms=0))
        # the queues swap owners at every capture: a change every 20 s, one endless round
        rows.append(snap_row(ts, "G_CHURN", "T", q, b, b - 10, owner=two[(q + i) % 2],
                             members=two, delay_ms=1000))
    return write_snapshot(root, "c1", ts, rows)


def run(spark, root: Path, out: Path, said: list[str] | None = None, **kw):
    from mqctl.lagjob import run_report

    return run_report([str(root)], str(out), spark=spark, tz="UTC", window=3,
                      progress=(said.append if said is not None else None), **kw)


def test_a_rerun_with_another_option_value_computes_everything(spark, tmp_path):
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"
    for i in range(6):
        write_capture(root, i)
    r1 = run(spark, root, inc)
    assert r1.counts["storms"] == 1  # the long round (100 s > --storm-round-max 1m)

    def rerun(i: int, **kw) -> bool:
        write_capture(root, i)
        said: list[str] = []
        run(spark, root, inc, said, **kw)
        return bounded(said)

    # the long-round rule off: not a bounded re-run, whatever the state holds
    assert rerun(6, storm_round_max_ms=0) is False
    assert rerun(7, storm_round_max_ms=0) is True  # the same options again: bounded
    assert rerun(8, storm_round_max_ms=0, unowned_max=0.5) is False
    ri = run(spark, root, inc, storm_round_max_ms=0, unowned_max=0.5)
    rf = run(spark, root, full, storm_round_max_ms=0, unowned_max=0.5, incremental=False)
    assert rf.counts["storms"] == 0  # the option changed a result
    # (no storm, no unowned interval, no log, nothing quarantined: those datasets are empty)
    assert_same(spark, inc, full, ri, rf, skip=("rebalance/storms", "rebalance/unowned",
                                                "rebalance/locks", "quarantine"))
    from mqctl.lagoptions import Options

    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert man["fingerprint"] == Options(tz="UTC", window=3, storm_round_max_ms=0,
                                         unowned_max=0.5).fingerprint()
