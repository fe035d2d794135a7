"""The driver JVM's class archive (mqctl/lagjob/classcache.py): which options a JVM start
gets, when the archive is written and moved into place, what is cleaned up; and, with a real
JVM, that a second start maps the classes the first one wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqctl.lagjob import classcache as C

PY = sys.executable
# the start of a dynamic archive as HotSpot writes it on this machine (little-endian)
ARCHIVE = C.DYNAMIC_MAGIC.to_bytes(4, "little") + b"rest of the archive"


def fake_install(tmp: Path) -> dict[str, str]:
    """A Java installation and a Spark jars directory, as the environment names them."""
    java = tmp / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    (tmp / "jdk" / "lib").mkdir()
    (tmp / "jdk" / "lib" / "modules").write_bytes(b"m" * 10)
    jars = tmp / "spark" / "jars"
    jars.mkdir(parents=True)
    for name in ("spark-core.jar", "spark-sql.jar"):
        (jars / name).write_bytes(b"j" * 100)
    return {"JAVA_HOME": str(tmp / "jdk"), "SPARK_HOME": str(tmp / "spark"),
            "PATH": "/nonexistent", C.ENV: str(tmp / "cache")}


def test_off_and_the_users_own_sharing_options_get_nothing(tmp_path):
    env = fake_install(tmp_path)
    for off in ("off", "OFF", "0", "no", "false"):
        assert C.plan("", {**env, C.ENV: off}) == C.Plan()
    for theirs in ("-Xshare:off", "-XX:SharedArchiveFile=/x.jsa", "-XX:ArchiveClassesAtExit=/y"):
        assert C.plan(f"-Xmx1g {theirs}", env) == C.Plan()
    assert not (tmp_path / "cache").exists()  # (nothing made either)


def test_without_java_or_spark_jars_there_is_no_key(tmp_path):
    env = fake_install(tmp_path)
    assert C.key(env) is not None
    assert C.key({**env, "JAVA_HOME": str(tmp_path / "none"), "PATH": "/nonexistent"}) is None
    assert C.key({**env, "SPARK_HOME": str(tmp_path / "none")}) is None
    assert C.plan("", {**env, "SPARK_HOME": str(tmp_path / "none")}) == C.Plan()


def test_the_key_follows_the_java_and_every_jar(tmp_path):
    env = fake_install(tmp_path)
    k0 = C.key(env)
    assert k0 == C.key(env) and len(k0 or "") == 16
    jar = tmp_path / "spark" / "jars" / "spark-sql.jar"
    jar.write_bytes(b"j" * 101)  # an upgraded jar
    k1 = C.key(env)
    (tmp_path / "spark" / "jars" / "extra.jar").write_bytes(b"x")  # one more jar
    k2 = C.key(env)
    os.utime(tmp_path / "jdk" / "lib" / "modules", ns=(1, 1))  # another JDK build
    k3 = C.key(env)
    assert len({k0, k1, k2, k3}) == 4


def test_a_first_start_writes_at_exit_and_a_later_one_maps(tmp_path):
    env = fake_install(tmp_path)
    first = C.plan("-XX:TieredStopAtLevel=1", env)
    cache = tmp_path / "cache"
    assert cache.is_dir() and (cache.stat().st_mode & 0o777) == 0o700
    assert first.writing is not None and first.archive is not None
    assert first.writing.parent == cache and first.writing.name.endswith(".part")
    assert first.archive == cache / f"spark-{C.key(env)}.jsa"
    assert first.options.split() == [f"-XX:ArchiveClassesAtExit={first.writing}",
                                     "-Xlog:cds*=off"]
    first.archive.write_bytes(ARCHIVE)
    later = C.plan("", env)
    assert later.writing is None and later.archive == first.archive
    assert later.options.split() == [f"-XX:SharedArchiveFile={first.archive}",
                                     "-Xlog:cds*=off"]
    for not_one in (b"", b"classes", b"\0" * 64):  # an empty file, another file: no archive
        first.archive.write_bytes(not_one)
        assert C.plan("", env).writing is not None


def test_a_linked_archive_is_not_mapped_and_a_path_with_spaces_is_quoted(tmp_path):
    env = fake_install(tmp_path)
    elsewhere = tmp_path / "elsewhere.jsa"
    elsewhere.write_bytes(ARCHIVE)
    p = C.plan("", env)
    assert p.archive is not None
    p.archive.symlink_to(elsewhere)
    assert C.plan("", env).writing is not None  # (the link is never read)
    spaced = {**env, C.ENV: str(tmp_path / "a cache")}
    q = C.plan("", spaced)
    assert q.options.startswith(f'"-XX:ArchiveClassesAtExit={q.writing}" ')


def test_a_cache_that_is_a_file_or_a_link_is_not_used(tmp_path):
    env = fake_install(tmp_path)
    (tmp_path / "file").write_text("x")
    assert C.plan("", {**env, C.ENV: str(tmp_path / "file")}) == C.Plan()
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert C.plan("", {**env, C.ENV: str(tmp_path / "link")}) == C.Plan()


def test_the_default_place_is_the_users_cache(tmp_path):
    assert C.archive_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "mqctl" / "jvm"
    assert C.archive_dir({}) == Path.home() / ".cache" / "mqctl" / "jvm"
    assert C.archive_dir({C.ENV: "off"}) is None


# a stand-in JVM: on end of input (PySpark's gateway server exits then) it writes the archive
# (argv[2]: what it writes, as hex; argv[3]: its exit code)
WRITER = ("import sys, time; sys.stdin.read(); time.sleep(0.3); "
          "open(sys.argv[1], 'wb').write(bytes.fromhex(sys.argv[2])); sys.exit(int(sys.argv[3]))")


def test_finish_ends_the_jvm_waits_for_the_archive_and_moves_it_in(tmp_path):
    env = fake_install(tmp_path)
    p = C.plan("", env)
    assert p.writing is not None and p.archive is not None
    said: list[str] = []
    proc = subprocess.Popen([PY, "-c", WRITER, str(p.writing), ARCHIVE.hex(), "0"],
                            stdin=subprocess.PIPE)
    assert C.finish(p, proc, said.append)
    assert proc.returncode == 0
    assert p.archive.read_bytes() == ARCHIVE and not p.writing.exists()
    assert said and str(p.archive) in said[0]
    assert C.plan("", env).writing is None  # mapped from now on


@pytest.mark.parametrize(("written", "code"), [(None, 0), (b"truncated", 0), (ARCHIVE, 1)])
def test_finish_without_a_whole_archive_moves_nothing(tmp_path, written, code):
    """Nothing written, a file that is no archive (cut short), or a JVM that did not exit
    cleanly: nothing is moved in, the partial file is removed, the next start writes again."""
    env = fake_install(tmp_path)
    p = C.plan("", env)
    assert p.writing is not None
    if written is None:
        proc = subprocess.Popen([PY, "-c", "import sys; sys.stdin.read()"],
                                stdin=subprocess.PIPE)
    else:
        proc = subprocess.Popen([PY, "-c", WRITER, str(p.writing), written.hex(), str(code)],
                                stdin=subprocess.PIPE)
    assert not C.finish(p, proc)
    assert p.archive is not None and not p.archive.exists() and not p.writing.exists()
    assert C.plan("", env).writing is not None
    assert not C.finish(C.Plan(), proc)  # (a plan that writes nothing: nothing to do)


def test_abandon_stops_the_jvm_before_it_writes(tmp_path):
    env = fake_install(tmp_path)
    p = C.plan("", env)
    assert p.writing is not None
    p.writing.write_bytes(b"begun")  # (as if it had begun)
    proc = subprocess.Popen([PY, "-c", WRITER, str(p.writing), ARCHIVE.hex(), "0"],
                            stdin=subprocess.PIPE)
    C.abandon(p, proc)
    assert proc.returncode is not None and proc.returncode != 0  # killed, not ended
    time.sleep(0.5)
    assert not p.writing.exists() and p.archive is not None and not p.archive.exists()


def test_a_start_that_maps_removes_what_dead_runs_left(tmp_path):
    env = fake_install(tmp_path)
    p = C.plan("", env)
    assert p.archive is not None and p.writing is not None
    p.archive.write_bytes(ARCHIVE)
    p.writing.write_bytes(b"left by a run that died")
    old = time.time() - C.STALE_S - 60
    os.utime(p.writing, (old, old))
    assert C.plan("", env).writing is None
    assert p.archive.exists() and not p.writing.exists()


def test_tidy_removes_other_archives_and_old_partial_files_only(tmp_path):
    a, b, c = "a" * 16, "b" * 16, "0123456789abcdef"
    keep = tmp_path / f"spark-{a}.jsa"
    keep.write_bytes(b"k")
    other = tmp_path / f"spark-{b}.jsa"  # another Java or Spark: superseded
    other.write_bytes(b"o")
    fresh = tmp_path / f"spark-{a}.jsa.123.9.part"  # a run may be writing it
    fresh.write_bytes(b"f")
    stale = tmp_path / f"spark-{c}.jsa.456.9.part"
    stale.write_bytes(b"s")
    old = time.time() - C.STALE_S - 60
    os.utime(stale, (old, old))
    # not names mqctl gives, however old: a directory shared with other files stays as it is
    unrelated = [tmp_path / n for n in ("notes.txt", "spark-mine.jsa", f"spark-{b}.jsa.bak",
                                        "spark-x.jsa.1.2.part")]
    for f in unrelated:
        f.write_text("x")
        os.utime(f, (old, old))
    gone = C.tidy(keep)
    assert sorted(gone) == sorted([other, stale])
    assert keep.exists() and fresh.exists() and all(f.exists() for f in unrelated)
    assert not other.exists() and not stale.exists()


# ---- a real JVM ---------------------------------------------------------------------------

SESSION = '''
import sys
from mqctl.lagjob.session import spark_session
opts = sys.argv[1]
conf = {"spark.ui.enabled": "false"}
if opts:
    conf["spark.driver.extraJavaOptions"] = opts
with spark_session("local[1]", conf=conf, java_opts="-XX:TieredStopAtLevel=1",
                   say=lambda m: print(m, flush=True)) as h:
    assert h.spark.range(100).selectExpr("sum(id)").collect()[0][0] == 4950
    if len(sys.argv) > 2:
        raise SystemExit(sys.argv[2])  # a run that fails
'''


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_a_second_jvm_maps_the_classes_the_first_one_wrote(tmp_path):
    """`spark_session` starts in fresh processes: one that fails writes nothing; the next
    writes the archive as its JVM exits and moves it in; the one after maps Spark's classes
    from it (HotSpot's class-load log names the archive as their source)."""
    base = subprocess.run(["java", "-Xshare:on", "-version"], capture_output=True, text=True,
                          timeout=60)
    if base.returncode != 0:  # (a JDK built without its base archive writes no dynamic one)
        pytest.skip(f"this JDK has no base class-data archive: {base.stderr.strip()[:200]}")
    cache = tmp_path / "cache"
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", **{C.ENV: str(cache)})
    env.pop("PYSPARK_GATEWAY_PORT", None)
    r0 = subprocess.run([PY, "-c", SESSION, "", "the run failed"], capture_output=True,
                        text=True, timeout=300, env=env)
    assert r0.returncode == 1 and "the run failed" in r0.stderr, r0.stderr[-3000:]
    time.sleep(1)  # (a JVM left running would be writing now)
    assert list(cache.iterdir()) == [] and "saving" not in r0.stdout
    r1 = subprocess.run([PY, "-c", SESSION, ""], capture_output=True, text=True, timeout=300,
                        env=env)
    assert r1.returncode == 0, r1.stderr[-3000:]
    archives = list(cache.glob("spark-*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 1_000_000, list(cache.iterdir())
    assert not list(cache.glob("*.part"))
    assert "saving the JVM's loaded classes" in r1.stdout
    log = tmp_path / "classes.log"
    r2 = subprocess.run([PY, "-c", SESSION, f"-Xlog:class+load=info:file={log}"],
                        capture_output=True, text=True, timeout=300, env=env)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert "saving" not in r2.stdout  # (mapped, not written again)
    spark_lines = [ln for ln in log.read_text().splitlines() if " org.apache.spark." in ln]
    shared = [ln for ln in spark_lines if "shared objects file (top)" in ln]
    assert spark_lines and len(shared) > len(spark_lines) // 2, spark_lines[:5]
