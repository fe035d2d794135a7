"""The group both ways on every command that takes one, topics
(case-insensitive --match, queue counts, 5.x message type), the broadcasting note once."""

from __future__ import annotations

import json

import pytest
from conftest import REAL_CORPUS

from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode
from mqctl.views.topics import topic_queue_info, topic_rows


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def store_table(version: str, broker: str) -> dict:
    path = REAL_CORPUS / version / "store-files" / f"{broker}_topics.json"
    return json.loads(path.read_text())["topicConfigTable"]


def test_topic_queue_info_from_the_real_store_files():
    # 4.9.3: TopicConfig has no attributes, so no message type; 5.3.3: attributes {} = NORMAL
    for version, expected in (("4.9.3", None), ("5.3.3", "NORMAL")):
        tables = {b: store_table(version, b) for b in ("broker-a", "broker-b")}
        info = topic_queue_info(tables)
        both = [t for t in info if t in tables["broker-a"] and t in tables["broker-b"]]
        assert both, version
        t = both[0]
        assert info[t]["read_queues"] == (tables["broker-a"][t]["readQueueNums"]
                                          + tables["broker-b"][t]["readQueueNums"])
        assert info[t]["brokers"] == ["broker-a", "broker-b"]
        assert info[t]["message_type"] == expected, version


def test_message_type_attribute_and_disagreeing_brokers():
    fifo = {"readQueueNums": 4, "writeQueueNums": 4, "attributes": {"message.type": "FIFO"}}
    plain = {"readQueueNums": 2, "writeQueueNums": 2, "attributes": {}}
    info = topic_queue_info({"a": {"T": fifo, "U": fifo}, "b": {"T": plain}})
    assert info["T"]["message_type"] == "FIFO/NORMAL" and info["T"]["read_queues"] == 6
    assert info["U"] == {"read_queues": 4, "write_queues": 4, "brokers": ["a"],
                         "message_type": "FIFO"}
    rows = topic_rows(["T", "U", "Gone"], set(), set(), "all", "t", info=info)
    assert [r["topic"] for r in rows] == ["T"]  # case-insensitive: 't' finds 'T'
    rows = topic_rows(["T", "Gone"], set(), set(), "all", None, info=info)
    assert rows[1]["read_queues"] is None and rows[1]["message_type"] is None  # unknown, not 0


