"""The ranking of `mqctl diagnose` on hand-made findings (pure): a finding whose cause
explains another one's evidence outranks it and the other is shown as its consequence;
severity and the rules' order break ties; findings that explain each other (a cycle) are
ranked by the tie-break and neither is the other's consequence."""

from __future__ import annotations

from mqctl.diagnose import Diagnosis, Finding
from mqctl.diagnose.explain import covers, rank_findings
from mqctl.diagnose.rules import ORDER

HOT = ("concentrated", "T", "broker-a", 3)
FLOW = ("flow-control", "c1", "T", "broker-a", 3)
BEHIND = ("behind", "T", "broker-a", 3)


def f(code, severity="warning", shows=(), explains=(), title=""):
    return Finding(code, severity, title or code, why="", next="", evidence=(),
                   shows=frozenset(shows), explains=frozenset(explains))


def ranked(*fs, order=ORDER):
    out = rank_findings(list(fs), order)
    return out, [x.code for x in out]


def test_a_cause_outranks_the_more_severe_symptom_it_explains():
    flow = f("flow-control", "error", shows=[FLOW], explains=[BEHIND])
    lag = f("lag-growing", "error", shows=[BEHIND])
    hot = f("hot-queue", "warning", shows=[HOT], explains=[BEHIND, FLOW])
    out, codes = ranked(flow, lag, hot)
    assert codes == ["hot-queue", "flow-control", "lag-growing"]
    h, fl, lg = out
    assert h.explained_by == () and h.consequences == (2, 3)
    assert fl.explained_by == (1,) and fl.fully_explained and fl.explanation == "full"
    assert lg.explained_by == (1, 2) and lg.fully_explained
    # a cause is as severe as the worst finding it explains
    assert h.severity == "error"


def test_without_explanations_the_order_is_severity_then_the_rules_order():
    fs = [f("lag-growing", "error"), f("hot-queue", "warning"), f("flow-control", "error"),
          f("dlq", "info"), f("consume-failing", "error")]
    _, codes = ranked(*fs)
    assert codes == ["flow-control", "consume-failing", "lag-growing", "hot-queue", "dlq"]
    # an unknown code comes after the known ones of its severity, in the order made
    _, codes = ranked(f("zz", "error"), f("yy", "error"), f("offline", "error"))
    assert codes == ["offline", "zz", "yy"]


def test_partly_explained():
    other = ("behind", "T", "broker-b", 0)
    lag = f("lag-growing", "error", shows=[BEHIND, other])
    hot = f("hot-queue", "warning", shows=[HOT], explains=[BEHIND])
    out, codes = ranked(lag, hot)
    assert codes == ["hot-queue", "lag-growing"]
    assert out[1].explained_by == (1,) and not out[1].fully_explained
    assert out[1].explanation == "partial"
    # two causes together explain all of it
    skew = f("broker-skew", "warning", shows=[("concentrated", "T", "broker-b", 0)],
             explains=[other])
    out, codes = ranked(lag, hot, skew)
    assert codes[-1] == "lag-growing" and out[-1].explained_by == (1, 2)
    assert out[-1].fully_explained


def test_an_explained_fact_may_be_a_prefix():
    assert covers(("behind", "T"), BEHIND) and covers(("behind",), BEHIND)
    assert not covers(("behind", "U"), BEHIND) and not covers(BEHIND, ("behind", "T"))
    offline = f("offline", "error", shows=[("offline",)], explains=[("behind",)])
    lag = f("lag-growing", "error", shows=[BEHIND])
    out, codes = ranked(lag, offline)
    assert codes == ["offline", "lag-growing"] and out[1].fully_explained


def test_a_chain_raises_every_cause_to_the_worst_it_explains():
    a = f("dlq", "info", shows=[("a",)], explains=[("b",)])
    b = f("idle-consumers", "warning", shows=[("b",)], explains=[("c",)])
    c = f("lag-growing", "error", shows=[("c",)])
    out, codes = ranked(c, b, a)
    assert codes == ["dlq", "idle-consumers", "lag-growing"]
    assert [x.severity for x in out] == ["error", "error", "error"]
    assert out[1].explained_by == (1,) and out[2].explained_by == (2,)
    # severity is never lowered
    out, _ = ranked(f("offline", "error", shows=[("x",)], explains=[("y",)]),
                    f("dlq", "info", shows=[("y",)]))
    assert [x.severity for x in out] == ["error", "info"]


