"""What a resend's outcome says (pure): a failure or an unverified send is a partial
application (exit 8) naming the --resume command; an interrupt is exit 130 with the counts;
a run that sent everything is no error."""

from __future__ import annotations

from mqctl.errors import ExitCode
from mqctl.levers.resend import LetterResult, ResendOutcome, ResendPlan, plan_command
from mqctl.levers.resend_rows import resend_result
from mqctl.levers.resend_select import Letter, ResendRequest


def _letters(n):
    return tuple(Letter("broker-a", "127.0.0.1:1", 0, i, f"ID{i}", f"U{i}", "T", 1000 + i, 1,
                        "%RETRY%G") for i in range(n))


def _outcome(statuses, **kw):
    letters = _letters(len(statuses))
    plan = ResendPlan(ResendRequest("G", all=True, execute=True), "ns:9876", 0, letters,
                      held=10, scanned=len(statuses))
    return ResendOutcome(plan, "done", tuple(LetterResult(x, s, "why") for x, s in
                                             zip(letters, statuses, strict=True)),
                         journal="/tmp/j.jsonl", **kw)


def test_a_failure_is_partial_and_names_the_resume():
    o = _outcome(["verified", "failed", "skipped"])
    err = o.error()
    assert err is not None and err.exit_code == ExitCode.PARTIAL
    assert "1 of 3 message(s)" in err.message and "ID1 failed" in err.message
    assert "--resume /tmp/j.jsonl --execute --yes" in (err.hint or "")
    rows = resend_result(o).structured()["messages"]
    assert [r["status"] for r in rows] == ["verified", "failed", "skipped"]


def test_an_interrupt_counts_what_was_sent():
    o = _outcome(["verified", "found", "not-sent"], signal="SIGTERM")
    err = o.error()
    assert err is not None and err.exit_code == ExitCode.INTERRUPTED
    assert err.message.startswith("interrupted by SIGTERM during send: 2 message(s) sent")
    assert "1 not sent" in err.message and "--resume" in (err.hint or "")


def test_everything_sent_is_no_error_and_the_plan_names_its_command():
    assert _outcome(["verified", "skipped", "duplicate"]).error() is None
    plan = ResendPlan(ResendRequest("G", msg_ids=("A", "B"), to="original", limit=5), "ns",
                      0, _letters(1))
    assert plan_command(plan) == ("mqctl -n ns group dlq resend G --msg-id A --msg-id B --to "
                                  "original --limit 5 --execute")
    doc = resend_result(ResendOutcome(plan)).structured()
    assert doc["messages"][0]["status"] == "planned" and doc["journal"] is None
    assert any(n.startswith("plan only: nothing was sent") for n in doc["notes"])


def test_a_send_not_read_back_is_partial_and_says_where_to_look():
    err = _outcome(["verified", "sent-not-verified"]).error()
    assert err is not None and err.exit_code == ExitCode.PARTIAL
    assert err.hint == "check: mqctl message find -t %RETRY%G --unique-key U1"
