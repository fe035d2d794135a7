"""The lock view through the one renderer, in every format; the optional --watch value."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from locks.helpers import NOW, capture, mq, pq, queues, running
from mqctl.cli.common import watch_default as _watch_default
from mqctl.locks import Claim, StoredClient, build_view
from mqctl.locks.rows import view_result
from mqctl.render import emit


def sample_view():
    qs = queues(2)
    gone = StoredClient("dead@7", NOW - 5000,
                        (Claim("dead@7", mq("broker-b:1"), True, NOW - 6000, live=False,
                               observed_ts=NOW - 5000),))
    clients = {"a@1": running({mq("broker-a:0"): pq(True, 2000),
                               mq("broker-a:1"): pq(True, 27_000),
                               mq("broker-b:0"): pq(False, 40_000)}),
               "b@2": running({mq("broker-a:0"): pq(False, 1000)})}
    return build_view(capture(clients), now=NOW, queues_by_topic={"T": qs},
                      previous={"dead@7": gone})[0]


def render(fmt: str, table: str | None = None) -> str:
    buf = io.StringIO()
    emit(view_result(sample_view()), fmt, buf, table=table)
    return buf.getvalue()


def test_states_of_the_sample():
    v = sample_view()
    states = {q.mq.short: q.state.value for q in v.queues}
    assert states == {"broker-a:0": "contested", "broker-a:1": "expiring",
                      "broker-b:0": "lock-failed", "broker-b:1": "stale"}


def test_json_has_every_field():
    d = json.loads(render("json"))
    assert d["group"] == "G" and d["capture_ts"] == NOW
    assert d["capture_time"].endswith("Z")
    assert d["summary"] == {"contested": 1, "hung": 0, "stale": 1, "lock-failed": 1,
                            "expiring": 1, "held": 0, "unknown": 0, "unowned": 0}
    stale = next(q for q in d["queues"] if q["state"] == "stale")
    assert stale["owner"] == "dead@7" and stale["source"] == "unknown"
    assert stale["frees_at_ts"] == NOW - 6000 + 60_000
    assert stale["frees_at_time"].endswith("Z")
    assert stale["lease_left_ms"] == 54_000 and stale["lock_age_ms"] == 6000
    exp = next(q for q in d["queues"] if q["state"] == "expiring")
    for key in ("queue", "topic", "broker", "queue_id", "locked", "last_lock_ts",
                "last_lock_time", "trusted", "lease_end_ts", "try_unlock_times", "dropped",
                "predicted", "claims", "reason", "hint"):
        assert key in exp
    assert exp["trusted"] is True and exp["lock_age_ms"] == 27_000
    assert [c["client_id"] for c in d["unanswered"]] == ["dead@7"]
    assert {c["client_id"] for c in d["clients"]} == {"a@1", "b@2", "dead@7"}
    assert len(d["hints"]) == 4
    assert d["hints"][0].startswith("broker-a:0 is claimed by 2 clients")
    assert "blocked until" in d["hints"][1]


def test_yaml_equals_json():
    assert yaml.safe_load(render("yaml")) == json.loads(render("json"))


def test_csv_has_queue_summary_and_client_tables():
    # one table per CSV: the queues by default, the others with --table
    blocks = [render("csv"), render("csv", "summary"), render("csv", "clients")]
    assert all("\n\n" not in b for b in blocks)
    assert render("csv", "queues") == blocks[0]
    rows = list(csv.DictReader(io.StringIO(blocks[0])))
    assert [r["state"] for r in rows] == ["contested", "expiring", "lock-failed", "stale"]
    stale = rows[3]
    assert stale["owner"] == "dead@7" and stale["lease_left_s"] == "54"
    # CSV is for machines: the FREES AT column is the ISO UTC time, not the local clock text
    assert "frees_at" not in rows[0] and stale["frees_at_time"].endswith("Z")
    assert "T" in stale["frees_at_time"]
    clients = list(csv.DictReader(io.StringIO(blocks[2])))
    assert "last_seen" not in clients[0] and "last_seen_time" in clients[0]
    summary = list(csv.DictReader(io.StringIO(blocks[1])))
    assert {r["state"]: r["queues"] for r in summary}["stale"] == "1"


@pytest.mark.parametrize("fmt", ["plain", "table"])
def test_human_formats_show_rows_summary_and_hints(fmt):
    text = render(fmt)
    for word in ("broker-b:1", "stale", "dead@7", "contested", "lock-failed", "expiring",
                 "blocked until", "stale: 1 queue(s)"):
        assert word in text, word
    # the footer repeats only the states that occur (the summary table has them all)
    assert "held: 0 queue(s)" not in text and "held" in text.split("# clients")[0]


def test_watch_optional_value():
    assert _watch_default(["--watch"]) == ["--watch", "2.0"]
    assert _watch_default(["--watch", "--group", "G"]) == ["--watch", "2.0", "--group", "G"]
    assert _watch_default(["-w", "5"]) == ["-w", "5"]
    assert _watch_default(["--watch=3", "-g", "G"]) == ["--watch=3", "-g", "G"]
    assert _watch_default(["--", "--watch"]) == ["--", "--watch"]


def test_unknowns_show_as_a_dash_in_the_table_and_empty_in_csv():
    """docs/output.md: what mqctl cannot know is `-` in a table, not a blank cell. A member
    that does not answer: TRUSTED of its remembered claim, and every lock column of a queue
    assigned to it that it never claimed, show `-`; FREES AT stays empty but for stale and
    hung queues; CSV leaves unknowns empty. hung@3 answered before and is the predicted owner
    of both queues: both are hung (nobody else asks for them)."""
    qs = queues(1)
    hung = StoredClient("hung@3", NOW - 25_000,
                        (Claim("hung@3", mq("broker-a:0"), True, NOW - 30_000, live=False,
                               observed_ts=NOW - 25_000),))
    v = build_view(capture({"hung@3": "timeout"}), now=NOW, queues_by_topic={"T": qs},
                   previous={"hung@3": hung})[0]
    by_state = {q.mq.short: q.state.value for q in v.queues}
    buf = io.StringIO()
    emit(view_result(v), "plain", buf, table="queues")
    lines = buf.getvalue().splitlines()
    head = lines[1]
    cols = ["TOPIC", "QUEUE", "STATE", "OWNER", "LOCKED", "LOCK AGE", "TRUSTED", "LEASE LEFT",
            "FREES AT", "UNLOCK TRIES", "DROPPED", "PREDICTED"]
    starts = [head.index(c) for c in cols]
    rows = {}
    for ln in lines[2:]:
        if not ln.startswith("T "):
            continue
        cells = [ln[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows[cells[1]] = dict(zip(cols, cells, strict=True))
    held = rows["broker-a:0"]
    assert by_state["broker-a:0"] == "hung" and held["OWNER"] == "hung@3"
    assert held["TRUSTED"] == "-"  # a member that does not answer: unknown
    assert held["FREES AT"] not in ("", "-")
    # assigned to the hung member, never claimed in what it last answered: its lock is unknown
    never = rows["broker-b:0"]
    assert (by_state["broker-b:0"], never["OWNER"]) == ("hung", "hung@3")
    for col in ("LOCKED", "LOCK AGE", "TRUSTED", "LEASE LEFT", "UNLOCK TRIES", "DROPPED"):
        assert never[col] == "-", (col, never)
    assert never["FREES AT"] not in ("", "-")
    out = io.StringIO()
    emit(view_result(v), "csv", out, table="queues")
    csv_rows = {r["queue"]: r for r in csv.DictReader(io.StringIO(out.getvalue()))}
    assert csv_rows["broker-a:0"]["trusted"] == ""
    assert "-" not in {v for r in csv_rows.values() for v in r.values()}
