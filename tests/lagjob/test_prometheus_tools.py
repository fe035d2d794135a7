"""The lag report's Prometheus side with the real tools: ``promtool check
rules`` / ``promtool test rules`` on the shipped files (docs/prometheus/), ``promtool check
metrics`` on a textfile the report wrote, and end to end: the demo report's textfile served by
a real node_exporter (textfile collector) and scraped by a real Prometheus on 127.0.0.1 with
the shipped rules, whose PromQL answers must equal the report's JSON, and every query of the
shipped Grafana dashboard must evaluate there.

Debian packages ``prometheus`` (promtool, prometheus) and ``prometheus-node-exporter``
(``./dev test`` installs them); each test skips and says why where a tool is missing. The
daemons listen on ephemeral ports of 127.0.0.1 and are stopped (their process group, SIGTERM
then SIGKILL) however the test ends."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = ROOT / "docs" / "prometheus"
RULES = [DOCS / "mqctl-recording.rules.yml", DOCS / "mqctl-alerts.rules.yml"]
INSTALL = "install the Debian packages prometheus and prometheus-node-exporter (./dev test does)"


def prom_bin() -> str:
    return tool("prometheus")


def node_bin() -> str:
    return tool("prometheus-node-exporter", "node_exporter")


def tool(*names: str) -> str:
    path = next((p for p in map(shutil.which, names) if p), None)
    if path is None:
        pytest.skip(f"{names[0]} is not installed: {INSTALL}")
    return path


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("promtool"), *args], capture_output=True, text=True,
                          timeout=120, cwd=DOCS, input=stdin)


# ---- the shipped files (no Spark) ----------------------------------------------------------

def test_promtool_checks_the_shipped_rules():
    r = promtool("check", "rules", *map(str, RULES))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("SUCCESS") == 2


def test_promtool_runs_the_shipped_rule_tests():
    """docs/prometheus/mqctl-rules.test.yml: the recording rules give rocketmq-exporter's names
    and values; lag alerts only where consumers are online, NaN never fires, STOP, storm,
    unowned queues and a stale report do."""
    r = promtool("test", "rules", "mqctl-rules.test.yml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


def test_promtool_test_fails_on_a_wrong_expectation(tmp_path):
    """The rule tests can fail: one expected value off, and promtool says so."""
    for f in RULES:
        shutil.copy(f, tmp_path / f.name)
    text = (DOCS / "mqctl-rules.test.yml").read_text()
    assert "            value: 120\n" in text
    (tmp_path / "t.yml").write_text(text.replace("            value: 120\n",
                                                 "            value: 121\n"))
    r = subprocess.run([tool("promtool"), "test", "rules", "t.yml"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode != 0 and "rocketmq_group_diff" in r.stdout + r.stderr


def _series_names(expr: str) -> set[str]:
    """The mqctl_* and rocketmq_* series an expression reads (label matchers and strings
    left out)."""
    expr = re.sub(r"\{[^}]*\}|\"[^\"]*\"", " ", expr)
    return {m.group(0) for m in re.finditer(r"\b(?:mqctl|rocketmq)_[a-zA-Z0-9_]+", expr)}


def test_dashboard_reads_only_series_that_exist():
    """Every query of the shipped Grafana dashboard reads a series the textfile has
    (mqctl/lagjob/writers.py) or the shipped recording rules make."""
    import yaml

    from mqctl.lagjob import writers as W

    written = ({n for n, _ in W.BROKER_METRICS} | {n for n, _, _ in W.TOPIC_METRICS}
               | {n for n, _, _ in W.GROUP_METRICS} | {n for n, _, _ in W.RUN_METRICS}
               | {"mqctl_group_info", "mqctl_group_status", "mqctl_group_health"})
    recorded = {r["record"] for g in yaml.safe_load(RULES[0].read_text())["groups"]
                for r in g["rules"]}
    dash = json.loads((DOCS / "mqctl-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert len(exprs) >= 12
    used = set().union(*(_series_names(e) for e in exprs))
    assert used - written - recorded == set()
    assert used & recorded  # the dashboard uses the recording rules too
    for rule in yaml.safe_load(RULES[1].read_text())["groups"][0]["rules"]:
        assert _series_names(rule["expr"]) <= written, rule["alert"]


# ---- end to end: node_exporter and Prometheus on 127.0.0.1 --------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _daemon(args: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        yield proc
    finally:
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue


@contextmanager
def _serving(textdir: Path, tmp_path: Path) -> Iterator[tuple[int, str, Path]]:
    """node_exporter serving ``textdir`` and Prometheus scraping it with the shipped rules,
    each on a port picked free. Another process can take a port between the pick and the
    daemon's bind (the daemon exits: "address already in use"): then both start again on new
    ports, up to 3 times. Yields (Prometheus' port, node_exporter's first /metrics answer,
    Prometheus' log) once both answer."""
    for attempt in range(3):
        node_port, prom_port = _free_port(), _free_port()
        config = tmp_path / f"prometheus-{attempt}.yml"
        config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{', '.join(str(f) for f in RULES)}]\n"
            "scrape_configs:\n"
            "  - job_name: node\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{node_port}']}}]\n")
        node_log = tmp_path / f"node-{attempt}.log"
        prom_log = tmp_path / f"prometheus-{attempt}.log"
        with _daemon([node_bin(), f"--web.listen-address=127.0.0.1:{node_port}",
                      "--collector.disable-defaults", "--collector.textfile",
                      f"--collector.textfile.directory={textdir}"], node_log) as node, \
                _daemon([prom_bin(), f"--config.file={config}",
                         f"--storage.tsdb.path={tmp_path / f'tsdb-{attempt}'}",
                         f"--web.listen-address=127.0.0.1:{prom_port}"], prom_log) as prom:
            node_url = f"http://127.0.0.1:{node_port}/metrics"
            prom_url = f"http://127.0.0.1:{prom_port}/-/ready"
            try:
                metrics = _until("node_exporter answers", lambda u=node_url: urllib.request.urlopen(
                    u, timeout=5).read().decode(), node_log, proc=node)
                _until("Prometheus is ready", lambda u=prom_url: urllib.request.urlopen(
                    u, timeout=5).status == 200, prom_log, proc=prom)
            except _Exited as exc:
                if "address already in use" in exc.log and attempt < 2:
                    continue
                raise
            yield prom_port, metrics, prom_log
            return


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


