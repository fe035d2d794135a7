"""A hostile-input catalogue of paths, bounded inputs and named errors: one test per reproduction
(and
the other members of its class), each failing on the code before the fix.

* output paths: nothing at an output path is destroyed or redirected. A symlink as the final
  component is refused (a linked directory above it is followed); a device, FIFO, socket or
  directory is refused (exit 2) before any work starts, and again at the write
  (``mqctl.fsutil``).
* bounded inputs: every input file is read in one bounded step (a regular file within the cap of its
  kind; a FIFO or device refused up front), YAML nested too deeply is a usage error, plan and
  rollback JSON refuse duplicate keys and unknown schema versions, the simulator's clock is
  capped and its loop stays responsive.
* named errors: a stdout that cannot be written, ``demo --interval 0s`` and ``demo --out
<read-only>``
  are named errors with a hint and a documented exit code, never "internal error".

Inputs that never end (``/dev/zero``, ``/dev/urandom``) or block (a FIFO) are run in a child
process with an address-space limit and a deadline: the code before the fix read them without
bound (7.4 GB in 5 s) or blocked in ``open``, which then fails the test instead of the machine.
Device nodes of our own are made with ``mknod`` (root; skipped otherwise), so no test can harm
``/dev``; the sandbox runs tests as root, where ``/dev/full`` exists.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

ROOT_USER = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT_USER, reason="mknod of a device node needs root")
UNREACHABLE = ["-n", "127.0.0.1:1"]  # a refused connection: exit 3 once mqctl connects


# ------------------------------------------------------------------------------------ helpers

def _limit_memory() -> None:  # (in the child, before exec)
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def child(args: list[str], *, cwd: Path | None = None, timeout: float = 60, stdout=None,
          shell_redirect: str = "") -> tuple[int, str, str]:
    """``python -m mqctl ARGS`` in its own process (2 GB address space at most); killed and
    reported as a failure when it does not end within ``timeout`` (a FIFO blocked it, a clock
    spun it)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    cmd = [sys.executable, "-m", "mqctl", *args]
    if shell_redirect:
        cmd = ["sh", "-c", 'exec "$@" ' + shell_redirect, "sh", *cmd]
    proc = subprocess.Popen(cmd, stdout=stdout if stdout is not None else subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                            preexec_fn=_limit_memory)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"mqctl {' '.join(args)} did not end within {timeout} s")
    return proc.returncode, out or "", err


