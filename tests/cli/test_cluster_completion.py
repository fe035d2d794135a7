"""Completion of group and topic names from the cluster, through Typer's
``_MQCTL_COMPLETE`` protocol as the shell runs it: names from the simulated cluster, only
read-only requests, a cache, and a dead or hung cluster answered with nothing, quietly."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading

import pytest
from tcp_peer import refused_port

from mqctl.complete import (
    CACHE_TTL_S,
    FAILURE_TTL_S,
    cache_dir,
    candidates,
    cluster_names,
)
from mqctl.config import load_settings
from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode

READ_ONLY_SENT = {RequestCode.GET_BROKER_CLUSTER_INFO,
                  RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
                  RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG}


def complete(line: str, **env: str) -> subprocess.CompletedProcess[str]:
    """What bash does on TAB: COMP_WORDS / COMP_CWORD with the completion variable set."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    e = dict(os.environ, COMP_WORDS=line, COMP_CWORD=str(cword),
             _MQCTL_COMPLETE="complete_bash", **env)
    return subprocess.run([sys.executable, "-m", "mqctl"], env=e, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def names(sim):
    sc = sim.cluster.scenario
    return sorted(g.name for g in sc.groups), sorted(t.name for t in sc.topics)


def test_groups_and_topics_complete_from_the_cluster(sim, names):
    groups, topics = names
    ns = sim.namesrv_addr
    r = complete(f"mqctl -n {ns} group progress ")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.split() == groups
    assert complete(f"mqctl -n {ns} consumers GID_P").stdout.split() == [
        g for g in groups if g.startswith("GID_P")]
    # -g and -t of a sub-command, the name server from the environment
    assert complete("mqctl offsets reset -g ", NAMESRV_ADDR=ns).stdout.split() == groups
    assert complete("mqctl offsets reset -g GID_REPLAY -t ",
                    NAMESRV_ADDR=ns).stdout.split() == topics
    assert complete(f"mqctl -n {ns} route ").stdout.split() == topics
    assert complete(f"mqctl -n {ns} allocate GID_O").stdout.split() == ["GID_ORDER"]
    assert complete(f"mqctl -n {ns} locks show --group GID_O").stdout.split() == ["GID_ORDER"]
    # RocketMQ's own names only when asked for by their first letters
    retry = complete(f"mqctl -n {ns} route %RE").stdout.split()
    assert retry and all(t.startswith("%RETRY%") for t in retry)
    assert "%RETRY%GID_PAY" in retry
    sent = {x.code for x in sim.request_log}
    assert sent <= READ_ONLY_SENT and not sent & set(MUTATING_REQUESTS)
    assert RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG in sent


def test_message_commands_complete_topics_and_groups_never_keys_or_ids(sim, names):
    """Keys and ids are the application's: nothing is offered for them."""
    groups, topics = names
    ns = sim.namesrv_addr
    assert complete(f"mqctl -n {ns} message find -t ").stdout.split() == topics
    # `group dlq G` is `group dlq show G`: its subcommands, then the groups
    assert complete(f"mqctl -n {ns} group dlq ").stdout.split() == ["show", "resend", *groups]
    assert complete(f"mqctl -n {ns} group dlq resend ").stdout.split() == groups
    for flag in ("--key", "--unique-key", "--msg-id"):
        r = complete(f"mqctl -n {ns} message track -t TopicPay {flag} ")
        assert r.returncode == 0 and r.stdout.split() == []


@pytest.mark.parametrize("shell, extra", [("zsh", {}),
                                          ("fish", {"_TYPER_COMPLETE_FISH_ACTION": "get-args"})])
def test_zsh_and_fish_protocols(sim, shell, extra):
    e = dict(os.environ, _MQCTL_COMPLETE=f"complete_{shell}",
             _TYPER_COMPLETE_ARGS=f"mqctl -n {sim.namesrv_addr} consumers GID_P", **extra)
    r = subprocess.run([sys.executable, "-m", "mqctl"], env=e, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stderr == ""
    if shell == "fish":
        assert r.stdout.split() == ["GID_PAY", "GID_POP"]
    else:
        assert '"GID_PAY"' in r.stdout and '"GID_POP"' in r.stdout and "GID_ORDER" not in r.stdout


def test_answers_are_cached(sim, names):
    ns = sim.namesrv_addr
    assert complete(f"mqctl -n {ns} consumers ").stdout.split() == names[0]
    asked = len(sim.request_log)
    assert complete(f"mqctl -n {ns} route ").stdout.split() == names[1]
    assert complete(f"mqctl -n {ns} locks show --group GID_O").stdout.split() == ["GID_ORDER"]
    assert len(sim.request_log) == asked  # both from the cache
    (cache,) = list(cache_dir().glob("*.json"))
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    doc = json.loads(cache.read_text())
    assert ns not in cache.read_text() and ns not in cache.name
    # after the TTL the cluster is asked again
    settings = load_settings(flags={"namesrv": ns}, env={})
    assert [g["name"] for g in cluster_names(settings, "groups", now=doc["ts"] + 1)
            if g["kind"] == "normal"] == names[0]
    assert len(sim.request_log) == asked
    cluster_names(settings, "groups", now=doc["ts"] + CACHE_TTL_S + 1)
    assert len(sim.request_log) > asked


def test_a_dead_name_server_completes_nothing_quietly():
    with refused_port() as port:  # a port nobody listens on
        r = complete(f"mqctl -n 127.0.0.1:{port} group progress ")
        assert (r.returncode, r.stdout.split(), r.stderr) == (0, [], "")
        r = complete(f"mqctl -n 127.0.0.1:{port} offsets show -g GID -t ")
        assert (r.returncode, r.stdout.split(), r.stderr) == (0, [], "")


def test_a_hung_name_server_is_given_up_on_and_not_asked_again_at_once():
    """A server that accepts and never answers: the deadline ends the wait (the subprocess
    timeout only guards the test), and for FAILURE_TTL_S the next TAB does not connect."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    addr = f"127.0.0.1:{srv.getsockname()[1]}"
    try:
        r = complete(f"mqctl -n {addr} --timeout 30 group progress ")
        assert (r.returncode, r.stdout.split(), r.stderr) == (0, [], "")
        n = len(accepted)
        assert n >= 1  # it did connect and ask
        (cache,) = list(cache_dir().glob("*.json"))
        doc = json.loads(cache.read_text())
        assert doc["failed_ts"] and doc["groups"] is None and doc["topics"] is None
        r = complete(f"mqctl -n {addr} route ")
        assert (r.returncode, r.stdout.split(), r.stderr) == (0, [], "")
        assert len(accepted) == n  # within FAILURE_TTL_S: not asked again
        settings = load_settings(flags={"namesrv": addr}, env={})
        assert cluster_names(settings, "topics", now=doc["failed_ts"] + FAILURE_TTL_S + 1) == []
        assert len(accepted) > n  # after it, asked again
    finally:
        stop.set()
        t.join(5)
        for c in accepted:
            c.close()
        srv.close()


def test_candidates_hide_rocketmq_names_without_a_prefix():
    names = [{"name": "GID_A", "kind": "normal"}, {"name": "TOOLS_CONSUMER", "kind": "system"},
             {"name": "%RETRY%GID_A", "kind": "retry"}, {"name": "GID_B", "kind": "normal"}]
    assert candidates(names, "") == ["GID_A", "GID_B"]
    assert candidates(names, "TOOLS") == ["TOOLS_CONSUMER"]
    assert candidates(names, "%") == ["%RETRY%GID_A"]
    assert candidates(names, "GID_B") == ["GID_B"]


def test_static_completion_still_works_without_a_cluster():
    r = complete("mqctl offsets roll")
    assert r.stdout.split() == ["rollback", "rollbacks"]
    r = complete("mqctl offsets reset --max-")
    assert r.stdout.split() == ["--max-replay", "--max-skip"]
