"""One time zone story (--tz, DST gaps and overlaps, signed relative times)
and the lock view's TRUSTED / FREES AT semantics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, timedelta, timezone

import pytest
from locks.helpers import NOW as LOCK_NOW
from locks.helpers import mq

from mqctl.errors import TimeParseError
from mqctl.locks import BROKER_LEASE_MS, RENEW_INTERVAL_MS, Claim, LockState, classify_queue
from mqctl.timeparse import (
    format_clock,
    format_duration,
    format_local,
    localize_iso,
    parse_time,
    resolve_tz,
    set_display_tz,
    set_warning_sink,
)

NOW = 1_717_200_000_000  # 2024-06-01T00:00:00Z
NY = resolve_tz("America/New_York")


@pytest.fixture(autouse=True)
def _reset_zone():
    yield
    set_display_tz(None)
    set_warning_sink(None)


def test_resolve_tz_forms():
    assert resolve_tz("UTC") is UTC and resolve_tz("local") is None and resolve_tz("") is None
    assert resolve_tz("+08:00") == timezone(timedelta(hours=8))
    assert resolve_tz("UTC-0530") == timezone(-timedelta(hours=5, minutes=30))
    assert str(getattr(resolve_tz("Asia/Shanghai"), "key", "")) == "Asia/Shanghai"
    for bad in ("Mars/Olympus", "+25:00", "../etc/passwd"):
        with pytest.raises(TimeParseError, match="unknown time zone"):
            resolve_tz(bad)


def test_display_zone_renders_every_local_time_with_its_offset():
    set_display_tz(resolve_tz("Asia/Shanghai"))
    assert format_local(NOW) == "2024-06-01 08:00:00 +08:00"
    assert format_clock(NOW, now=NOW) == "08:00:00 +08:00"
    assert format_clock(NOW, now=NOW + 86_400_000) == "2024-06-01 08:00:00 +08:00"
    set_display_tz(UTC)
    assert format_local(NOW) == "2024-06-01 00:00:00 UTC"
    # a DST zone: the offset is that of each instant (one table can hold both)
    set_display_tz(NY)
    assert format_local(NOW) == "2024-05-31 20:00:00 -04:00"
    assert format_local(NOW - 180 * 86_400_000) == "2023-12-03 19:00:00 -05:00"


def test_zone_less_input_is_read_in_the_display_zone():
    set_display_tz(resolve_tz("+08:00"))
    assert parse_time("2024-06-01 08:00", now=NOW) == NOW
    assert parse_time("2024-06-01T08:00:00Z", now=NOW) == NOW + 8 * 3_600_000  # zone wins


@pytest.mark.parametrize("text, fragment, first, second", [
    # 2024-03-10 02:30 never happens in New York (02:00 EST -> 03:00 EDT)
    ("2024-03-10 02:30", "does not exist in America/New_York",
     "2024-03-10T02:30:00-04:00 (= 2024-03-10T06:30:00.000Z)",
     "2024-03-10T02:30:00-05:00 (= 2024-03-10T07:30:00.000Z)"),
    # 2024-11-03 01:30 happens twice (02:00 EDT -> 01:00 EST)
    ("2024-11-03#01:30:00:000", "exists twice in America/New_York",
     "2024-11-03T01:30:00-04:00 (= 2024-11-03T05:30:00.000Z)",
     "2024-11-03T01:30:00-05:00 (= 2024-11-03T06:30:00.000Z)"),
])
def test_dst_gap_and_overlap_refused_with_both_candidates(text, fragment, first, second):
    with pytest.raises(TimeParseError) as ei:
        parse_time(text, now=NOW, tz=NY)
    assert fragment in ei.value.message
    assert first in (ei.value.hint or "") and second in (ei.value.hint or "")


def test_dst_warned_when_not_strict_and_read_as_java_does():
    seen: list[str] = []
    set_warning_sink(seen.append)
    gap = parse_time("2024-03-10 02:30", now=NOW, tz=NY, strict=False)
    assert gap == 1_710_055_800_000  # 07:30Z = 03:30 EDT (java.time moves a gap later)
    overlap = parse_time("2024-11-03 01:30", now=NOW, tz=NY, strict=False)
    assert overlap == 1_730_611_800_000  # 05:30Z: the earlier offset (EDT)
    assert len(seen) == 2 and "the other candidate is" in seen[0]
    # a normal time warns nothing
    assert parse_time("2024-06-01 10:00", now=NOW, tz=NY, strict=False) == NOW + 14 * 3_600_000
    assert len(seen) == 2


def test_unsigned_relative_time_is_the_past_with_a_warning_naming_the_sign():
    seen: list[str] = []
    set_warning_sink(seen.append)
    assert parse_time("30m", now=NOW) == NOW - 1_800_000
    assert seen and "has no sign: read as -30m" in seen[0]
    seen.clear()
    assert parse_time("-30m", now=NOW) == NOW - 1_800_000
    assert parse_time("+30m", now=NOW) == NOW + 1_800_000
    assert seen == []


@pytest.mark.parametrize("text, fragment, not_in_hint", [
    ("20240601", "looks like a date without dashes", "append 000"),
    ("0", "a bare number is neither epoch milliseconds", "append 000"),
    ("30", "a bare number is neither epoch milliseconds", "append 000"),
    ("1717200000", "looks like epoch seconds", None),
])
def test_bare_numbers_get_the_right_hint(text, fragment, not_in_hint):
    with pytest.raises(TimeParseError) as ei:
        parse_time(text, now=NOW)
    assert fragment in ei.value.message
    hint = ei.value.hint or ""
    if not_in_hint:
        assert not_in_hint not in hint
    else:
        assert "append 000 (1717200000000)" in hint
    if text == "20240601":
        assert "2024-06-01" in hint


def test_durations_are_two_units_with_a_space():
    assert format_duration(3 * 3_600_000 + 125_000) == "3h 2m"
    assert format_duration(159_610) == "2m 39s"
    assert format_duration(9_500) == "9.5s"
    assert format_duration(2 * 86_400_000 + 4 * 3_600_000) == "2d 4h"


def _mqctl(args: list[str], tz: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MQCTL_", "NAMESRV"))}
    if tz:
        env["TZ"] = tz
    return subprocess.run([sys.executable, "-m", "mqctl", *args], capture_output=True,
                          text=True, timeout=60, env=env)


def test_time_command_under_tz_warns_on_a_gap_and_refuses_it_as_a_reset_target():
    r = _mqctl(["time", "2024-03-10 02:30"], tz="America/New_York")
    assert r.returncode == 0, r.stderr
    assert "2024-03-10T07:30:00.000Z" in r.stdout and "03:30:00 -04:00" in r.stdout
    assert "does not exist in America/New_York" in r.stderr
    # the same wall time via --tz, as a reset target: refused before anything is contacted
    r = _mqctl(["-n", "127.0.0.1:1", "offsets", "reset", "-g", "G", "-t", "T",
                "--to-time", "2024-03-10 02:30", "--tz", "America/New_York"])
    assert r.returncode == 2, r.stderr
    assert "mqctl: error: local time '2024-03-10 02:30' does not exist" in r.stderr
    assert "2024-03-10T06:30:00.000Z" in r.stderr and "2024-03-10T07:30:00.000Z" in r.stderr
    assert "Traceback" not in r.stderr


def test_one_instant_looks_the_same_in_every_command_under_one_tz(cli):
    r = cli(["--tz", "Asia/Shanghai", "time", "2024-06-01T00:00:00Z", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    row = r.json["times"][0]
    assert row["local"] == "2024-06-01 08:00:00 +08:00"
    assert row["utc"] == "2024-06-01T00:00:00.000Z"  # machine formats stay UTC
    r = cli(["time", "-o", "csv", "2024-06-01T00:00:00Z", "--tz", "UTC"])
    assert "2024-06-01 00:00:00 UTC" in r.stdout
    r = cli(["--tz", "Nowhere/Land", "time", "now"])
    assert r.exit_code == 2 and "--tz: unknown time zone 'Nowhere/Land'" in r.stderr


def test_profile_tz_and_env(cli, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("current_profile: p\nprofiles:\n  p:\n    tz: Asia/Shanghai\n")
    r = cli(["--config", str(cfg), "time", "2024-06-01T00:00:00Z", "-o", "json"])
    assert r.json["times"][0]["local"].endswith("+08:00"), r.stderr
    r = cli(["--config", str(cfg), "time", "2024-06-01T00:00:00Z", "-o", "json"],
            env={"MQCTL_TZ": "UTC"})
    assert r.json["times"][0]["local"].endswith("UTC")
    r = cli(["--config", str(cfg), "config", "show", "-o", "json"])
    assert r.json["tz"] == {"value": "Asia/Shanghai", "source": "profile p"}
    cfg.write_text("current_profile: p\nprofiles:\n  p:\n    tz: Mars/Base\n")
    r = cli(["--config", str(cfg), "config", "show"])
    assert r.exit_code == 2 and "tz (profile p): unknown time zone 'Mars/Base'" in r.stderr


# ------------------------------------------------------------------ locks: TRUSTED, FREES AT

Q = mq("broker-a:3")


def _claim(cid: str, *, age: int, live: bool, member: bool, observed_age: int = 0,
           gone_age: int = 0) -> Claim:
    return Claim(cid, Q, True, LOCK_NOW - age, 0, False, live, LOCK_NOW - observed_age, member,
                 True, gone_ts=(LOCK_NOW - gone_age) if gone_age else 0)


def test_a_crashed_clients_claim_is_not_trusted_however_recent():
    gone = _claim("dead@7", age=5_000, live=False, member=False, observed_age=5_000)
    assert gone.trusted(LOCK_NOW) is False
    hung = _claim("hung@8", age=5_000, live=False, member=True, observed_age=5_000)
    assert hung.trusted(LOCK_NOW) is None  # does not answer: unknown
    alive = _claim("a@1", age=5_000, live=True, member=True)
    assert alive.trusted(LOCK_NOW) is True
    q = classify_queue(Q, [gone], ["b@2"], now=LOCK_NOW, answered={"b@2"}, connections=None,
                       group="G")
    assert q.state is LockState.STALE and q.trusted is False
    assert q.to_dict()["trusted"] is False


def test_frees_at_explains_its_window_when_the_holder_may_have_renewed():
    # seen renewing 50 s ago, found gone 10 s ago: it may have renewed at -30 s and -10 s
    gone = _claim("dead@7", age=50_000, live=False, member=False, observed_age=50_000,
                  gone_age=10_000)
    q = classify_queue(Q, [gone], ["b@2"], now=LOCK_NOW, answered={"b@2"}, connections=None,
                       group="G")
    assert q.state is LockState.STALE
    assert q.frees_at == LOCK_NOW - 50_000 + BROKER_LEASE_MS
    latest = LOCK_NOW - 50_000 + BROKER_LEASE_MS + 2 * RENEW_INTERVAL_MS
    d = q.to_dict()
    assert d["frees_at_latest_ts"] == latest and d["frees_at_ts"] == q.frees_at
    assert "at the earliest (FREES AT moves 20 s later each time it passes" in (q.hint or "")
    assert format_clock(latest, now=LOCK_NOW) in (q.hint or "")
    # a single possible end: FREES AT is the last reported renewal + 60 s
    one = _claim("dead@7", age=15_000, live=False, member=False, observed_age=10_000)
    q1 = classify_queue(Q, [one], ["b@2"], now=LOCK_NOW, answered={"b@2"}, connections=None,
                        group="G")
    assert "(FREES AT: its last reported renewal + 60 s)" in (q1.hint or "")
    assert q1.to_dict()["frees_at_latest_ts"] == q1.frees_at


def test_unsigned_by_duration_warns_and_plans_the_past(cli, sim):
    sim.advance(5)
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "GID_REPLAY", "-t", "TopicPay",
             "--by-duration", "30m", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert "duration '30m' has no sign: read as -30m (in the past)" in r.stderr
    signed = cli(["-n", sim.namesrv_addr, "offsets", "reset", "GID_REPLAY", "-t", "TopicPay",
                  "--by-duration", "-30m", "-o", "json"])
    assert signed.exit_code == 0 and "no sign" not in signed.stderr
    # the same instant (the sim's clock is manual); the text echoes what was typed
    assert r.json["target"].split(" (")[0] == signed.json["target"].split(" (")[0]


def test_group_progress_and_locks_show_times_in_the_tz_zone(cli, sim, tmp_path):
    ns = ["-n", sim.namesrv_addr]
    state = ["--state-dir", str(tmp_path)]
    sim.advance(110)  # observed before demo09 crashes (120 s), then stale after it
    assert cli([*ns, "locks", "show", "GID_ORDER", *state]).exit_code in (0, 8)
    sim.advance(40)
    r = cli([*ns, "group", "progress", "GID_PAY", "-o", "plain", "--tz", "Asia/Shanghai"])
    assert r.exit_code == 0, r.stderr
    j = cli([*ns, "group", "progress", "GID_PAY", "-o", "json"]).json
    q = next(x for x in j["queues"] if x["last_consume_ts"])
    assert q["last_consume_time"].endswith("Z")  # machine formats stay UTC
    set_display_tz(resolve_tz("Asia/Shanghai"))
    assert format_local(q["last_consume_ts"]) in r.stdout
    assert format_local(q["last_consume_ts"]).endswith(" +08:00")
    r = cli([*ns, "--tz", "Asia/Shanghai", "locks", "show", "GID_ORDER", "-o", "plain",
             *state])
    assert r.exit_code in (0, 8), r.stderr
    notes = [ln for ln in r.stdout.splitlines() if ln.startswith("group GID_ORDER")]
    assert notes and notes[0].endswith("+08:00"), notes
    assert "is blocked until" in r.stdout, r.stdout
    assert re.search(r"blocked until \d{2}:\d{2}:\d{2} \+08:00 (at the earliest )?\(FREES AT",
                     r.stdout), r.stdout
    stale = [ln for ln in r.stdout.splitlines() if " stale " in f" {ln} " and "TopicOrder" in ln]
    assert stale and all(re.search(r"\d{2}:\d{2}:\d{2} \+08:00", ln) for ln in stale)
    # no UTC instant in a human line next to a local one
    human = [ln for ln in r.stdout.splitlines() if "+08:00" in ln]
    assert human and not any(re.search(r"\d{2}:\d{2}:\d{2}\.\d{3}Z", ln) for ln in human)


def test_reset_plan_table_follows_tz_while_csv_and_json_stay_utc(cli, sim):
    """A reset plan's TARGET TIME is in the --tz zone in tables (no '...Z' next to local times
    elsewhere); CSV and JSON (and so plan files) keep the ISO UTC text."""
    ns = ["-n", sim.namesrv_addr]
    sim.advance(5)
    args = [*ns, "--tz", "Asia/Shanghai", "offsets", "reset", "GID_REPLAY", "-t", "TopicPay",
            "--by-duration", "-30m"]
    j = cli([*args, "-o", "json"]).json
    texts = [q["target_time"] for q in j["queues"] if "Z" in (q["target_time"] or "")]
    assert texts, j["queues"]
    plain = cli([*args, "-o", "plain"])
    assert plain.exit_code == 0, plain.stderr
    set_display_tz(resolve_tz("Asia/Shanghai"))
    for t in texts:
        assert localize_iso(t) in plain.stdout and localize_iso(t).endswith("+08:00")
    # the rows: no UTC instant (the title keeps the target as it was given, with its zone)
    rows = plain.stdout.split("reset plan:", 1)[1].split("\n", 1)[1]
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d{3}Z", rows)
    csv_out = cli([*args, "-o", "csv"]).stdout
    assert all(t in csv_out for t in texts)
