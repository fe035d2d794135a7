"""The kernel engine (``MQCTL_LAG_ENGINE=kernel``: mqctl/lagjob/flow.py around
mqctl/lagjob/kernel.py) writes the same tables as today's transforms on the lag test builders'
scenario (snapshots, mqadmin captures, store files, client and lock logs);
bench/lag_compare.py runs the larger cases (the real corpus, the demo, the bench's data)."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mqctl.lagjob import engine as lag_engine

from .builders import build_scenario

pytest.importorskip("pyarrow")
DATASETS = ("lag", "group_status", "rebalance/events", "rebalance/moves", "rebalance/storms",
            "rebalance/unowned", "rebalance/locks", "quarantine")


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return None if math.isnan(v) else round(v, 9)
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    return v


def tables(spark, out: Path) -> dict[str, Counter]:
    got = {}
    for ds in DATASETS:
        p = out / ds
        rows = spark.read.parquet(str(p)).collect() if p.exists() else []
        got[ds] = Counter(tuple(sorted((k, _norm(v)) for k, v in r.asDict(True).items()))
                          for r in rows)
    return got


def both(spark, tmp_path: Path, monkeypatch, inputs: list[str], **opts: Any):
    from mqctl.lagjob import run_report

    out = {}
    for engine in lag_engine.ENGINES:
        monkeypatch.setenv(lag_engine.ENGINE_ENV, engine)
        assert lag_engine.engine() == engine
        run_report(inputs, str(tmp_path / engine), spark=spark, incremental=False, **opts)
        out[engine] = tables(spark, tmp_path / engine)
    return out["transforms"], out["kernel"]


def test_the_kernel_engine_writes_the_same_tables_on_the_scenario(spark, tmp_path, monkeypatch):
    build_scenario(tmp_path / "in")
    old, new = both(spark, tmp_path, monkeypatch, [str(tmp_path / "in")], tz="UTC",
                    log_tz="UTC")
    assert sum(old["lag"].values()) > 0 and sum(old["rebalance/unowned"].values()) > 0
    for ds in DATASETS:
        assert new[ds] == old[ds], ds


def test_an_unknown_engine_is_the_default(monkeypatch):
    monkeypatch.setenv(lag_engine.ENGINE_ENV, "vectorised")
    assert lag_engine.engine() == "kernel"
    assert lag_engine.use_kernel(bounded=False) and not lag_engine.use_kernel(bounded=True)
    monkeypatch.setenv(lag_engine.ENGINE_ENV, "transforms")
    assert not lag_engine.use_kernel(bounded=False)


def test_a_run_without_the_arrow_modules_says_what_to_install(monkeypatch, tmp_path):
    import importlib.util

    from mqctl.errors import UsageError
    from mqctl.lagjob import session
    from mqctl.lagjob.session import require_arrow

    real = importlib.util.find_spec
    monkeypatch.setattr(session, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    with pytest.raises(UsageError) as e:
        require_arrow()
    assert "pyarrow" in str(e.value) and "numpy" not in str(e.value)
    assert "mqctl[job]" in (e.value.hint or "")
    monkeypatch.setenv(lag_engine.ENGINE_ENV, "transforms")
    require_arrow()  # (the transforms need none of them)
