"""The exporter's rounds without a cluster: snapshot rows in, Prometheus text out. The queue
windows (bounded, statuses over rounds), unknown where a broker or a group did not answer,
the rollups as the lag report's, the text with each family once."""

from __future__ import annotations

import re

from mqctl.exporter import Exporter, ExporterOptions
from mqctl.exporter.window import QueueWindows, RoundRead
from mqctl.lagmetrics import BROKER_METRICS, GROUP_METRICS, TOPIC_METRICS

S = 1000


def row(group, topic, broker, qid, c, b, *, online=True, delay_ms=None, owner="c1"):
    return {"cluster": "C", "group": group, "topic": topic, "broker": broker, "queue_id": qid,
            "consumer_offset": c, "broker_offset": b,
            "lag": None if b is None or c is None else max(b - c, 0),
            "committed": c is not None, "delay_ms": delay_ms, "online": online,
            "members": ["c1"], "owner": owner, "owner_unknown": False,
            "consume_type": "CONSUME_PASSIVELY", "message_model": "CLUSTERING"}


def sample_values(text: str, name: str) -> dict[str, str]:
    """``labels -> value`` of the samples of ``name``."""
    out = {}
    for line in text.splitlines():
        m = re.match(rf"^{name}(\{{[^}}]*\}})? (\S+)$", line)
        if m:
            out[m.group(1) or ""] = m.group(2)
    return out


def feed(ex: Exporter, reads: list[RoundRead]) -> str:
    for rd in reads:
        ex.take(rd, [], 1, 0.0)
    text = ex.metrics()
    assert text is not None
    return text


def test_a_stalled_queue_reads_stall_once_the_window_has_two_rounds():
    ex = Exporter(ExporterOptions(window=3, allowed_lag_seconds=0))
    reads = [RoundRead(i * 60 * S, [row("G", "T", "a", 0, 10, 15 + i),
                                    row("G", "T", "a", 1, 10 * i, 10 * i)])
             for i in range(3)]
    text = feed(ex, reads[:1])
    assert sample_values(text, "mqctl_group_status")['{cluster="C",group="G",status="OK"}'] == "1"
    text = feed(ex, reads[1:])
    status = sample_values(text, "mqctl_group_status")
    assert status['{cluster="C",group="G",status="STALL"}'] == "1"
    assert status['{cluster="C",group="G",status="OK"}'] == "0"
    # 1 of 2 queues STALL; the window full on both queues
    assert sample_values(text, "mqctl_group_status_queues") == {'{cluster="C",group="G"}': "1"}
    assert sample_values(text, "mqctl_group_window_complete_ratio")[
        '{cluster="C",group="G"}'] == "1"
    lag = sample_values(text, "mqctl_consumer_lag_messages")
    assert lag == {'{cluster="C",group="G",topic="T",broker="a"}': "7"}
    rate = sample_values(text, "mqctl_consumer_consume_messages_per_second")
    assert float(rate['{cluster="C",group="G",topic="T",broker="a"}']) == 10 / 60


def test_a_broker_that_did_not_answer_is_unknown_never_its_last_value():
    ex = Exporter(ExporterOptions(window=3))
    both = [row("G", "T", "a", 0, 10, 20), row("G", "T", "b", 0, 10, 30)]
    feed(ex, [RoundRead(0, both)])
    text = feed(ex, [RoundRead(60 * S, [row("G", "T", "a", 0, 20, 25)],
                               broker_failures={"G": frozenset({"b"})})])
    lag = sample_values(text, "mqctl_consumer_lag_messages")
    assert lag == {'{cluster="C",group="G",topic="T",broker="a"}': "5",
                   '{cluster="C",group="G",topic="T",broker="b"}': "NaN"}
    # a part is no whole: the group's and the topic's totals are unknown
    assert sample_values(text, "mqctl_group_lag_messages") == {'{cluster="C",group="G"}': "NaN"}
    assert sample_values(text, "mqctl_consumer_status_severity") == {
        '{cluster="C",group="G",topic="T"}': "NaN"}
    # the broker back: known again, its window kept
    text = feed(ex, [RoundRead(120 * S, [row("G", "T", "a", 0, 30, 30),
                                         row("G", "T", "b", 0, 20, 30)])])
    assert sample_values(text, "mqctl_group_lag_messages") == {'{cluster="C",group="G"}': "10"}
    assert ex.windows.queues[("G", "T", "b", 0)].samples[0].capture_ts == 0


