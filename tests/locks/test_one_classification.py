"""`locks show`, `group progress` (OWNER) and `diagnose` name one state and one owner per
orderly queue: the classification of mqctl.locks (the bundled demo cluster, manual clock).

The demo's demo09 crashes at 2 minutes holding broker-b:2 and broker-b:3 of GID_ORDER; 15 s
later the survivors cannot lock them until its lease ends. Before, at that moment, `diagnose`
said `lock-failed` while its check said "every lagging queue has an owner (mqTable ...)",
`group progress` showed those queues with no owner, and `locks show` said `lock-failed 2`.
"""

from __future__ import annotations

import pytest

G, T = "GID_ORDER", "TopicOrder"
D8, D9 = "10.0.3.32@4302#demo08", "10.0.3.33@4303#demo09"
LOST = ("broker-b:2", "broker-b:3")


def run(cli, sim, state_dir, *args):
    r = cli(["--timeout", "3", "-n", sim.namesrv_addr, *args, "--state-dir", str(state_dir),
             "-o", "json"])
    assert r.exit_code in (0, 9), r.stderr
    return r.json


def three_views(cli, sim, state_dir):
    locks = {q["queue"]: q for q in run(cli, sim, state_dir, "locks", "show", "-g", G)["queues"]}
    prog = {f"{q['broker']}:{q['queue_id']}": q
            for q in run(cli, sim, state_dir, "group", "progress", G)["queues"]}
    diag = run(cli, sim, state_dir, "diagnose", G)
    return locks, prog, diag


def agree(locks, prog, diag, state: str, owner: str, code: str) -> None:
    for q in LOST:
        assert (locks[q]["state"], locks[q]["owner"]) == (state, owner), locks[q]["reason"]
        assert (prog[q]["lock_state"], prog[q]["lock_owner"]) == (state, owner)
        assert prog[q]["owner_cell"] == f"{owner} ({state})"
    for q in set(locks) - set(LOST):
        assert locks[q]["state"] == prog[q]["lock_state"] == "held"
        assert prog[q]["owner_cell"] == locks[q]["owner"] == prog[q]["owner"]
    f = next(f for f in diag["findings"] if f["code"] == code)
    assert sorted(f"{m['broker']}:{m['queue_id']}" for m in f["queues"]) == list(LOST)
    assert owner in f["clients"]
    check = next(c for c in diag["checks"] if c["check"] == "unowned-queues")
    assert check["status"] == "ok"
    assert "mqTable" not in check["detail"] and f"2 {state}" in check["detail"]
    assert "has an owner in the lock classification" in check["detail"]


@pytest.mark.parametrize("seen_before", [False, True], ids=["first-run", "seen-alive"])
def test_the_three_views_agree_on_the_demo_15s_after_the_crash(cli, sim, tmp_path,
                                                                  seen_before):
    """first-run: no earlier observation of demo09 (a fresh state directory): the queues are
    assigned to demo08, which cannot lock them yet: `lock-failed`, owner demo08, everywhere.
    seen-alive: `locks show` saw demo09 holding them at 1 m 50 s: `stale`, owner demo09,
    everywhere (diagnose and group progress read the same state file)."""
    if seen_before:
        sim.advance(110)
        run(cli, sim, tmp_path, "locks", "show", "-g", G)
        sim.advance(25)
    else:
        sim.advance(135)
    locks, prog, diag = three_views(cli, sim, tmp_path)
    if seen_before:
        agree(locks, prog, diag, "stale", D9, "lock-stale")
    else:
        agree(locks, prog, diag, "lock-failed", D8, "lock-failed")
    per_topic = next(t for t in run(cli, sim, tmp_path, "group", "progress", G)["topics"]
                     if t["topic"] == T)
    assert per_topic["unowned"] == 0
