"""A group with no readable queue: its lag and every total over its queues are unknown in
every view, never 0 (``diagnose``, ``group progress``, ``groups``, ``topic consumers``,
``snapshot``).

The real group is NC_NEVER (../shared/samples/real/<v>/never-committed/): created with
``updateSubGroup`` and never consumed. Asked without a topic, its broker answers
``{"consumeTps":0.0,"offsetTable":{}}`` (208_getConsumeStats_NC_NEVER_no_topic), it has no
``%RETRY%NC_NEVER`` route (mqadmin consumerProgress -g NC_NEVER fails with "No topic route
info in name server for the topic: %RETRY%NC_NEVER") and no member (203 ... not online). The
simulated cluster reproduces it with a group that has a subscription group and nothing else.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest
from conftest import sim_cli
from corpus_views import VERSIONS, CorpusAdmin, body, sent_at
from sim_fixtures import running_sim

from mqctl.diagnose import diagnose
from mqctl.diagnose.rows import diagnose_result
from mqctl.diagnose.types import Reading
from mqctl.render import emit
from mqctl.snapshot import Snapshot, group_status, rows_of, snapshot_result
from mqctl.timeparse import set_clock
from mqctl.views.members import GroupMembers
from mqctl.views.progress import known_total
from mqctl.views.progress_capture import capture_progress
from mqctl.views.progress_rows import progress_result

NC = "never-committed/208_getConsumeStats_NC_NEVER_no_topic.broker-a.json"


def text_of(result: Any) -> str:
    out = io.StringIO()
    emit(result, "plain", out)
    return out.getvalue()


def json_of(result: Any) -> Any:
    out = io.StringIO()
    emit(result, "json", out)
    return json.loads(out.getvalue())


def test_a_sum_of_nothing_is_unknown():
    assert known_total([]) is None
    assert known_total([3, None]) is None
    assert known_total([0, 0]) == 0 and known_total(iter([2, 5])) == 7


@pytest.fixture
def nc_never(request):
    """NC_NEVER's progress read from what its brokers answered, at the time they answered.
    An offline group is asked on every broker of the cluster; its answer without a topic was
    recorded on broker-a, and stands in for broker-b's (a broker that holds no offset of a
    group answers the same empty table: tests/views/test_views_real_corpus.py)."""
    version = request.param
    set_clock(lambda: sent_at(version, NC))
    try:
        empty = body(version, NC)
        admin = CorpusAdmin(version, no_topic={"broker-a": empty, "broker-b": empty},
                            no_retry_route=("NC_NEVER",))
        yield version, asyncio.run(capture_progress(admin, "NC_NEVER", running=False))
    finally:
        set_clock(None)


@pytest.mark.parametrize("nc_never", VERSIONS, indirect=True)
def test_real_never_consumed_group_progress_says_unknown(nc_never):
    _v, p = nc_never
    assert p.queues == [] and p.complete
    # the broker's consumeTps 0.0 is a sum over no topic: no rate of the group
    assert p.consume_tps is None
    doc = json_of(progress_result(p))
    assert doc["total"]["lag"] is None and doc["total"]["queues"] == 0
    assert doc["consume_tps"] is None
    # no %RETRY%NC_NEVER topic: nothing waits for redelivery (0 is known there)
    assert doc["retry_total"]["backlog"] == 0
    text = text_of(progress_result(p))
    assert "lag unknown: no queue was read, pulled TPS unknown" in text
    assert "retry backlog 0: no %RETRY%NC_NEVER topic" in text
    assert "0 %RETRY% queue(s)" not in text


@pytest.mark.parametrize("nc_never", VERSIONS, indirect=True)
def test_real_never_consumed_group_diagnose_says_lag_unknown(nc_never):
    _v, p = nc_never
    members = GroupMembers("NC_NEVER", [], {"broker-a": []}, None, {}, {}, [])
    d = diagnose(Reading("NC_NEVER", p.capture_ts, members=members, progress=p))
    assert d.summary["lag"] is None and d.summary["lag_at_least"] is None
    assert d.summary["consume_tps_brokers"] is None and d.summary["retry_backlog"] == 0
    (off,) = [f for f in d.findings if f.code == "offline"]
    assert off.values["lag"] is None and off.severity == "warning"
    assert "lag unknown" in off.title
    assert any(e.text.startswith("lag unknown: no queue was read: no broker holds a committed "
                                 "offset") for e in off.evidence)
    text = text_of(diagnose_result(d))
    assert "lag 0" not in text and "0 queue(s)" not in text
    assert "offline; lag unknown" in text


@pytest.mark.parametrize("nc_never", VERSIONS, indirect=True)
def test_real_never_consumed_group_snapshot_says_no_queue(nc_never):
    _v, p = nc_never
    rows = rows_of(p, capture_ts=p.capture_ts, cluster="DefaultCluster", namesrv="ns")
    assert rows == []
    snap = Snapshot(p.capture_ts, "ns", "DefaultCluster", ["NC_NEVER"], rows)
    assert group_status("NC_NEVER", 0, snap, [])["status"] == "no queue"
    text = text_of(snapshot_result(snap, None, [], [], None))
    assert "0 of 1 group(s) captured" in text
    assert "1 with no queue (NC_NEVER: no queue was read, its lag is unknown" in text


GN_SCENARIO = {
    "name": "never-consumed", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
    "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "1h"}],
    # GN: a subscription group on every broker and nothing else (updateSubGroup, never
    # consumed); G1 consumes T, so the cluster is not empty
    "groups": [{"name": "GN"}, {"name": "G1", "topics": ["T"],
                                "consumers": [{"id": "10.0.0.1@1"}]}]}


@pytest.fixture(scope="module")
def gn_sim():
    with running_sim(GN_SCENARIO) as s:
        s.advance(30)
        yield s


cli = sim_cli


def test_never_consumed_group_is_unknown_in_every_view(gn_sim, tmp_path):
    g = {x["group"]: x for x in json.loads(cli(gn_sim, "groups", "-o", "json").stdout)[
        "groups"]}["GN"]
    assert g["state"] == "EMPTY" and g["lag"] is None and g["consume_tps"] is None
    assert g["retry_lag"] == 0  # the sim creates no %RETRY%GN either: nothing waits

    p = cli(gn_sim, "group", "progress", "GN")
    assert p.exit_code == 0
    assert "group GN: lag unknown: no queue was read, pulled TPS unknown" in p.stdout

    r = cli(gn_sim, "diagnose", "GN", "-o", "json")
    d = json.loads(r.stdout)
    assert d["summary"]["lag"] is None
    off = next(f for f in d["findings"] if f["code"] == "offline")
    assert "lag 0" not in json.dumps(off) and "0 queue(s)" not in json.dumps(off)
    plain = cli(gn_sim, "diagnose", "GN").stdout
    assert "lag unknown: no queue was read" in plain and "lag 0" not in plain

    s = cli(gn_sim, "snapshot", "--all-groups", "--out", str(tmp_path), "-o", "json")
    st = {x["group"]: x["status"] for x in json.loads(s.stdout)["groups"]}
    assert st == {"G1": "ok", "GN": "no queue"}


def test_diagnose_lag_of_the_queues_read_is_not_the_groups_lag():
    """broker-b did not answer its offsets: the sum over broker-a's queues is a lower bound,
    named as such (as `groups` shows `>=N`), never the group's lag."""
    from mqctl.models import MessageQueue
    from mqctl.views.progress import GroupProgress, QueueProgress

    qs = [QueueProgress(MessageQueue("T", "broker-a", q), 100, 60, None, 1) for q in range(2)]
    p = GroupProgress("G", 1_000, "c", qs, None, [], not_included=["broker-b"])
    members = GroupMembers("G", [], {"broker-a": [], "broker-b": []}, None, {}, {}, [])
    d = diagnose(Reading("G", 1_000, members=members, progress=p))
    assert d.summary["lag"] is None and d.summary["lag_at_least"] == 80
    (off,) = [f for f in d.findings if f.code == "offline"]
    assert any("lag 80 message(s) on 2 queue(s) read (not included: broker-b)" in e.text
               for e in off.evidence)
    assert "lag unknown (at least 80 on the brokers read)" in text_of(diagnose_result(d))
