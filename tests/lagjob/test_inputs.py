"""Input specs, kind detection (name and content) and path metadata: pure Python, no Spark."""

from __future__ import annotations

from datetime import UTC, timedelta, timezone
from pathlib import Path

import pytest

from mqctl.errors import UsageError
from mqctl.lagjob.inputs import (
    Kind,
    ignored_reason,
    is_hidden,
    kind_from_content,
    kind_from_name,
    parse_input_spec,
    parse_tz,
    path_meta,
    timestamp_in,
)
from mqctl.lagjob.readers import list_local

from .builders import (
    SAMPLES,
    T0,
    broker_consume_stats,
    consumer_progress_51,
    consumer_progress_groups,
    result_line5,
    topic_status,
)


def test_spec_kind_prefix_and_plain_paths():
    s = parse_input_spec("topic-status=/x/ts.txt")
    assert (s.kind, s.path) == (Kind.TOPIC_STATUS, "/x/ts.txt")
    assert parse_input_spec("topicStatus=/x/ts.txt").kind == Kind.TOPIC_STATUS  # mqadmin alias
    # Hive-style directories are paths, not kind prefixes
    assert parse_input_spec("broker=broker-a/2024/consumerOffset.json").kind is None
    assert parse_input_spec("/data/date=2024-06-01/x.jsonl").kind is None
    assert parse_input_spec("hdfs://nn:8020/snap").path == "hdfs://nn:8020/snap"


@pytest.mark.parametrize("text", ["nosuchkind=/x", "snapshot=", ""])
def test_spec_errors_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_input_spec(text)


@pytest.mark.parametrize("name,kind", [
    ("mqctl-snapshot-c1-20240601T100000.000Z.jsonl", Kind.SNAPSHOT),
    ("x.jsonl.gz", Kind.SNAPSHOT),
    ("consumerOffset.json", Kind.CONSUMER_OFFSET),
    ("consumerOffset.json.5x.blog-sample", Kind.CONSUMER_OFFSET),
    ("lmqConsumerOffset.json", Kind.CONSUMER_OFFSET),
    ("topics.json", Kind.TOPICS),
    ("subscriptionGroup.json", Kind.SUBSCRIPTION_GROUP),
    ("consumerProgress.4.8.blog-capture.txt", Kind.CONSUMER_PROGRESS),
    ("brokerConsumeStats.broker-a.txt", Kind.BROKER_CONSUME_STATS),
    ("topicStatus.4.8.blog-capture.txt", Kind.TOPIC_STATUS),
    ("rocketmq_client.log", Kind.CLIENT_LOG),
    ("rocketmq_client-3.log.gz", Kind.CLIENT_LOG),
    ("lock.log", Kind.LOCK_LOG),
    ("lock.2024-06-01.0.log", Kind.LOCK_LOG),
    ("notes.txt", None),
])
def test_kind_from_name(name, kind):
    assert kind_from_name(name) == kind


def test_ignored_and_hidden_files():
    assert ignored_reason("consumerOffset.json.bak") is not None
    assert ignored_reason("delayOffset.json") is not None
    assert ignored_reason("consumerOffset.json") is None
    assert is_hidden(".mqctl-snapshot-x.jsonl.tmp") and is_hidden("_SUCCESS")
    assert not is_hidden("consumerOffset.json")