def test_topics_match_is_case_insensitive_with_queues_and_type(cli, sim):
    sim.clear_request_log()
    r = run(cli, sim, "topics", "--match", "pay", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [x["topic"] for x in r.json["topics"]] == ["TopicPay"]
    row = r.json["topics"][0]
    assert row["read_queues"] == 8 and row["brokers"] == ["broker-a", "broker-b"]
    assert row["message_type"] == "NORMAL"  # the demo's brokers are 5.x
    codes = {x.code for x in sim.request_log}
    assert RequestCode.GET_ALL_TOPIC_CONFIG in codes and not codes & set(MUTATING_REQUESTS)
    r = run(cli, sim, "topics", "--match", "TOPICPAY", "-o", "plain")
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["TOPIC", "KIND", "QUEUES", "TYPE"]
    assert lines[1].split() == ["TopicPay", "normal", "8", "NORMAL"]


def test_topics_on_4_9_3_has_no_message_type(cli, sim_factory):
    s = sim_factory({"name": "t493", "clock": {"mode": "manual"},
                     "brokers": [{"name": "broker-a", "version": "V4_9_3"}],
                     "topics": [{"name": "T1", "queues": 3}], "groups": []})
    r = run(cli, s, "topics", "--match", "t1", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json == {"topics": [{"topic": "T1", "kind": "normal", "read_queues": 3,
                                  "write_queues": 3, "brokers": ["broker-a"],
                                  "message_type": None}]}
    r = run(cli, s, "topics", "--match", "t1", "-o", "plain")
    assert r.stdout.splitlines()[1].split() == ["T1", "normal", "3", "-"]


@pytest.mark.parametrize("positional, option", [
    (["consumers", "GID_PAY"], ["consumers", "-g", "GID_PAY"]),
    (["group", "progress", "GID_PAY"], ["group", "progress", "--group", "GID_PAY"]),
    (["locks", "show", "GID_ORDER", "--no-state"], ["locks", "show", "-g", "GID_ORDER",
                                                     "--no-state"]),
    (["offsets", "show", "GID_PAY"], ["offsets", "show", "-g", "GID_PAY"]),
    (["allocate", "GID_PAY", "-t", "TopicPay"], ["allocate", "-g", "GID_PAY", "-t", "TopicPay"]),
], ids=lambda a: " ".join(a[:2]))
def test_the_group_is_accepted_both_ways(cli, sim, positional, option):
    sim.advance(5)
    a = run(cli, sim, *positional, "-o", "json")
    b = run(cli, sim, *option, "-o", "json")
    assert a.exit_code == b.exit_code == 0, (a.stderr, b.stderr)
    key = "group" if isinstance(a.json, dict) and "group" in a.json else None
    if key:
        assert a.json[key] == b.json[key]
    # the same answer both ways (the clock is manual: nothing moved in between)
    assert a.json == b.json
    # both forms, different groups: refused before anything is sent
    both = run(cli, sim, *positional, "-g", "GID_OTHER")
    assert both.exit_code == 2
    assert "two groups given" in both.stderr and "Traceback" not in both.stderr


@pytest.mark.parametrize("cmd", [["consumers"], ["group", "progress"], ["locks", "show"],
                                 ["offsets", "show"]])
def test_a_missing_group_is_a_usage_error_naming_both_forms(cli, cmd):
    r = cli(["-n", "127.0.0.1:1", *cmd])
    assert r.exit_code == 2
    assert "mqctl: error: missing the consumer group" in r.stderr
    assert "as the first argument or with -g/--group" in r.stderr


def test_allocate_broadcasting_note_once(cli, sim):
    for args in (["allocate", "-g", "GID_NEWS", "-t", "TopicNews"],
                 ["allocate", "GID_NEWS", "-t", "TopicNews", "-o", "json"]):
        r = run(cli, sim, *args)
        assert r.exit_code == 0, r.stderr
        assert r.stdout.count("BROADCASTING: every consumer consumes every queue") == 1, \
            r.stdout


def test_lag_report_summary_reads_as_the_glossary_says():
    from mqctl.cli.lag import _readable
    from mqctl.render import Column, Result, Table, render_csv, render_plain

    cols = [Column("group", "GROUP"), Column("lag_seconds", "LAG S", "right"),
            Column("lag_seconds_source", "LAG S SOURCE"),
            Column("consume_rate", "CONSUME/S", "right")]
    rows = [{"group": "G1", "lag_seconds": 10900.0, "lag_seconds_source": "exact",
             "consume_rate": 10900.0},
            {"group": "G2", "lag_seconds": None, "lag_seconds_source": None,
             "consume_rate": 6630.4}]
    view = _readable(Result([Table(cols, rows, name="summary")]))
    text = render_plain(view.tables, [])
    assert text.splitlines()[0].split() == ["GROUP", "TIME", "LAG", "TIME", "LAG", "SOURCE",
                                            "CONSUME/S"]
    assert text.splitlines()[1].split() == ["G1", "3h", "1m", "exact", "10900.00"]
    assert text.splitlines()[2].split() == ["G2", "-", "6630.40"]
    csv_text = render_csv(view.tables)
    assert csv_text.splitlines()[0] == "group,lag_seconds,lag_seconds_source,consume_rate"
    assert csv_text.splitlines()[1] == "G1,10900,exact,10900"


def test_lag_report_summary_shows_unknown_as_a_dash_and_csv_leaves_it_empty():
    """A BROADCASTING group's lag, time lag, status and health are unknown: `-` in the table
    (as on the HTML page and in `group progress`), never blank or 0; empty in CSV."""
    from mqctl.cli.lag import _readable
    from mqctl.lagjob.job import ReportResult, result_view
    from mqctl.render import render_csv, render_plain

    news = {"cluster": "C", "group": "GID_NEWS", "topic": "TopicNews", "total_lag": None,
            "lag_seconds": None, "group_status": None, "status_text": None, "health": None,
            "members": 2, "rebalances": 0, "message_model": "BROADCASTING",
            "health_reasons": ["broadcast: offsets are kept by the clients"]}
    pay = {**news, "group": "GID_PAY", "total_lag": 0, "lag_seconds": 0.0, "health": "OK",
           "group_status": "OK", "status_text": "OK", "members": None, "rebalances": 3,
           "message_model": "CLUSTERING", "health_reasons": []}
    res = ReportResult(summary=[news, pay], groups=[news, pay], paths={}, quarantine={},
                       quarantined=0, breaches=[], counts={}, inputs={}, dates=[])
    view = _readable(result_view(res))
    lines = render_plain(view.tables, []).splitlines()
    rows = {ln.split()[0]: ln.split() for ln in lines if ln.startswith("GID_")}
    assert rows["GID_NEWS"][:7] == ["GID_NEWS", "-", "-", "-", "-", "2", "0"]
    assert rows["GID_PAY"] == ["GID_PAY", "OK", "OK", "0", "0ms", "-", "3"]
    csv_rows = render_csv(view.tables).splitlines()
    head = csv_rows[0].split(",")
    news_csv = dict(zip(head, next(r for r in csv_rows if r.startswith("GID_NEWS")).split(","),
                        strict=False))
    assert (news_csv["health"], news_csv["total_lag"], news_csv["lag_seconds"]) == ("", "", "")


def test_progress_and_locks_tables_show_durations(cli, sim):
    sim.advance(150)  # demo09 crashed: lock ages, a stale queue
    r = run(cli, sim, "group", "progress", "GID_AUDIT", "-o", "plain")
    assert r.exit_code == 0, r.stderr
    assert "MAX TIME LAG" in r.stdout and "(S)" not in r.stdout
    j = run(cli, sim, "group", "progress", "GID_AUDIT", "-o", "json").json
    t = j["topics"][0]
    assert isinstance(t["max_time_lag_s"], float)
    r = run(cli, sim, "locks", "show", "GID_ORDER", "--no-state", "-o", "plain")
    header = r.stdout.splitlines()[1]
    assert "LOCK AGE" in header and "LEASE LEFT" in header and "(S)" not in header
    q = run(cli, sim, "locks", "show", "GID_ORDER", "--no-state", "-o", "json").json["queues"]
    held = [x for x in q if x["lock_age_ms"] is not None]
    assert held and all(x["lock_age_s"] == round(x["lock_age_ms"] / 1000, 1) for x in held)


@pytest.mark.parametrize("queue, fragment", [
    ("{topic: T, brokerName: [broker-a], queueId: 0}",
     'brokerName must be a non-empty string (got ["broker-a"])'),
    ('{topic: T, brokerName: broker-a, queueId: "1"}',
     'queueId must be a non-negative integer (got "1")'),
    ("{topic: T, brokerName: broker-a}", 'queue {"topic": "T", "brokerName": "broker-a"} '
                                         "lacks queueId"),
])
def test_input_errors_show_values_as_json_never_python_reprs(cli, tmp_path, queue, fragment):
    topo = tmp_path / "t.yaml"
    topo.write_text(f"group: G\nqueues:\n  - {queue}\nconsumers: [c1]\n")
    r = cli(["allocate", "--topology", str(topo)])
    assert r.exit_code == 2
    assert fragment in r.stderr, r.stderr
    assert "['" not in r.stderr and "{'" not in r.stderr and "None" not in r.stderr
