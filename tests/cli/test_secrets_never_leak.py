"""ACL and TLS end to end through the CLI, and the secret never leaks: every command runs with
--debug and a known secret configured; the secret must not appear in stdout, stderr or any
file written."""

from __future__ import annotations

import os

import pytest
from conftest import run_cli
from sim_fixtures import running_sim

SECRET = "S3CRET-never-print-me-7f1c"
ACL_DEMO = "demo"


def acl_scenario():
    from mqctl.sim import load_scenario
    from mqctl.sim.scenario import AclSpec

    return load_scenario(ACL_DEMO, acl=AclSpec(True, {"ops": SECRET}))


@pytest.fixture
def acl_sim():
    with running_sim(acl_scenario()) as s:
        s.advance(30)
        yield s


def env(sim, secret=SECRET, key="ops"):
    e = {"NAMESRV_ADDR": sim.namesrv_addr}
    if key:
        e["MQCTL_ACCESS_KEY"] = key
    if secret:
        e["MQCTL_SECRET_KEY"] = secret
    return e


def test_acl_right_wrong_and_missing_key(acl_sim):
    ok = run_cli(["group", "progress", "GID_PAY", "-o", "json"], env=env(acl_sim))
    assert ok.exit_code == 0, ok.stderr
    wrong = run_cli(["group", "progress", "GID_PAY"], env=env(acl_sim, secret="wrong"))
    assert wrong.exit_code in (5, 8) and "check signature failed." in wrong.stderr
    missing = run_cli(["group", "progress", "GID_PAY"], env=env(acl_sim, secret=None, key=None))
    assert missing.exit_code in (5, 8) and "username cannot be null." in missing.stderr
    unknown = run_cli(["offsets", "show", "-g", "GID_PAY", "-t", "TopicPay"],
                      env=env(acl_sim, key="mallory"))
    assert unknown.exit_code in (5, 8) and "User:mallory is not found." in unknown.stderr
    assert all(SECRET not in r.stdout + r.stderr for r in (ok, wrong, missing, unknown))


def test_tls_end_to_end(sim_factory):
    from mqctl.sim import load_scenario
    from mqctl.sim.scenario import TlsSpec

    s = sim_factory(load_scenario("demo", tls=TlsSpec(True)))
    e = {"NAMESRV_ADDR": s.namesrv_addr}
    ok = run_cli(["--tls-ca", s.cluster.tls_cert_file, "cluster", "-o", "json"], env=e)
    assert ok.exit_code == 0, ok.stderr
    assert {r["broker"] for r in ok.json["brokers"]} == {"broker-a", "broker-b"}
    insecure = run_cli(["--tls-insecure", "consumers", "GID_PAY"], env=e)
    assert insecure.exit_code == 0, insecure.stderr
    plain = run_cli(["--timeout", "2", "cluster"], env=e)
    assert plain.exit_code == 3


COMMANDS = [
    ["config", "show"], ["cluster"], ["topics"], ["route", "TopicPay"],
    ["consumers", "GID_MIXED"], ["group", "progress", "GID_AUDIT"],
    ["snapshot", "--out", "{tmp}/snap", "--all-groups"],
    ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--against-live"],
    ["locks", "show", "--group", "GID_ORDER"],
    ["locks", "release", "--group", "GID_ORDER", "--queue", "broker-b:2", "--client",
     "10.0.3.33@4303#demo09", "--execute"],
    ["offsets", "show", "-g", "GID_REPLAY"],
    ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--by-duration", "-5m",
     "--export", "{tmp}/plan.csv"],
    ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--by-duration", "-5m",
     "--execute", "--rollback-file", "{tmp}/rb.json"],
    ["offsets", "rollback", "{tmp}/rb.json", "--execute"],
    ["time", "now"], ["wire", "decode", "{tmp}/plan.csv"], ["sim", "scenarios"],
    ["lag", "report", "{tmp}/snap", "--out", "{tmp}/report"],
]


@pytest.mark.spark  # `lag report` is among the commands
def test_no_command_leaks_the_secret(acl_sim, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"current_profile: p\nprofiles:\n  p:\n    namesrv: {acl_sim.namesrv_addr}\n"
                   f"    acl: {{access_key: ops, secret_key: {SECRET}}}\n")
    os.chmod(cfg, 0o600)
    acl_sim.advance(100)  # demo09 crashed: its lock can be released
    seen = []
    for cmd in COMMANDS:
        args = ["--debug", "--config", str(cfg), *[a.format(tmp=tmp_path) for a in cmd]]
        r = run_cli(args)
        seen.append((cmd[0], r.exit_code))
        assert SECRET not in r.stdout, cmd
        assert SECRET not in r.stderr, cmd
        assert r.exit_code in (0, 4, 8), (cmd, r.exit_code, r.stderr[-1500:])
    # wrong secret with --debug: the error and traceback show no secret either
    r = run_cli(["--debug", "--config", str(cfg), "group", "progress", "GID_PAY"],
                env={"MQCTL_SECRET_KEY": SECRET + "-wrong"})
    assert r.exit_code in (5, 8) and SECRET not in r.stdout + r.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != cfg]
    assert len(written) > 5
    for p in written:
        assert SECRET.encode() not in p.read_bytes(), p
    state = [p for base in (os.environ["XDG_STATE_HOME"], os.environ["XDG_CACHE_HOME"])
             for p in __import__("pathlib").Path(base).rglob("*") if p.is_file()]
    for p in state:
        assert SECRET.encode() not in p.read_bytes(), p
    assert dict(seen)["snapshot"] == 0 and dict(seen)["lag"] == 0