def test_kind_from_content_of_every_sample_and_layout():
    cp = (SAMPLES / "mqadmin/consumerProgress.4.8.blog-capture.txt").read_text()
    ts = (SAMPLES / "mqadmin/topicStatus.4.8.blog-capture.txt").read_text()
    assert kind_from_content(cp) == Kind.CONSUMER_PROGRESS
    assert kind_from_content(ts) == Kind.TOPIC_STATUS
    for name, kind in (("consumerOffset.json", Kind.CONSUMER_OFFSET), ("topics.json", Kind.TOPICS),
                       ("subscriptionGroup.json", Kind.SUBSCRIPTION_GROUP)):
        assert kind_from_content((SAMPLES / "synthetic/store" / name).read_text()) == kind
    blog = (SAMPLES / "store/consumerOffset.json.5x.blog-sample").read_text()
    assert kind_from_content(blog) == Kind.CONSUMER_OFFSET
    # delayOffset.json has an offsetTable too, but with int keys: not consumer offsets
    assert kind_from_content((SAMPLES / "synthetic/store/delayOffset.json").read_text()) is None
    assert kind_from_content(consumer_progress_51([("T", "b", 0, 5, 3, 1, "N/A")])) == \
        Kind.CONSUMER_PROGRESS
    assert kind_from_content(consumer_progress_groups([("G", 1, "V5_3_2", "PUSH", "CLUSTERING",
                                                        0, 5)])) == Kind.CONSUMER_PROGRESS
    assert kind_from_content(broker_consume_stats([("T", "G", "b", 0, 5, 3, "N/A")])) == \
        Kind.BROKER_CONSUME_STATS
    assert kind_from_content(topic_status([("b", 0, 0, 5, "")])) == Kind.TOPIC_STATUS
    line = result_line5("2024-06-01 18:00:00.000", "G", "T", "c@1", [("T", "b", 0)])
    assert kind_from_content(line) == Kind.CLIENT_LOG
    assert kind_from_content("2024-06-01 18:00:00 INFO t - RebalanceLockManager#tryLockBatch: x"
                             ) == Kind.LOCK_LOG
    assert kind_from_content('{"schema":"mqctl.snapshot/1","capture_ts":1}') == Kind.SNAPSHOT
    assert kind_from_content("hello\nworld\n") is None


def test_timestamps_in_path_segments():
    assert timestamp_in("2024-06-01T10-00-00", UTC) == T0
    assert timestamp_in("2024-06-01T10:00:00.250Z", None) == T0 + 250
    assert timestamp_in("2024-06-01_10-00-00", UTC) == T0
    assert timestamp_in("mqctl-snapshot-c1-20240601T100000.000Z.jsonl", None) == T0
    assert timestamp_in("20240601-100000", UTC) == T0
    assert timestamp_in("consumerOffset.json.1717236000000", None) == T0
    # a zone in the text wins over the default; a naive time takes the given zone
    assert timestamp_in("2024-06-01T18:00:00+08:00", UTC) == T0
    assert timestamp_in("2024-06-01T18-00-00", timezone(timedelta(hours=8))) == T0
    assert timestamp_in("2024-06-01", UTC) is None  # a date directory is not a capture time
    assert timestamp_in("2024-13-01T10-00-00", UTC) is None


def test_path_meta_patterns():
    m = path_meta("/e/broker-a/2024-06-01T10-00-00/consumerOffset.json", UTC,
                  Kind.CONSUMER_OFFSET)
    assert (m.broker, m.capture_ts) == ("broker-a", T0)
    m = path_meta("/e/2024-06-01T10-00-00/broker-b/store/config/consumerOffset.json", UTC,
                  Kind.CONSUMER_OFFSET)
    assert (m.broker, m.capture_ts) == ("broker-b", T0)
    m = path_meta("file:/e/cluster=prod/broker=broker-c/ts=2024-06-01T10-00-00/x/topics.json",
                  UTC, Kind.TOPICS)
    assert (m.broker, m.cluster, m.capture_ts) == ("broker-c", "prod", T0)
    m = path_meta("/e/topicStatus.TopicOrder.2024-06-01T10-00-00.txt", UTC, Kind.TOPIC_STATUS)
    assert (m.topic, m.capture_ts) == ("TopicOrder", T0)
    m = path_meta("/e/group=GID_A/consumerProgress.txt", UTC, Kind.CONSUMER_PROGRESS)
    assert m.group == "GID_A" and m.capture_ts is None
    m = path_meta("/e/consumerProgress.%RETRY%x_y-z.20240601T100000.txt", UTC)
    assert m.group == "%RETRY%x_y-z"
    assert path_meta("/logs/10.0.0.5/rocketmq_client.log", UTC, Kind.CLIENT_LOG).client == \
        "10.0.0.5"
    # without a kind that needs one, no broker is guessed
    assert path_meta("/e/broker-a/x.jsonl", UTC, Kind.SNAPSHOT).broker is None