def one_error(err: str, *fragments: str) -> str:
    """The one ``mqctl: error:`` line, with a hint and no traceback; it holds ``fragments``."""
    lines = [ln for ln in err.splitlines() if ln.startswith("mqctl: error:")]
    assert len(lines) == 1, err
    assert "hint:" in err and "Traceback" not in err and "internal error" not in err, err
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def make(kind: str, path: Path) -> Path:
    """A ``kind`` of non-regular file at ``path``: fifo, socket, directory, chardev (a private
    copy of /dev/null, major 1 minor 3)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind == "directory":
        path.mkdir()
    elif kind == "chardev":
        if not ROOT_USER:
            pytest.skip("mknod of a character device needs root")
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:  # pragma: no cover
        raise AssertionError(kind)
    return path


def kind_of(path: Path) -> str:
    st = os.lstat(path)
    return ("fifo" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode)
            else "directory" if stat.S_ISDIR(st.st_mode)
            else "chardev" if stat.S_ISCHR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode)
            else "file")


KINDS = ["fifo", "socket", "directory", "chardev"]


@pytest.fixture
def no_spark(monkeypatch):
    """Spark must not start: the output checks come first."""
    import mqctl.lagjob.session as S

    def boom(*a, **k):
        raise AssertionError("Spark was started before the output paths were checked")
    monkeypatch.setattr(S, "spark_session", boom)


def snapshot_input(root: Path) -> Path:
    """An input for ``lag report`` (the outputs are checked before it is read)."""
    snap = root / "snap" / "mqctl-snapshot-c1-20240601T100000.000Z.jsonl"
    snap.parent.mkdir()
    snap.write_text("{}\n")
    return snap.parent


# ======================================================================= output paths

@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_prom_file_dev_full_is_refused_before_spark_and_stays_a_device(tmp_path, no_spark):
    # reproduction: as root, --prom-file /dev/full turned the device node into a regular file
    r = run_cli(["lag", "report", str(snapshot_input(tmp_path)), "--out", str(tmp_path / "o"),
                 "--prom-file", "/dev/full"])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "cannot write Prometheus file /dev/full", "character device")
    assert Path("/dev/full").is_char_device()


@pytest.mark.parametrize("kind", KINDS)
def test_prom_file_of_each_non_regular_kind_is_refused_before_spark(tmp_path, no_spark, kind):
    target = make(kind, tmp_path / "x.prom")
    r = run_cli(["lag", "report", str(snapshot_input(tmp_path)), "--out", str(tmp_path / "o"),
                 "--prom-file", str(target)])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "cannot write Prometheus file")
    assert kind_of(target) == kind


@pytest.mark.parametrize("name", ["summary.csv", "summary.json", "report.html",
                                  "mqctl_lag.prom"])
def test_report_outputs_in_out_that_are_not_files_are_refused_before_spark(tmp_path, no_spark,
                                                                          name):
    out = tmp_path / "o"
    out.mkdir()
    fifo = make("fifo", out / name)
    r = run_cli(["lag", "report", str(snapshot_input(tmp_path)), "--out", str(out)])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, f"cannot write report output {fifo}", "FIFO")
    assert kind_of(fifo) == "fifo"


def test_prom_file_symlink_is_refused_and_its_target_kept(tmp_path):
    # a link as the final component is never written through: a planted link.prom ->
    # /etc/passwd would have the report replace what it points at (the writer once followed
    # it; node_exporter's case is a linked directory, below)
    from mqctl.lagjob import writers as W

    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "target.prom"
    target.write_text("old 1\n")
    link = tmp_path / "link.prom"
    link.symlink_to(Path("real") / "target.prom")
    with pytest.raises(OSError) as ei:
        W.write_text(None, str(link), "new 2\n")  # the lag report's writer of the file
    assert "symbolic link" in str(ei.value)
    assert link.is_symlink() and target.read_text() == "old 1\n"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["target.prom"]


def test_a_linked_directory_above_the_file_is_followed(tmp_path):
    # node_exporter's textfile directory may be a link: the file is written in its target
    from mqctl.fsutil import atomic_write_text, output_location_error

    (tmp_path / "real").mkdir()
    (tmp_path / "textfile").symlink_to("real")
    assert output_location_error(tmp_path / "textfile" / "m.prom", "x", directory=False) is None
    atomic_write_text(tmp_path / "textfile" / "m.prom", "v 1\n")
    assert (tmp_path / "textfile").is_symlink()
    assert (tmp_path / "real" / "m.prom").read_text() == "v 1\n"


def test_symlink_chain_and_dangling_link_are_refused(tmp_path):
    from mqctl.fsutil import atomic_write_text, output_location_error

    (tmp_path / "d").mkdir()
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to(tmp_path / "d" / "final.txt")  # dangling
    err = output_location_error(tmp_path / "a", "x", directory=False)
    assert err is not None and "symbolic link" in err.message
    with pytest.raises(OSError):
        atomic_write_text(tmp_path / "a", "v\n")
    assert not (tmp_path / "d" / "final.txt").exists()
    # a dangling link as a directory above it: its missing target is never created
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere" / "deeper")
    err = output_location_error(tmp_path / "gone" / "f.txt", "x", directory=False)
    assert err is not None and "which does not exist" in err.message
    with pytest.raises(OSError):
        atomic_write_text(tmp_path / "gone" / "f.txt", "v\n")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_atomic_writer_never_replaces_a_non_regular_file(tmp_path, kind):
    from mqctl.fsutil import atomic_write_text, local_path_error

    target = make(kind, tmp_path / "out.txt")
    with pytest.raises(OSError) as ei:
        atomic_write_text(target, "x")
    assert "not a regular file" in str(local_path_error(ei.value, target, "the file"))
    assert kind_of(target) == kind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary left


def test_symlink_loop_is_refused(tmp_path):
    from mqctl.fsutil import output_file_error

    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    err = output_file_error(tmp_path / "a", "plan file")
    assert err is not None and "loop" in err.message


@pytest.mark.parametrize("kind", ["fifo", "chardev"])
def test_rollback_file_that_is_not_a_file_is_refused_before_the_change(cli, sim, tmp_path,
                                                                       kind):
    # reproduction: offsets reset --execute --rollback-file /dev/null wrote /dev/null.2
    # (here a private copy of /dev/null, or a FIFO, so that /dev stays untouched)
    dev = make(kind, tmp_path / "null")
    before = cli(["-n", sim.namesrv_addr, "-o", "json", "offsets", "show", "-g", "GID_REPLAY",
                  "-t", "TopicPay"]).stdout
    sim.clear_request_log()
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
             "--to-latest", "--execute", "--yes", "--rollback-file", str(dev)])
    assert r.exit_code == 2, r.stderr + r.stdout
    one_error(r.stderr, f"cannot write rollback file {dev}", "not a regular file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no null.2
    assert kind_of(dev) == kind
    assert not sim.request_log  # refused before connecting
    after = cli(["-n", sim.namesrv_addr, "-o", "json", "offsets", "show", "-g", "GID_REPLAY",
                 "-t", "TopicPay"]).stdout
    assert json.loads(after) == json.loads(before)  # nothing was reset


def test_free_name_logic_never_makes_dev_null_2():
    from mqctl.errors import UsageError
    from mqctl.reset.files import free_path

    with pytest.raises(UsageError, match="character device"):
        free_path(Path("/dev/null"))


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
def test_plan_export_to_a_non_regular_file_is_refused_before_connecting(tmp_path, kind):
    target = make(kind, tmp_path / "plan.csv")
    r = run_cli([*UNREACHABLE, "offsets", "reset", "-g", "G", "-t", "T", "--to-latest",
                 "--export", str(target)])
    assert r.exit_code == 2, r.stderr  # (not 3: nothing was connected to)
    one_error(r.stderr, f"cannot write plan file {target}")
    assert kind_of(target) == kind


def test_lock_file_that_is_a_fifo_is_refused(cli, sim, tmp_path):
    out = tmp_path / "snaps"
    out.mkdir()
    make("fifo", out / ".mqctl-snapshot.lock")
    r = cli(["-n", sim.namesrv_addr, "snapshot", "-g", "GID_PAY", "--out", str(out)])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "cannot write to the output directory", "FIFO")
    assert kind_of(out / ".mqctl-snapshot.lock") == "fifo"


def test_sim_log_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    logs = tmp_path / "logs"
    (logs / "brokers" / "broker-a").mkdir(parents=True)
    make("fifo", logs / "brokers" / "broker-a" / "lock.log")
    code, _out, err = child(["sim", "up", "--port", "0", "--log-dir", str(logs)], timeout=40)
    assert code == 2, err
    one_error(err, "lock.log", "FIFO")


# ==================================================================== bounded inputs

PLAN = [*UNREACHABLE, "offsets", "reset", "-g", "G", "-t", "T", "--from-file"]
ROLLBACK = [*UNREACHABLE, "offsets", "rollback"]
DEVICE_INPUTS = [
    (["--config", "/dev/zero", "config", "show"], "config file /dev/zero"),
    (["--config", "/dev/urandom", "config", "show"], "config file /dev/urandom"),
    (["sim", "up", "--port", "0", "--scenario", "/dev/zero"], "scenario file /dev/zero"),
    (["allocate", "--topology", "/dev/zero"], "topology file /dev/zero"),
    ([*PLAN, "/dev/zero"], "plan file /dev/zero"),
    ([*ROLLBACK, "/dev/zero"], "rollback file /dev/zero"),
    ([*UNREACHABLE, "--tls", "--tls-ca", "/dev/zero", "cluster"], "TLS CA file /dev/zero"),
]


@pytest.mark.parametrize("args, named", DEVICE_INPUTS, ids=[n for _a, n in DEVICE_INPUTS])
def test_endless_device_inputs_are_refused_up_front(args, named):
    # reproduction: --config /dev/zero reached 7.4 GB in 5 s, /dev/urandom was OOM-killed;
    # --scenario, --topology, --from-file and the rollback FILE read unbounded too
    code, _out, err = child(args, timeout=60)
    assert code == 2, err
    one_error(err, named, "character device, not a regular file")


FIFO_INPUTS = [
    (["--config", "{f}", "config", "show"], "config file"),
    (["sim", "up", "--port", "0", "--scenario", "{f}"], "scenario file"),
    (["allocate", "--topology", "{f}"], "topology file"),
    ([*PLAN, "{f}"], "plan file"),
    ([*ROLLBACK, "{f}"], "rollback file"),
]


@pytest.mark.parametrize("args, named", FIFO_INPUTS, ids=[n for _a, n in FIFO_INPUTS])
def test_fifo_inputs_are_refused_without_blocking(tmp_path, args, named):
    fifo = make("fifo", tmp_path / "in.yaml")
    code, _out, err = child([a.replace("{f}", str(fifo)) for a in args], timeout=40)
    assert code == 2, err
    one_error(err, named, "FIFO")


CAPPED = [
    ("config file", ["--config", "{f}", "config", "show"], "yaml"),
    ("scenario file", ["sim", "up", "--port", "0", "--scenario", "{f}"], "yaml"),
    ("topology file", ["allocate", "--topology", "{f}"], "yaml"),
    ("plan file", ["offsets", "reset", "-g", "G", "-t", "T", "--from-file", "{f}"], "csv"),
    ("rollback file", ["offsets", "rollback", "{f}"], "json"),
]


@pytest.mark.parametrize("kind, args, ext", CAPPED, ids=[c[0] for c in CAPPED])
def test_input_files_over_their_cap_are_refused_before_they_are_read(tmp_path, monkeypatch,
                                                                     kind, args, ext):
    from mqctl import fsutil

    monkeypatch.setitem(fsutil.INPUT_CAPS, kind, 1000)  # (the real caps: docs/errors.md)
    big = tmp_path / f"big.{ext}"
    big.write_text("#" + "x" * 1000 + "\n" if ext != "json" else "[" + " " * 1000 + "]")
    r = run_cli([*UNREACHABLE, *[a.replace("{f}", str(big)) for a in args]])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, f"{big} is larger than 1,000 bytes")


def test_completion_cache_that_is_a_fifo_does_not_hang_completion(tmp_path):
    import threading

    from mqctl.complete import read_cache

    fifo = make("fifo", tmp_path / "cache.json")
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(read_cache(fifo)), daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():  # (the code before: blocked in open; let it go)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO as the completion cache blocked")
    assert got == [None]


def test_every_input_cap_is_documented():
    from mqctl.fsutil import INPUT_CAPS

    text = (ROOT / "docs" / "errors.md").read_text()
    section = text.split("## Files mqctl writes and reads", 1)[1].split("\n## ", 1)[0]
    for kind, cap in INPUT_CAPS.items():
        row = next((ln for ln in section.splitlines() if ln.rstrip().endswith(" MB |")
                    and kind.split()[0].lower() in ln.lower()), None)
        assert row is not None and f"| {cap // 1_000_000} MB |" in row, (kind, cap)


@pytest.mark.parametrize("args", [
    ["--config", "{f}", "config", "show"],
    ["sim", "up", "--port", "0", "--scenario", "{f}"],
    ["allocate", "--topology", "{f}"],
], ids=["config", "scenario", "topology"])
def test_yaml_nested_too_deeply_is_a_usage_error(tmp_path, args):
    # reproduction: --config deep.yaml with 10,000 nested [ was internal error: RecursionError
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 10_000 + "\n")
    r = run_cli([a.replace("{f}", str(deep)) for a in args])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "YAML nested too deeply")


def laughs(levels: int = 7) -> str:
    """YAML whose aliases expand tenfold per level ("billion laughs"): 600 bytes, 10^7
    values to whatever walks it (here: the error message showing the bad value)."""
    out = ["  l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    out += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("args, doc", [
    (["--config", "{f}", "config", "show"],
     f"current_profile: p\nprofiles:\n{laughs()}  p: {{namesrv: *l6}}\n"),
    (["allocate", "--topology", "{f}"], f"junk:\n{laughs()}queues: *l6\nconsumers: [c1]\n"),
], ids=["config", "topology"])
def test_yaml_aliases_that_explode_are_refused(tmp_path, args, doc):
    f = tmp_path / "laughs.yaml"
    f.write_text(doc)
    r = run_cli([a.replace("{f}", str(f)) for a in args])
    assert r.exit_code == 2, r.stderr[:300]
    one_error(r.stderr, "YAML aliases (*name) expand to more than")
    assert len(r.stderr) < 1000


def test_yaml_aliases_used_a_few_times_are_fine(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("current_profile: a\nprofiles:\n  a: &p {namesrv: 10.0.0.1:9876, timeout: 5}\n"
                 "  b: *p\n  c: *p\n")
    r = run_cli(["--config", str(f), "-o", "json", "config", "show"])
    assert r.exit_code == 0, r.stderr
    assert "10.0.0.1:9876" in r.stdout


def test_topology_json_nested_too_deeply_is_a_usage_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    r = run_cli(["allocate", "--topology", str(deep)])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "JSON nested too deeply")


JSON_FILES = [
    # reproduction: {"target": 35400, "target": 1} silently took the last
    ("plan duplicate key", PLAN, '{"schema": "mqctl.reset-plan/1", "queues": [{"broker": "b", '
     '"queue_id": 0, "target": 35400, "target": 1}]}', 2,
     'key "target" appears twice in one object'),
    ("plan duplicate top key", PLAN, '{"group": "G", "group": "OTHER", "queues": '
     '[{"broker": "b", "queue_id": 0, "target": 1}]}', 2, 'key "group" appears twice'),
    ("rollback duplicate key", ROLLBACK, '{"schema": "mqctl.rollback/1", "group": "G", '
     '"topic": "T", "queues": [{"broker": "b", "queue_id": 0, "offset": 35400, "offset": 1}]}',
     2, 'key "offset" appears twice in one object'),
    ("plan unknown schema", PLAN, '{"schema": "mqctl.reset-plan/2", "queues": [{"broker": '
     '"b", "queue_id": 0, "target": 1}]}', 2,
     "has schema mqctl.reset-plan/2: this mqctl reads mqctl.reset-plan/1"),
    ("rollback unknown schema", ROLLBACK, '{"schema": "mqctl.rollback/2", "group": "G", '
     '"topic": "T", "queues": [{"broker": "b", "queue_id": 0, "offset": 1}]}', 2,
     "has schema mqctl.rollback/2: this mqctl reads mqctl.rollback/1 only"),
    # (a plan written by hand has no schema: read, then the unreachable cluster is asked)
    ("plan without schema", PLAN, '{"queues": [{"broker": "b", "queue_id": 0, "target": 1}]}',
     3, "cannot connect"),
]


@pytest.mark.parametrize("args, body, code, msg", [c[1:] for c in JSON_FILES],
                         ids=[c[0] for c in JSON_FILES])
def test_plan_and_rollback_json_keys_and_schema(tmp_path, args, body, code, msg):
    f = tmp_path / "file.json"
    f.write_text(body)
    r = run_cli([*args, str(f)])
    assert r.exit_code == code, r.stderr
    if code == 2:
        one_error(r.stderr, msg)
    else:
        assert msg in r.stderr


def test_sim_speed_beyond_the_cap_is_refused_not_spun():
    # reproduction: sim up --speed 1e9 spun and ignored SIGTERM (needed SIGKILL)
    code, _out, err = child(["sim", "up", "--port", "0", "--clock", "accelerated", "--speed",
                             "1e9"], timeout=40)
    assert code == 2, err
    one_error(err, "--speed 1e+09 is out of range (0.001 to 1000)")


def test_scenario_clock_speed_beyond_the_cap_is_refused(tmp_path):
    sc = tmp_path / "fast.yaml"
    sc.write_text("clock: {mode: accelerated, speed: 1000000000}\nbrokers: [broker-a]\n")
    code, _out, err = child(["sim", "up", "--port", "0", "--scenario", str(sc)], timeout=40)
    assert code == 2, err
    one_error(err, "clock.speed: must be at most 1000")


def test_the_sim_driver_runs_a_bounded_step_and_yields():
    """A clock far ahead of its events (a cluster that cannot keep up) runs at most a step of
    them before the event loop gets its turn (signals, requests)."""
    from mqctl.sim.clock import STEP_EVENTS, Scheduler, SimClock

    sched = Scheduler(SimClock("manual", start_ms=0))
    ran: list[int] = []
    sched.call_every(1, lambda: ran.append(1))
    assert sched.run_due(10_000_000, STEP_EVENTS) == STEP_EVENTS
    assert len(ran) == STEP_EVENTS and sched.next_due() is not None


def test_sim_at_the_fastest_clock_stops_on_sigterm(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "mqctl", "sim", "up", "--port", "0",
                             "--clock", "accelerated", "--speed", "1000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_limit_memory)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # up and serving
            if line.startswith("export NAMESRV_ADDR="):
                break
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("sim up at --speed 1000 did not stop on SIGTERM")
    assert "mqctl sim: stopped" in err, err


# ======================================================================= named errors

@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_json_groups_to_a_full_disk_is_named(sim, tmp_path):
    # reproduction: mqctl -o json groups > /dev/full was "internal error ... this is a bug"
    with open("/dev/full", "w") as full:
        code, _out, err = child(["-n", sim.namesrv_addr, "-o", "json", "groups"], stdout=full)
    assert code == 2, err
    one_error(err, "cannot write the output to stdout: No space left on device")


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
@pytest.mark.parametrize("args", [["-o", "plain", "sim", "scenarios"],
                                  ["-o", "table", "sim", "scenarios"],
                                  ["-o", "csv", "sim", "scenarios"],
                                  ["time", "now"], ["--help"]],
                         ids=["plain", "table", "csv", "time", "help"])
def test_any_output_to_a_full_disk_is_named(args):
    with open("/dev/full", "w") as full:
        code, _out, err = child(args, stdout=full)
    assert code == 2, err
    one_error(err, "cannot write the output to stdout")


ALLOCATE = ["allocate", "--queues", "broker-a:2000", "--consumers", "50"]


@pytest.mark.parametrize("args", [["-o", "json", *ALLOCATE], ["-o", "plain", *ALLOCATE],
                                  ["-o", "table", *ALLOCATE], ["--help"]],
                         ids=["json", "plain", "table", "help"])
def test_a_reader_that_went_away_ends_quietly_with_141(args):
    """``mqctl ... | head`` when the reader is gone: no message, exit 141 (as a tool ended by
    SIGPIPE), not click's silent exit 1 (or rich's SystemExit(1), as for tables and help)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r, w = os.pipe()
    os.close(r)  # the reader is gone before mqctl writes
    try:
        proc = subprocess.run([sys.executable, "-m", "mqctl", *args],
                              stdout=w, stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    finally:
        os.close(w)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == "", proc.stderr


def test_a_closed_stdout_is_named():
    code, _out, err = child(["time", "now"], shell_redirect=">&-")
    assert code == 2, err
    one_error(err, "cannot write the output to stdout", "closed")


@pytest.fixture
def no_simulation(monkeypatch):
    """The demo's simulation must not start: its arguments and --out are checked first."""
    import mqctl.demo

    def boom(*a, **k):
        raise AssertionError("the simulation started before the demo's arguments were checked")
    monkeypatch.setattr(mqctl.demo, "capture_timeline", boom)


def test_demo_interval_zero_is_a_usage_error(no_simulation):
    # reproduction: demo --interval 0s was internal error: ZeroDivisionError
    r = run_cli(["demo", "--interval", "0s"])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "--interval 0s must be longer than 0")


@pytest.mark.parametrize("args, msg", [
    (["--interval", "1ms"], "snapshots: at most 10,000"),
    (["--hours", "inf"], "--hours inf must be a positive number"),
    (["--interval", "-5s"], "must not be negative"),
])
def test_demo_other_intervals_are_usage_errors(no_simulation, args, msg):
    r = run_cli(["demo", *args])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, msg)


def test_demo_out_read_only_is_named_before_the_simulation(tmp_path, no_simulation):
    # reproduction: demo --out <read-only> was an internal error
    if ROOT_USER:  # root ignores permissions; sysfs refuses even root (EACCES/EPERM)
        if not Path("/sys/kernel").is_dir():
            pytest.skip("no sysfs here")
        out = "/sys/mqctl-demo-test"
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        out = str(ro / "demo")
    r = run_cli(["demo", "--out", out, "--hours", "0.1"])
    assert r.exit_code == 2, r.stderr
    one_error(r.stderr, "cannot write the demo directory")


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full here")
def test_stderr_that_cannot_be_written_still_gives_the_exit_code():
    code, out, err = child(["time", "yesterday"], shell_redirect="2>/dev/full")
    assert code == 2 and out == "" and err == ""  # (no traceback tried to reach stderr)
