"""`mqctl diagnose` sends no request that changes cluster state (the strongest request-log
check: tests/views/test_views_cli.py's, which also catches a committing PULL_MESSAGE), and a part
it could not read makes no finding and exits 8."""

from __future__ import annotations

import pytest
from readonly import assert_read_only

from diagnose.helpers import check, codes, diagnose
from mqctl.remoting.codes import RequestCode, ResponseCode

DEMO_GROUPS = ("GID_PAY", "GID_AUDIT", "GID_ORDER", "GID_MIXED", "GID_DUP", "GID_NEWS",
               "GID_POP", "GID_REPLAY")
DIAGNOSE_GROUPS = ("GID_OK", "GID_SLOW", "GID_FAIL", "GID_DISABLED", "GID_NOREAD",
                   "GID_COMMIT", "GID_HOT", "GID_SKEW", "GID_BLOCKED", "GID_BUSY",
                   "GID_POPSLOW", "GID_HANG", "GID_FLAP", "GID_OHANG")


@pytest.mark.parametrize("scenario, groups", [("demo", DEMO_GROUPS),
                                              ("diagnose", DIAGNOSE_GROUPS)])
def test_diagnose_is_read_only(sim_factory, scenario, groups):
    s = sim_factory(scenario)
    s.advance(150)
    s.clear_request_log()
    for g in groups:
        code, _, err = diagnose(s, g, "--sample", "6")
        # (the clock moves 6 s a group: the hung client is dropped before GID_HANG's turn)
        assert code in ((0, 8, 9) if g in ("GID_HANG", "GID_OHANG") else (0, 9)), (g, err)
    assert_read_only(s)
    sent = {r.code for r in s.request_log}
    # it read what it says it reads
    assert {RequestCode.GET_CONSUMER_RUNNING_INFO, RequestCode.GET_CONSUME_STATS,
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, RequestCode.GET_BROKER_RUNTIME_INFO,
            RequestCode.QUERY_CONSUME_TIME_SPAN} <= sent


def test_unread_group_config_makes_no_finding_and_exits_8(sim_factory):
    """broker-b is where GID_DISABLED's consumption is off: with its subscription groups
    unread, consume-disabled is not made (not guessed from the other broker), the check says
    not checked, and the exit code is 8."""
    s = sim_factory("diagnose")
    s.advance(150)
    code, d, _ = diagnose(s, "GID_DISABLED")
    assert "consume-disabled" in codes(d)
    s.call(lambda c: c.faults.error("broker-b", RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
                                    ResponseCode.SYSTEM_BUSY))
    code, d, err = diagnose(s, "GID_DISABLED")
    assert code == 8 and "part of the data could not be read" in err
    assert "consume-disabled" not in codes(d)
    assert check(d, "consume-disabled")["status"] == "not-checked"
    assert "group config" in d["unread"] and d["verdict"] == "problems"
    assert {f["broker"] for f in d["failures"]} == {"broker-b"}


def failing(sim_factory, broker, request):
    """The diagnose cluster 150 s in, ``broker`` answering SYSTEM_BUSY to ``request``."""
    s = sim_factory("diagnose")
    s.advance(150)
    s.call(lambda c: c.faults.error(broker, request, ResponseCode.SYSTEM_BUSY))
    return s


def test_unread_offsets_on_one_broker(sim_factory):
    s = failing(sim_factory, "broker-b", RequestCode.GET_CONSUME_STATS)
    code, d, _ = diagnose(s, "GID_OK")
    assert code == 8 and d["verdict"] == "incomplete" and "offsets" in d["unread"]
    assert d["findings"] == []


def test_unread_runtime_info(sim_factory):
    s = failing(sim_factory, "broker-c", RequestCode.GET_BROKER_RUNTIME_INFO)
    code, d, _ = diagnose(s, "GID_BUSY")
    assert code == 8 and "runtime info of broker-c" in d["unread"]
    assert not {"broker-pull-busy", "broker-page-cache-busy", "slave-behind"} & set(codes(d))


def test_a_check_whose_data_is_partly_unread_is_not_ok(sim_factory):
    s = failing(sim_factory, "broker-b", RequestCode.GET_CONSUME_STATS)
    _, d, _ = diagnose(s, "GID_OK")
    for name in ("unowned-queues", "retry-backlog", "skew", "lag-growing"):
        c = check(d, name)
        assert c["status"] == "not-checked" and c["detail"].startswith("not read: offsets")
    assert check(d, "flow-control")["status"] == "ok"  # running info was read