class _Exited(AssertionError):
    """A daemon ended before it answered; ``log`` is what it printed."""

    def __init__(self, what: str, log: str):
        super().__init__(f"{what}: the daemon exited; log:\n{log[-3000:]}")
        self.log = log


def _until(what: str, fn, log: Path, seconds: float = 90.0,
           proc: subprocess.Popen[bytes] | None = None):
    """Poll ``fn`` until it returns something (bounded; no timing is asserted); ``proc``'s
    exit ends the wait at once (:class:`_Exited`)."""
    deadline = time.monotonic() + seconds
    last: BaseException | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise _Exited(what, log.read_text(errors="replace"))
        try:
            got = fn()
            if got:
                return got
        except OSError as exc:  # not listening yet
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"{what} did not happen in {seconds:g} s ({last}); log:\n"
                         + log.read_text(errors="replace")[-3000:])


@pytest.mark.spark
def test_textfile_through_node_exporter_into_prometheus(demo_report, tmp_path):
    prom_bin(), node_bin()  # (skips here, before the report, where one is missing)
    _cap, res = demo_report
    text = Path(res.paths["prometheus"]).read_text()
    lint = promtool("check", "metrics", stdin=text)
    assert lint.returncode == 0, lint.stdout + lint.stderr  # Prometheus' naming lint
    textdir = tmp_path / "textfile"
    textdir.mkdir()
    (textdir / "mqctl_lag.prom").write_text(text)
    with _serving(textdir, tmp_path) as (prom_port, metrics, prom_log):
        base = f"http://127.0.0.1:{prom_port}/api/v1/query?query="

        def query(q: str) -> list[dict]:
            d = _get(base + urllib.parse.quote(q))
            assert d["status"] == "success", d
            return d["data"]["result"]

        # node_exporter serves the file as it is (no parse error of the collector)
        assert "node_textfile_scrape_error 0" in metrics
        assert 'mqctl_group_health{cluster="DefaultCluster",group="GID_MIXED",health="ERR"} 1' \
            in metrics
        # the recording rules ran once the scraped series are there
        _until("Prometheus scraped and recorded", lambda: query("rocketmq_group_diff"),
               prom_log)
        groups = {g["group"]: g for g in res.groups}

        def by_group(q: str) -> dict[str, float]:
            return {r["metric"]["group"]: float(r["value"][1]) for r in query(q)}

        # the lag per group, summed over brokers, is the report's (retry and DLQ apart)
        lag = by_group("sum by (group) (mqctl_consumer_lag_messages)")
        expect = {g: float(v["total_lag"]) for g, v in groups.items()
                  if v.get("total_lag") is not None}
        assert {g: v for g, v in lag.items() if v == v} == expect  # (NaN != NaN)
        assert lag["GID_NEWS"] != lag["GID_NEWS"]  # unknown is NaN, not a missing series
        # rocketmq-exporter's name, for every group but the BROADCASTING ones: an offline
        # group (no members, so no message model read: message_model="") keeps its lag
        diff = by_group("sum by (group) (rocketmq_group_diff)")
        assert diff["GID_AUDIT"] == expect["GID_AUDIT"] and "GID_NEWS" not in diff
        info = {r["metric"]["group"]: r["metric"].get("message_model", "")  # ("": none)
                for r in query("mqctl_group_info")}
        assert info["GID_REPLAY"] == "" and info["GID_NEWS"] == "BROADCASTING"
        assert diff["GID_REPLAY"] == expect["GID_REPLAY"] > 0
        # every group with a lag series has a rocketmq_group_diff series, or is BROADCASTING
        # (and the same for the retry and DLQ names)
        for mine, theirs in (("mqctl_consumer_lag_messages", "rocketmq_group_diff"),
                             ("mqctl_consumer_retry_lag_messages", "rocketmq_group_retrydiff"),
                             ("mqctl_consumer_dlq_lag_messages", "rocketmq_group_dlqdiff")):
            assert query(f"count by (cluster, group) ({mine}) unless on (cluster, group) "
                         f"count by (cluster, group) ({theirs}) unless on (cluster, group) "
                         'mqctl_group_info{message_model="BROADCASTING"}') == [], theirs
            assert query(f"{theirs} and on (cluster, group) "
                         'mqctl_group_info{message_model="BROADCASTING"}') == [], theirs
        retry = by_group("sum by (group) (rocketmq_group_retrydiff)")
        assert retry["GID_AUDIT"] == float(groups["GID_AUDIT"]["retry_lag"])
        # the status and health enums, the storm, members
        assert by_group('mqctl_group_health{health="ERR"} == 1').keys() >= {
            "GID_MIXED", "GID_DUP", "GID_REPLAY"}
        assert by_group('mqctl_group_status{status="OK"} == 1')["GID_MIXED"] == 1
        assert by_group("mqctl_group_rebalance_storm == 1") == {"GID_MIXED": 1.0}
        assert by_group("mqctl_group_members")["GID_PAY"] == float(groups["GID_PAY"]["members"])
        assert by_group('mqctl_group_status{status="UNKNOWN"} == 1') == {"GID_NEWS": 1.0}
        # the alert rules loaded and evaluate (their `for` keeps them pending here)
        rules = _get(f"http://127.0.0.1:{prom_port}/api/v1/rules")["data"]["groups"]
        health = {r["name"]: r["health"] for g in rules for r in g["rules"]}
        assert len(health) == 17 and set(health.values()) == {"ok"}, health
        # every query of the dashboard evaluates, and most find series
        dash = json.loads((DOCS / "mqctl-dashboard.json").read_text())
        found = 0
        for p in dash["panels"]:
            for t in p["targets"]:
                q = t["expr"].replace("$cluster", ".*").replace("$group", ".*")
                found += bool(query(q))
        assert found >= 12
