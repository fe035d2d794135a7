"""docs/exports.md's table of rocketmq-exporter's metrics names every one of them, and each
mqctl series it maps to is one the exporter serves."""

from __future__ import annotations

import re

from conftest import ROOT

from mqctl.lagmetrics import BROKER_METRICS, GROUP_METRICS, RUN_METRICS, TOPIC_METRICS

# every metric name apache/rocketmq-exporter's RMQMetricsCollector writes (commit e1ab2dd)
ROCKETMQ_EXPORTER = (
    "rocketmq_broker_commitlog_diff", "rocketmq_broker_qps", "rocketmq_broker_tps",
    "rocketmq_brokeruntime_commitlog_disk_ratio", "rocketmq_brokeruntime_commitlog_maxoffset",
    "rocketmq_brokeruntime_commitlog_minoffset",
    "rocketmq_brokeruntime_commitlogdir_capacity_free",
    "rocketmq_brokeruntime_commitlogdir_capacity_total",
    "rocketmq_brokeruntime_consumequeue_disk_ratio",
    "rocketmq_brokeruntime_dispatch_behind_bytes", "rocketmq_brokeruntime_dispatch_maxbuffer",
    "rocketmq_brokeruntime_earliest_message_timestamp", "rocketmq_brokeruntime_getfound_tps10",
    "rocketmq_brokeruntime_getfound_tps60", "rocketmq_brokeruntime_getfound_tps600",
    "rocketmq_brokeruntime_getmessage_entire_time_max", "rocketmq_brokeruntime_getmiss_tps10",
    "rocketmq_brokeruntime_getmiss_tps60", "rocketmq_brokeruntime_getmiss_tps600",
    "rocketmq_brokeruntime_gettotal_tps10", "rocketmq_brokeruntime_gettotal_tps60",
    "rocketmq_brokeruntime_gettotal_tps600", "rocketmq_brokeruntime_gettransfered_tps10",
    "rocketmq_brokeruntime_gettransfered_tps60", "rocketmq_brokeruntime_gettransfered_tps600",
    "rocketmq_brokeruntime_msg_gettotal_today_now",
    "rocketmq_brokeruntime_msg_gettotal_todaymorning",
    "rocketmq_brokeruntime_msg_gettotal_yesterdaymorning",
    "rocketmq_brokeruntime_msg_put_total_today_now",
    "rocketmq_brokeruntime_msg_puttotal_todaymorning",
    "rocketmq_brokeruntime_msg_puttotal_yesterdaymorning",
    "rocketmq_brokeruntime_pagecache_lock_time_mills", "rocketmq_brokeruntime_pmdt_0ms",
    "rocketmq_brokeruntime_pmdt_0to10ms", "rocketmq_brokeruntime_pmdt_100to200ms",
    "rocketmq_brokeruntime_pmdt_10stomore", "rocketmq_brokeruntime_pmdt_10to50ms",
    "rocketmq_brokeruntime_pmdt_1to2s", "rocketmq_brokeruntime_pmdt_200to500ms",
    "rocketmq_brokeruntime_pmdt_2to3s", "rocketmq_brokeruntime_pmdt_3to4s",
    "rocketmq_brokeruntime_pmdt_4to5s", "rocketmq_brokeruntime_pmdt_500to1s",
    "rocketmq_brokeruntime_pmdt_50to100ms", "rocketmq_brokeruntime_pmdt_5to10s",
    "rocketmq_brokeruntime_pull_threadpoolqueue_capacity",
    "rocketmq_brokeruntime_pull_threadpoolqueue_headwait_timemills",
    "rocketmq_brokeruntime_pull_threadpoolqueue_size", "rocketmq_brokeruntime_put_latency_99",
    "rocketmq_brokeruntime_put_latency_999", "rocketmq_brokeruntime_put_message_average_size",
    "rocketmq_brokeruntime_put_message_size_total", "rocketmq_brokeruntime_put_tps10",
    "rocketmq_brokeruntime_put_tps60", "rocketmq_brokeruntime_put_tps600",
    "rocketmq_brokeruntime_putmessage_entire_time_max",
    "rocketmq_brokeruntime_putmessage_times_total",
    "rocketmq_brokeruntime_query_threadpool_queue_capacity",
    "rocketmq_brokeruntime_query_threadpoolqueue_headwait_timemills",
    "rocketmq_brokeruntime_query_threadpoolqueue_size",
    "rocketmq_brokeruntime_remain_howmanydata_toflush",
    "rocketmq_brokeruntime_remain_transientstore_buffer_numbs",
    "rocketmq_brokeruntime_send_threadpool_queue_size",
    "rocketmq_brokeruntime_send_threadpoolqueue_capacity",
    "rocketmq_brokeruntime_send_threadpoolqueue_headwait_timemills",
    "rocketmq_brokeruntime_start_accept_sendrequest_time",
    "rocketmq_client_consume_fail_msg_count", "rocketmq_client_consume_fail_msg_tps",
    "rocketmq_client_consume_ok_msg_tps", "rocketmq_client_consume_rt",
    "rocketmq_client_consumer_pull_rt", "rocketmq_client_consumer_pull_tps",
    "rocketmq_consumer_message_size", "rocketmq_consumer_offset", "rocketmq_consumer_tps",
    "rocketmq_group_consume_total_offset", "rocketmq_group_consume_tps",
    "rocketmq_group_count", "rocketmq_group_diff", "rocketmq_group_dlqdiff",
    "rocketmq_group_get_latency_by_storetime", "rocketmq_group_retrydiff",
    "rocketmq_producer_count", "rocketmq_producer_message_size", "rocketmq_producer_offset",
    "rocketmq_producer_tps", "rocketmq_send_back_nums", "rocketmq_topic_dlq_offset",
    "rocketmq_topic_retry_offset",
)


def table() -> str:
    text = (ROOT / "docs" / "exports.md").read_text(encoding="utf-8")
    start = text.index("### rocketmq-exporter's metrics")
    return text[start:text.index("\n## ", start)]


def test_every_rocketmq_exporter_metric_is_in_the_table():
    t = table()
    named = set(re.findall(r"`(rocketmq_[a-z0-9_]+)`", t))
    runtime = set(re.findall(r"`([a-z0-9_]+)`", t[t.index("rocketmq_brokeruntime_*"):]))
    named |= {"rocketmq_brokeruntime_" + n for n in runtime}
    missing = [m for m in ROCKETMQ_EXPORTER if m not in named]
    assert len(ROCKETMQ_EXPORTER) == 89 and missing == []


def test_every_mqctl_series_of_the_table_is_served():
    served = ({n for n, _ in BROKER_METRICS} | {n for n, _, _ in TOPIC_METRICS}
              | {n for n, _, _ in GROUP_METRICS} | {n for n, _, _ in RUN_METRICS})
    used = set(re.findall(r"`(mqctl_[a-z_]+)`", table()))
    assert used and used <= served | {"mqctl_group_status"}
