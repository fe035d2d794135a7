"""The public Python API (docs/api.md): the page's scripts run against the simulated cluster and
agree with the CLI; what ``__all__`` lists exists; a cluster computes in its own context; one
place builds the remoting client."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from conftest import run_cli

import mqctl
import mqctl.api
from mqctl.context import Context, current

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def run_block(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_api"})
    return out.getvalue()


def test_the_first_script_runs_and_agrees_with_the_cli(sim, monkeypatch):
    monkeypatch.setenv("NAMESRV_ADDR", sim.cluster.namesrv_addr)
    out = run_block(python_blocks()[0])
    groups = run_cli(["groups", "-o", "json"]).json
    rows = groups["groups"] if isinstance(groups, dict) else groups
    for row in rows:  # every group the CLI lists, with the lag it shows
        lag = row["lag"]
        assert re.search(rf"^{re.escape(row['group'])} +members=\S+ lag={lag}$", out, re.M), (
            row, out)
    known = [r for r in rows if r["lag"] is not None]
    worst = max(known, key=lambda r: r["lag"])
    assert f"furthest behind: {worst['group']}\n" in out
    progress = run_cli(["group", "progress", worst["group"], "-o", "json"]).json
    queues = progress["queues"]
    shown = re.findall(r"^  (\S+) (\S+:\d+) lag=(\S+) owner=", out, re.M)
    main = [(t, q, lag) for t, q, lag in shown if not t.startswith("%RETRY%")]
    assert main == [(q["topic"], f"{q['broker']}:{q['queue_id']}", str(q["lag"]))
                    for q in queues]  # (the %RETRY% queues: the command's retry section)
    topic = max(queues, key=lambda q: q["lag"] or 0)["topic"]
    plan = run_cli(["offsets", "reset", worst["group"], "-t", topic, "--by-duration", "-1h",
                    "-o", "json"]).json
    assert f"reset plan for {worst['group']} / {topic}:" in out
    lines = re.findall(r"^  (\S+:\d+) (\S+) -> (\d+) \(replay (\d+), skip (\d+)\)$", out, re.M)
    assert [(f"{q['broker']}:{q['queue_id']}", int(q["target"])) for q in plan["queues"]] == [
        (name, int(target)) for name, _cur, target, _r, _s in lines]


def test_the_reset_script_changes_the_offsets_and_verifies_them(sim, monkeypatch, tmp_path):
    """The page's reset: planned with execute=True, applied, each queue verified; the
    rollback file is where the script put it and the offsets are at the earliest."""
    monkeypatch.setenv("NAMESRV_ADDR", sim.cluster.namesrv_addr)
    monkeypatch.chdir(tmp_path)
    setup = "from mqctl import Cluster\ncluster = Cluster()\n"
    block = next(b for b in python_blocks() if "execute=True" in b)
    out = run_block(setup + block + "cluster.close()\n")
    assert (tmp_path / "GID_REPLAY.rollback.json").is_file()
    statuses = re.findall(r"^broker-\w+:\d+ (\S+) ", out, re.M)
    assert statuses and set(statuses) == {"verified"}, out
    assert "ready" in out.split() and "applying" in out.split()
    shown = run_cli(["offsets", "show", "GID_REPLAY", "-t", "TopicPay", "-o", "json"]).json
    queues = shown["queues"] if isinstance(shown, dict) else shown
    assert queues and all(q["current"] == q["min"] for q in queues)


def test_the_async_cluster_reads_the_same(sim):
    async def go() -> list[str]:
        async with mqctl.AsyncCluster(sim.cluster.namesrv_addr) as c:
            return [g.group for g in (await c.groups()).groups]

    with mqctl.Cluster(sim.cluster.namesrv_addr) as c:
        sync = [g.group for g in c.groups().groups]
    assert asyncio.run(go()) == sync and sync


def test_a_cluster_computes_in_its_own_context(sim):
    """The context passed in is the one the results are computed with (the clock here), not
    the caller's."""
    fixed = current().now_ms() + 3_600_000
    with mqctl.Cluster(sim.cluster.namesrv_addr,
                       context=current().with_(clock=lambda: fixed)) as c:
        assert c.groups().capture_ts == fixed
        assert c.group_progress("GID_ORDER").capture_ts == fixed
    assert current().now_ms() != fixed


def test_warnings_go_to_the_context(sim):
    seen: list[str] = []
    with mqctl.Cluster(sim.cluster.namesrv_addr,
                       context=Context(clock=current().clock, warn=seen.append)) as c:
        c.plan_reset("GID_REPLAY", "TopicPay", by_duration="2h").close()  # unsigned: a warning
    assert len(seen) == 1 and "has no sign" in seen[0]


def test_a_result_is_written_to_the_context_stdout():
    """``emit`` without a stream writes to the run's context's stdout: a caller that hands
    mqctl a stream gets the output there, and the process's stdout sees none of it."""
    import io

    from mqctl.context import use
    from mqctl.render import Result, Table, cols, emit

    buf = io.StringIO()
    result = Result([Table(cols("group", "lag"), [{"group": "G", "lag": 7}])])
    with use(Context(stdout=buf)):
        emit(result, "json")
    assert json.loads(buf.getvalue()) == {"table1": [{"group": "G", "lag": 7}]}


def test_what_all_lists_exists_and_importing_mqctl_is_light():
    for name in mqctl.api.__all__:
        assert getattr(mqctl.api, name) is not None
    for name in mqctl.__all__:
        assert getattr(mqctl, name) is not None
    assert mqctl.Cluster is mqctl.api.Cluster
    with pytest.raises(AttributeError):
        _ = mqctl.NoSuchThing  # type: ignore[attr-defined]


def test_one_place_builds_the_remoting_client():
    """Every connection goes through mqctl.api.connection.connect (the settings' TLS, ACL and
    timeouts in one place)."""
    found = []
    for path in sorted((ROOT / "mqctl").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("mqctl/remoting/") or rel == "mqctl/api/connection.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "RemotingClient(" in line:
                found.append(f"{rel}:{n}")
    assert found == []


def test_a_plan_made_to_be_read_cannot_be_applied(sim):
    from mqctl.errors import UsageError

    with mqctl.Cluster(sim.cluster.namesrv_addr) as c, \
            c.plan_reset("GID_REPLAY", "TopicPay", to_earliest=True) as plan:
        assert plan.plan.queues and not plan.planned.execute
        with pytest.raises(UsageError, match="made to be read"):
            plan.apply()