def test_parse_tz():
    assert parse_tz(None) is None and parse_tz("local") is None
    assert parse_tz("UTC") == UTC
    assert parse_tz("+08:00").utcoffset(None) == timedelta(hours=8)
    assert parse_tz("GMT+8").utcoffset(None) == timedelta(hours=8)
    assert parse_tz("Asia/Shanghai") is not None
    with pytest.raises(UsageError):
        parse_tz("Mars/Olympus")


def test_list_local_walks_dirs_skips_hidden_and_reports_unmatched(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.jsonl").write_text("{}\n")
    (tmp_path / "a" / ".tmp.jsonl").write_text("{}\n")
    (tmp_path / "a" / "_SUCCESS").write_text("")
    (tmp_path / "a" / "consumerOffset.json.bak").write_text("{}")
    (tmp_path / "a" / "mystery.txt").write_text("hello")
    (tmp_path / "a" / "content-only.txt").write_text(topic_status([("b", 0, 0, 5, "")]))
    listing = list_local([parse_input_spec(str(tmp_path / "a")),
                          parse_input_spec(str(tmp_path / "nothing-*.txt")),
                          parse_input_spec("snapshot=" + str(tmp_path / "a" / "mystery.txt"))])
    names = {Path(f.path).name: f for f in listing.files}
    assert ".tmp.jsonl" not in names and "_SUCCESS" not in names
    assert names["x.jsonl"].kind == Kind.SNAPSHOT
    assert names["content-only.txt"].kind == Kind.TOPIC_STATUS  # sniffed
    assert names["consumerOffset.json.bak"].ignored
    # the same file listed twice keeps its first classification (unknown by content)
    assert names["mystery.txt"].kind is None
    assert listing.unmatched == [str(tmp_path / "nothing-*.txt")]
    assert [Path(f.path).name for f in listing.unknown()] == ["mystery.txt"]


def test_other_logs_beside_a_client_log_are_ignored_files(tmp_path):
    """``slf4j.log`` beside ``rocketmq_client.log`` is not a client log: an
    ignored file (counted as one file), not unrecognised input (a quarantined record), and not
    read line by line even when it holds rebalance words (the client's own log has them)."""
    d = tmp_path / "logs" / "10.0.0.5"
    d.mkdir(parents=True)
    (d / "rocketmq_client.log").write_text(result_line5("2024-06-01 18:00:00.123", "G", "T",
                                                        "10.0.0.5@1", [("T", "broker-a", 0)])
                                           + "\n")
    (d / "slf4j.log").write_text("SLF4J: Failed to load class "
                                 '"org.slf4j.impl.StaticLoggerBinder".\n')
    (d / "app.log").write_text("12:00:00 RebalanceService started\n")  # a client-log word
    (d / "notes.txt").write_text("hello\n")  # not a log: still unrecognised
    elsewhere = tmp_path / "other" / "slf4j.log"  # no client log beside it
    elsewhere.parent.mkdir()
    elsewhere.write_text("SLF4J: hello\n")
    listing = list_local([parse_input_spec(str(tmp_path))])
    by_name = {Path(f.path).name + ("@other" if Path(f.path).parent.name == "other" else ""): f
               for f in listing.files}
    assert by_name["rocketmq_client.log"].kind == Kind.CLIENT_LOG
    for n in ("slf4j.log", "app.log"):
        assert by_name[n].kind is None and by_name[n].ignored is not None
        assert "not a client log" in by_name[n].ignored
    assert by_name["notes.txt"].ignored is None and by_name["notes.txt"].kind is None
    assert by_name["slf4j.log@other"].ignored is None
    assert len(listing.ignored()) == 2 and len(listing.unknown()) == 2
    # given with its kind, it is read
    explicit = list_local([parse_input_spec(f"client-log={d / 'app.log'}"),
                           parse_input_spec(str(d / "rocketmq_client.log"))])
    assert [f.kind for f in explicit.files] == [Kind.CLIENT_LOG, Kind.CLIENT_LOG]
