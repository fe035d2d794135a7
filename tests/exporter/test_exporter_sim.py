"""``mqctl exporter`` in its own process against the simulated cluster (manual clock: nothing
moves between two reads) on 127.0.0.1: /metrics, /healthz and /-/ready; the lag equal to
`mqctl groups -o json` at the same moment; a broker that goes away and comes back (unknown,
then known again, the round errors counted); SIGTERM, SIGHUP, a port already taken; and a
real Prometheus scraping it with the shipped rules where the Debian package is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = ROOT / "docs" / "prometheus"
RULES = [DOCS / "mqctl-recording.rules.yml", DOCS / "mqctl-alerts.rules.yml"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def until(what: str, fn, proc: subprocess.Popen | None = None, limit: float = 60.0):
    """Poll ``fn`` until it returns something truthy (bounded; no timing is asserted)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            got = fn()
        except OSError:
            got = None
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the exporter ended before {what}: {proc.communicate()}")
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def exporter(namesrv: str, *args: str, env: dict | None = None, cwd: Path | None = None
             ) -> Iterator[tuple[subprocess.Popen, str]]:
    """``mqctl exporter`` on an ephemeral port of 127.0.0.1 (``:0``: the port is held from
    the bind, no race with another process), its URL read from its first log line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mqctl", "-n", namesrv, "exporter", "--listen", "127.0.0.1:0",
         "--interval", "1s", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **(env or {})})
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        m = re.search(r"listening on (127\.0\.0\.1:\d+),", first)
        assert m, (first, proc.poll())
        base = f"http://{m.group(1)}"
        until("/-/ready", lambda: get(base + "/-/ready")[0] == 200, proc)
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def series(text: str, name: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(rf"^{name}(\{{[^}}]*\}})? (\S+)$", line)
        if m:
            out[m.group(1) or ""] = m.group(2)
    return out


def rounds(text: str) -> int:
    return int(series(text, "mqctl_exporter_rounds_total")[""])


def next_round(base: str, proc: subprocess.Popen) -> str:
    """The metrics of a round that started after this call."""
    n = rounds(get(base + "/metrics")[1])
    return until("the next round", lambda: (lambda t: t if rounds(t) >= n + 2 else None)(
        get(base + "/metrics")[1]), proc)


def group_lags(text: str) -> dict[str, float]:
    return {re.search(r'group="([^"]*)"', k).group(1): float(v)
            for k, v in series(text, "mqctl_group_lag_messages").items()}


def test_metrics_match_groups_json_at_the_same_moment(sim, cli):
    with exporter(sim.namesrv_addr) as (proc, base):
        assert get(base + "/healthz") == (200, "ok\n")
        text = next_round(base, proc)
        groups = cli(["-n", sim.namesrv_addr, "groups", "-o", "json"]).json["groups"]
    want = {g["group"]: g["lag"] for g in groups if g["lag"] is not None}
    got = group_lags(text)
    assert want and {g: got[g] for g in want} == {g: float(v) for g, v in want.items()}
    # a BROADCASTING group keeps its offsets in the clients: unknown on both sides
    unknown = {g["group"] for g in groups if g["lag"] is None}
    assert all(got[g] != got[g] for g in unknown)  # NaN
    assert series(text, "mqctl_exporter_round_errors_total") == {"": "0"}


def test_a_broker_that_goes_away_is_unknown_then_known_again(sim):
    with exporter(sim.namesrv_addr, "--groups", "GID_ORDER") as (proc, base):
        before = next_round(base, proc)
        lag = series(before, "mqctl_consumer_lag_messages")
        assert lag and all(v != "NaN" for v in lag.values())
        sim.call(lambda c: c.faults.broker_down("broker-b"))
        down = next_round(base, proc)
        lag = series(down, "mqctl_consumer_lag_messages")
        on_b = {k: v for k, v in lag.items() if 'broker="broker-b"' in k}
        on_a = {k: v for k, v in lag.items() if 'broker="broker-a"' in k}
        assert on_b and set(on_b.values()) == {"NaN"}
        assert on_a and "NaN" not in on_a.values()
        assert group_lags(down)["GID_ORDER"] != group_lags(down)["GID_ORDER"]  # NaN
        assert int(series(down, "mqctl_exporter_round_errors_total")[""]) >= 1
        assert get(base + "/healthz")[0] == 200
        sim.call(lambda c: c.faults.broker_up("broker-b"))
        back = until("broker-b known again", lambda: (lambda t: t if "NaN" not in series(
            t, "mqctl_consumer_lag_messages").values() else None)(get(base + "/metrics")[1]),
            proc)
        assert group_lags(back)["GID_ORDER"] == group_lags(before)["GID_ORDER"]


def test_sigterm_stops_it_with_exit_0_and_sighup_reloads_the_config(sim, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"profiles:\n  default:\n    namesrv: {sim.namesrv_addr}\n")
    with exporter(sim.namesrv_addr, env={"MQCTL_CONFIG": str(cfg)}) as (proc, base):
        proc.send_signal(signal.SIGHUP)
        next_round(base, proc)
        assert proc.poll() is None  # a reload, not a stop
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
    assert "reloaded:" in err and "stopped (SIGTERM)" in err, err


def test_a_port_already_taken_is_refused(sim):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, "exporter",
                            "--listen", f"127.0.0.1:{port}"], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 6
    assert f"cannot listen on 127.0.0.1:{port}" in r.stderr and "--listen" in r.stderr


def test_bad_listen_and_interval_are_usage_errors(cli):
    r = cli(["exporter", "--listen", "nowhere"])
    assert r.exit_code == 2 and "HOST:PORT" in r.stderr
    r = cli(["exporter", "--interval", "-3s"])
    assert r.exit_code == 2 and "--interval" in r.stderr


def test_promtool_checks_the_metrics(sim):
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool is not installed: install the Debian package prometheus "
                    "(./dev test does)")
    with exporter(sim.namesrv_addr) as (proc, base):
        text = next_round(base, proc)
    r = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True, text=True,
                       timeout=60)
    # promtool lints names; a gauge's "_total"-less counters and NaN samples are fine
    assert r.returncode == 0, r.stdout + r.stderr


def test_prometheus_scrapes_it_with_the_shipped_rules(sim, cli, tmp_path):
    prom = shutil.which("prometheus")
    if prom is None:
        pytest.skip("prometheus is not installed: install the Debian package prometheus "
                    "(./dev test does)")
    with exporter(sim.namesrv_addr) as (_proc, base):
        prom_port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{', '.join(str(f) for f in RULES)}]\n"
            "scrape_configs:\n  - job_name: mqctl\n"
            f"    static_configs: [{{targets: ['{base.removeprefix('http://')}']}}]\n")
        with open(tmp_path / "prometheus.log", "wb") as log:
            p = subprocess.Popen([prom, f"--config.file={config}",
                                  f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                  f"--web.listen-address=127.0.0.1:{prom_port}"],
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        api = f"http://127.0.0.1:{prom_port}/api/v1/query?query="
        try:
            def query(q: str) -> list:
                status, body = get(api + urllib.request.quote(q))
                return json.loads(body)["data"]["result"] if status == 200 else []

            until("Prometheus has the exporter's lag", lambda: query(
                "rocketmq_group_diff"), p, limit=90)
            got = {r["metric"]["group"]: float(r["value"][1])
                   for r in query("mqctl_group_lag_messages == mqctl_group_lag_messages")}
            groups = cli(["-n", sim.namesrv_addr, "groups", "-o", "json"]).json["groups"]
            want = {g["group"]: float(g["lag"]) for g in groups if g["lag"] is not None}
            assert got == want
            diff = {r["metric"]["group"]: float(r["value"][1])
                    for r in query("sum by (group) (rocketmq_group_diff)")}
            assert diff and all(diff[g] == want[g] for g in diff)
            up = query('up{job="mqctl"}')
            assert up and up[0]["value"][1] == "1"
        finally:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=30)


def test_a_name_server_that_does_not_answer_is_counted_and_nothing_is_served_as_fresh():
    port = free_port()  # nothing listens there
    with exporter(f"127.0.0.1:{port}", "--interval", "0.5s") as (proc, base):
        text = until("two failed rounds", lambda: (lambda t: t if rounds(t) >= 2 else None)(
            get(base + "/metrics")[1]), proc)
        assert int(series(text, "mqctl_exporter_round_errors_total")[""]) >= 2
        assert series(text, "mqctl_lag_report_last_success_timestamp_seconds") == {}
        assert series(text, "mqctl_group_lag_messages") == {}
        assert proc.poll() is None and get(base + "/healthz")[0] == 200


def test_a_reload_with_a_broken_config_keeps_the_one_in_use(sim, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"profiles:\n  default:\n    namesrv: {sim.namesrv_addr}\n")
    with exporter(sim.namesrv_addr, env={"MQCTL_CONFIG": str(cfg)}) as (proc, base):
        cfg.write_text("profiles: [unclosed\n")
        proc.send_signal(signal.SIGHUP)
        text = next_round(base, proc)
        assert series(text, "mqctl_exporter_round_errors_total") == {"": "0"}
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and "reload refused" in err, err