def test_two_findings_that_explain_each_other_are_one_cause_ranked_by_the_tie_break():
    """A cycle: neither is the other's consequence; the tie-break (severity, then ORDER)
    orders them, each names the other, and what either explains comes after both."""
    skew = f("broker-skew", "warning", shows=[("concentrated", "T", "b")],
             explains=[("saturated", "c1"), ("behind", "T", "b", 0)])
    sat = f("threads-saturated", "warning", shows=[("saturated", "c1")],
            explains=[("concentrated", "T", "b")])
    lag = f("lag-growing", "error", shows=[("behind", "T", "b", 0)])
    out, codes = ranked(skew, lag, sat)
    assert codes == ["threads-saturated", "broker-skew", "lag-growing"]
    s, k, lg = out
    assert s.explained_by == () and k.explained_by == ()
    assert s.mutual == (2,) and k.mutual == (1,)
    assert lg.explained_by == (2,) and lg.mutual == ()
    assert s.severity == k.severity == "error"  # the cycle explains an error
    # the same findings made in the other order rank the same
    _, codes2 = ranked(sat, lag, skew)
    assert codes2 == codes


def test_a_longer_cycle_and_a_tie_with_an_independent_cause():
    a = f("consume-blocked", "warning", shows=[("a",)], explains=[("b",)])
    b = f("flow-control", "warning", shows=[("b",)], explains=[("c",)])
    c = f("threads-saturated", "warning", shows=[("c",)], explains=[("a",)])
    other = f("broker-pull-busy", "error", shows=[("z",)])
    out, codes = ranked(c, other, b, a)
    assert codes == ["broker-pull-busy", "consume-blocked", "flow-control",
                     "threads-saturated"]
    assert all(x.explained_by == () for x in out)
    assert out[1].mutual == (3, 4) and out[3].mutual == (2, 3) and out[0].mutual == ()


def test_a_finding_explained_by_two_causes_comes_after_both():
    lag = f("lag-growing", "error", shows=[("behind", "q1"), ("behind", "q2")])
    c1 = f("consume-blocked", "warning", shows=[("x",)], explains=[("behind", "q1")])
    c2 = f("broker-pull-busy", "info", shows=[("y",)], explains=[("behind", "q2")])
    out, codes = ranked(lag, c2, c1)
    assert codes == ["consume-blocked", "broker-pull-busy", "lag-growing"]
    assert out[2].explained_by == (1, 2) and out[2].fully_explained


def test_the_headline_names_the_first_cause_and_the_others():
    flow = f("flow-control", "error", shows=[FLOW], explains=[BEHIND],
             title="c1 is at its flow-control threshold")
    lag = f("lag-growing", "error", shows=[BEHIND], title="T: lag 10 and growing")
    hot = f("hot-queue", "warning", shows=[HOT], explains=[BEHIND, FLOW],
            title="T: the lag is on 1 of 8 queue(s)")
    dlq = f("dlq", "warning", shows=[("dlq",)], title="3 message(s) in %DLQ%G")
    note = f("threads-saturated", "info", title="c2: saturated")
    d = Diagnosis("G", None, 0, rank_findings([flow, lag, hot, dlq, note], ORDER), [], {})
    assert d.headline == ("4 problem(s) found, 1 note(s); first of 2 causes: hot-queue: T: the "
                          "lag is on 1 of 8 queue(s) (explains 2 other finding(s)); also #4 "
                          "dlq")
    one = Diagnosis("G", None, 0, rank_findings([flow, hot], ORDER), [], {})
    assert one.headline == ("2 problem(s) found; cause: hot-queue: T: the lag is on 1 of 8 "
                            "queue(s) (explains 1 other finding(s))")
    ok = Diagnosis("G", None, 0, rank_findings([note], ORDER), [], {})
    assert ok.headline == "nothing wrong found (1 note(s) above)"
    doc = one.to_dict()
    assert doc["headline"] == one.headline
    assert [(x["rank"], x["explained_by"], x["explains"], x["explanation"])
            for x in doc["findings"]] == [(1, [], [2], None), (2, [1], [], "full")]
