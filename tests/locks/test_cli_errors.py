"""CLI errors that need no cluster: bad --queue syntax, unreachable name server, help."""

from __future__ import annotations

from tcp_peer import refused_port


def test_bad_queue_syntax_is_a_usage_error_before_any_request(cli):
    r = cli(["locks", "release", "--group", "G", "--queue", "broker-a", "-n", "127.0.0.1:1"])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[0] == ("mqctl: error: bad --queue 'broker-a': expected "
                                        "BROKER:QUEUE_ID, e.g. broker-a:3")


def test_unreachable_name_server_exit_3(cli, tmp_path):
    with refused_port() as port:
        r = cli(["--timeout", "1", "locks", "show", "--group", "G", "-n",
                 f"127.0.0.1:{port}", "--state-dir", str(tmp_path)])
    assert r.exit_code == 3
    assert r.stderr.startswith("mqctl: error:")
    assert len(r.stderr.strip().splitlines()) <= 2


def test_help_lists_both_commands(cli):
    r = cli(["locks", "--help"])
    assert r.exit_code == 0
    assert "show" in r.stdout and "release" in r.stdout
    r = cli(["locks", "release", "--help"])
    assert "--execute" in r.stdout and "--force" in r.stdout