def test_a_group_not_read_keeps_its_series_as_unknown_and_a_gone_queue_is_forgotten():
    ex = Exporter(ExporterOptions(window=3))
    feed(ex, [RoundRead(0, [row("G", "T", "a", 0, 10, 20), row("H", "T", "a", 0, 1, 2),
                            row("H", "U", "a", 0, 1, 2)])])
    # G not read at all; H answered without its topic U (its subscription dropped)
    text = feed(ex, [RoundRead(60 * S, [row("H", "T", "a", 0, 2, 2)],
                               group_errors=frozenset({"G"}))])
    assert sample_values(text, "mqctl_group_lag_messages") == {
        '{cluster="C",group="G"}': "NaN", '{cluster="C",group="H"}': "0"}
    status = sample_values(text, "mqctl_group_status")
    assert status['{cluster="C",group="G",status="UNKNOWN"}'] == "1"
    assert ("H", "U", "a", 0) not in ex.windows.queues
    assert ("G", "T", "a", 0) in ex.windows.queues


def test_memory_is_bounded_by_queues_times_window():
    w = QueueWindows(window=4)
    for i in range(50):
        w.update(RoundRead(i * 60 * S, [row("G", "T", "a", q, 10 * i, 10 * i + q)
                                        for q in range(8)]))
    assert len(w) == 8
    assert w.samples_held() == 8 * (4 + 4)


def test_every_family_once_with_help_and_type_before_its_samples():
    ex = Exporter(ExporterOptions(window=2))
    text = feed(ex, [RoundRead(i * 60 * S, [row("G", "T", "a", 0, i, 5 + i),
                                            row("G", "%RETRY%G", "a", 0, 0, 3)])
                     for i in range(2)])
    names = [ln.split()[2] for ln in text.splitlines() if ln.startswith("# TYPE ")]
    assert len(names) == len(set(names))
    for name, *_ in [*BROKER_METRICS, *TOPIC_METRICS, *GROUP_METRICS]:
        assert name in names
    for line in text.splitlines():
        if line and not line.startswith("#"):
            base = re.split(r"[{ ]", line, maxsplit=1)[0]
            assert base in names, line
    assert sample_values(text, "mqctl_group_retry_lag_messages") == {
        '{cluster="C",group="G"}': "3"}
    assert sample_values(text, "mqctl_exporter_rounds_total") == {"": "2"}
    assert sample_values(text, "mqctl_exporter_round_errors_total") == {"": "0"}
    assert "# TYPE mqctl_exporter_round_errors_total counter" in text


def test_before_the_first_round_there_is_nothing_to_serve():
    assert Exporter(ExporterOptions()).metrics() is None


def test_a_failed_round_counts_and_marks_every_known_series_unknown():
    ex = Exporter(ExporterOptions(window=2))
    feed(ex, [RoundRead(0, [row("G", "T", "a", 0, 10, 20)])])
    ex.fail_round("round: cannot connect to the name server", 0.0)
    text = ex.metrics()
    assert text is not None
    assert sample_values(text, "mqctl_group_lag_messages") == {'{cluster="C",group="G"}': "NaN"}
    assert sample_values(text, "mqctl_exporter_round_errors_total") == {"": "1"}
    # the last round that read everything is still the first one
    assert sample_values(text, "mqctl_lag_report_last_success_timestamp_seconds") == {"": "0"}
