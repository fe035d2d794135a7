"""Session settings of the lag report: chosen from the input size, the
master, and never the user's --conf (no JVM is started here)."""

from __future__ import annotations

import pytest

from mqctl.lagjob.session import JVM_OPTS, default_conf, sized_settings

MB = 1024 * 1024


def test_shuffle_partitions_follow_the_input_size_within_the_cores():
    small = sized_settings(5 * MB, 2, local=True)
    big = sized_settings(100_000 * MB, 2, local=True)
    assert small["spark.sql.shuffle.partitions"] == "4"  # at least 2 per core
    assert big["spark.sql.shuffle.partitions"] == "8"  # at most 4 per core on one machine
    cluster = sized_settings(100_000 * MB, 16, local=False)
    assert cluster["spark.sql.shuffle.partitions"] == str(-(-100_000 // 128))


def test_a_local_master_lists_input_files_in_the_driver():
    # Spark lists more than 32 paths with a job of one task per path; on one machine the
    # driver lists them faster itself. A cluster keeps Spark's parallel listing.
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    assert int(sized_settings(MB, 2, local=True)[key]) >= 100_000
    assert key not in sized_settings(MB, 2, local=False)


def test_a_small_local_run_compiles_no_whole_stage_code():
    from mqctl.lagjob.session import SMALL_INPUT_BYTES

    key = "spark.sql.codegen.wholeStage"
    assert sized_settings(11 * MB, 2, local=True)[key] == "false"
    assert key not in sized_settings(SMALL_INPUT_BYTES, 2, local=True)
    assert key not in sized_settings(11 * MB, 2, local=False)


def test_a_small_local_run_skips_the_planner_work_a_few_thousand_rows_cannot_use():
    from mqctl.lagjob.session import SMALL_INPUT_BYTES

    for key in ("spark.sql.constraintPropagation.enabled",
                "spark.sql.adaptive.skewJoin.enabled"):
        assert sized_settings(11 * MB, 2, local=True)[key] == "false"  # the demo's data
        assert key not in sized_settings(SMALL_INPUT_BYTES, 2, local=True)
        assert key not in sized_settings(11 * MB, 2, local=False)


def test_a_run_over_a_few_thousand_rows_is_one_task_per_stage_without_adaptive_execution():
    from mqctl.lagjob.session import ONE_TASK_INPUT_BYTES

    below = sized_settings(ONE_TASK_INPUT_BYTES - 1, 2, local=True)
    assert below["spark.sql.shuffle.partitions"] == "1"
    assert below["spark.sql.adaptive.enabled"] == "false"
    at = sized_settings(ONE_TASK_INPUT_BYTES, 2, local=True)
    assert at["spark.sql.shuffle.partitions"] == "4" and at["spark.sql.adaptive.enabled"] == "true"
    cluster = sized_settings(MB, 16, local=False)  # (a cluster's executors are many)
    assert cluster["spark.sql.shuffle.partitions"] == "16"
    assert cluster["spark.sql.adaptive.enabled"] == "true"
    assert sized_settings(11 * MB, 2, local=True)["spark.sql.adaptive.enabled"] == "true"


def test_the_users_conf_wins_and_one_task_per_stage_goes_with_no_adaptive_execution():
    from mqctl.lagjob.session import ONE_TASK_INPUT_BYTES, run_settings_for

    tiny = ONE_TASK_INPUT_BYTES // 10
    assert run_settings_for(tiny, 2, True) == sized_settings(tiny, 2, True)
    # a user's partitions: adaptive execution as above the bound (it coalesces them)
    theirs = run_settings_for(tiny, 2, True, {"spark.sql.shuffle.partitions": "8"})
    assert "spark.sql.shuffle.partitions" not in theirs
    assert theirs["spark.sql.adaptive.enabled"] == "true"
    # a user's adaptive execution: the partitions as above the bound
    theirs = run_settings_for(tiny, 2, True, {"spark.sql.adaptive.enabled": "true"})
    assert "spark.sql.adaptive.enabled" not in theirs
    assert theirs["spark.sql.shuffle.partitions"] == "4"
    # any other key of theirs leaves the pair as the input's size makes it
    theirs = run_settings_for(tiny, 2, True, {"spark.sql.codegen.wholeStage": "true"})
    assert "spark.sql.codegen.wholeStage" not in theirs
    assert theirs["spark.sql.shuffle.partitions"] == "1"
    assert theirs["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"  # (the rest as before)


def test_a_small_local_run_evaluates_expressions_without_compiling_them():
    from mqctl.lagjob.session import TINY_INPUT_BYTES

    key = "spark.sql.codegen.factoryMode"
    assert sized_settings(11 * MB, 2, local=True)[key] == "NO_CODEGEN"  # the demo's data
    assert key not in sized_settings(TINY_INPUT_BYTES, 2, local=True)
    assert key not in sized_settings(65 * MB, 2, local=True)  # 100k snapshot rows
    assert key not in sized_settings(11 * MB, 2, local=False)


def test_huge_generated_methods_are_compiled_on_driver_and_executors():
    assert "-XX:-DontCompileHugeMethods" in JVM_OPTS
    assert default_conf("local[2]")["spark.executor.extraJavaOptions"] == JVM_OPTS
    assert default_conf("spark://127.0.0.1:7077")["spark.executor.extraJavaOptions"] == JVM_OPTS


def test_a_small_input_gets_the_quick_compiler_and_the_serial_collector():
    from mqctl.lagjob.session import SMALL_INPUT_BYTES, driver_java_options

    small = driver_java_options(11 * MB)  # the demo's snapshots and logs
    assert "-XX:TieredStopAtLevel=1" in small.split() and "-XX:+UseSerialGC" in small.split()
    assert "-XX:ReservedCodeCacheSize=256m" in small.split()  # C1 alone gets 48 MB
    assert "-XX:-DontCompileHugeMethods" in small.split()
    big = driver_java_options(660 * MB)  # 1M rows: C2 pays off (docs/lag-performance.md)
    assert big == JVM_OPTS and "TieredStopAtLevel" not in big
    assert driver_java_options(SMALL_INPUT_BYTES) == JVM_OPTS
    assert driver_java_options(SMALL_INPUT_BYTES - 1) == small


class _Started(Exception):
    pass


def _session_args(monkeypatch, tmp_path, submit=False, **kw):
    """What run_report hands to spark_session for a 1 KB snapshot input (the fake session
    stops the run there)."""
    import contextlib

    import mqctl.lagjob.session as S
    from mqctl.lagjob.job import run_report

    seen: dict = {}

    @contextlib.contextmanager
    def fake(master, *, conf=None, spark=None, java_opts=S.JVM_OPTS, **_):
        seen.update(master=master, conf=dict(conf or {}), java_opts=java_opts, spark=spark)
        raise _Started
        yield  # pragma: no cover

    monkeypatch.setattr(S, "spark_session", fake)
    if submit:  # under spark-submit: its JVM is already running, sized by its options
        monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    else:
        monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    inputs = kw.pop("inputs", None)
    if inputs is None:
        snap = tmp_path / "snap.jsonl"
        snap.write_text('{"capture_ts": 1717200000000}\n' * 20, encoding="utf-8")
        inputs = [str(snap)]
    try:
        run_report(inputs, str(tmp_path / "out"), **kw)
    except _Started:
        pass
    return seen


def test_run_report_sizes_only_a_driver_jvm_it_starts(monkeypatch, tmp_path):
    from mqctl.lagjob.session import SMALL_JVM_OPTS

    own = _session_args(monkeypatch, tmp_path, master="local[2]")
    assert own["java_opts"] == SMALL_JVM_OPTS and own["conf"]["spark.driver.memory"] == "1024m"
    # the user's JVM options could clash with ours (two collectors): theirs, plus only ours
    # that are always set
    theirs = _session_args(monkeypatch, tmp_path, master="local[2]", spark_conf={
        "spark.driver.extraJavaOptions": "-XX:+UseG1GC"})
    assert theirs["java_opts"] == JVM_OPTS
    assert theirs["conf"]["spark.driver.extraJavaOptions"] == "-XX:+UseG1GC"
    cluster = _session_args(monkeypatch, tmp_path, master="spark://127.0.0.1:7077")
    assert cluster["java_opts"] == JVM_OPTS and "spark.driver.memory" not in cluster["conf"]
    submit = _session_args(monkeypatch, tmp_path, submit=True, master=None)
    assert submit["java_opts"] == JVM_OPTS and "spark.driver.memory" not in submit["conf"]


def test_driver_memory_grows_with_the_input_up_to_half_the_machine():
    from mqctl.lagjob.session import driver_memory

    gb = 1024 * MB
    assert driver_memory(0, 24 * gb) == "1024m"  # Spark's own default for small inputs
    # the 10M-row bench input (6.6 GB of JSON) died at 1 GB and ran at 6 GB
    assert int(driver_memory(6_630_000_000, 24 * gb)[:-1]) > 6 * 1024
    assert driver_memory(100 * gb, 24 * gb) == "12288m"
    assert driver_memory(100 * gb, gb) == "1024m"  # never below Spark's default


class Py4JNetworkError(Exception):  # the name py4j gives a lost connection to the JVM
    pass


def test_out_of_memory_is_a_one_line_error_naming_the_step_and_what_was_written():
    from mqctl.errors import ExitCode
    from mqctl.lagjob.guards import spark_failure

    oom = RuntimeError("An error occurred while calling o123.localCheckpoint.\n"
                       ": org.apache.spark.SparkException: Job aborted due to stage failure: "
                       "java.lang.OutOfMemoryError: Java heap space")
    err = spark_failure(oom, "lag", {"lag": "/out/lag"})
    assert err is not None and err.exit_code == ExitCode.USAGE
    assert "Spark ran out of memory in the lag report's 'lag' step" in err.message
    assert "already written: lag" in err.message and "\n" not in err.message
    assert "spark.driver.memory" in (err.hint or "")
    for gone in (ConnectionRefusedError(111, "Connection refused"), Py4JNetworkError("x")):
        err = spark_failure(gone, "dedupe", {})
        assert err is not None and "JVM stopped" in err.message
        assert "already written: nothing" in err.message
    assert spark_failure(ValueError("a bug"), "lag", {}) is None
    assert spark_failure(OSError(28, "No space left on device"), "lag", {}) is None


def test_a_disk_filling_inside_spark_is_a_one_line_error_naming_the_step():
    """A JVM-side write (a Parquet file, a shuffle or checkpoint block) that finds the disk
    full reaches Python as a Py4J/Spark error whose text carries Java's IOException
    (environment problems are named, not called bugs)."""
    from mqctl.errors import ExitCode
    from mqctl.lagjob.guards import spark_failure

    for java in ("java.io.IOException: No space left on device",
                 "java.io.IOException: Disk quota exceeded"):
        exc = RuntimeError("An error occurred while calling o512.parquet.\n: "
                           "org.apache.spark.SparkException: Job aborted due to stage failure: "
                           f"Task 0 in stage 41.0 failed 1 times: {java}\n\tat java.base/...")
        err = spark_failure(exc, "write lag", {"group_status": "/out/group_status"})
        assert err is not None and err.exit_code == ExitCode.USAGE
        assert err.message == ("a disk filled up during the lag report's 'write lag' step; "
                               "already written: group_status (the rest was not)")
        assert "spark.local.dir" in (err.hint or "")


def test_gzip_inputs_are_sized_by_what_they_hold(tmp_path):
    """A capture compresses ~100-fold: sized at its size on disk (or 5x it), a 10M-row gzip
    input would get a small run's driver (and run out of memory)."""
    import gzip
    from types import SimpleNamespace

    from mqctl.lagjob.sizing import input_bytes as _input_bytes

    line = b'{"capture_ts": 1717200000000, "group": "GID_PAY", "topic": "TopicPay"}\n'
    raw = line * 40_000  # 2.9 MB
    gz = tmp_path / "capture.jsonl.gz"
    gz.write_bytes(gzip.compress(raw, compresslevel=6))
    plain = tmp_path / "capture.jsonl"
    plain.write_bytes(raw)
    junk = tmp_path / "broken.jsonl.gz"
    junk.write_bytes(b"\x1f\x8b" + b"\0" * 30)  # a trailer that says 0 bytes

    def listing(*paths, uri=False):
        files = [SimpleNamespace(path=(p.as_uri() if uri else str(p)), size=p.stat().st_size,
                                 ignored=None, unreadable=None) for p in paths]
        return SimpleNamespace(files=files)

    assert gz.stat().st_size * 20 < len(raw)
    assert _input_bytes(listing(gz)) == len(raw)  # the trailer's ISIZE
    assert _input_bytes(listing(gz, uri=True)) == len(raw)  # file: URIs are local too
    assert _input_bytes(listing(plain)) == len(raw)
    assert _input_bytes(listing(junk)) == 5 * junk.stat().st_size  # never below 5x
    remote = SimpleNamespace(files=[SimpleNamespace(path="hdfs://nn/x.jsonl.gz", size=1000,
                                                    ignored=None, unreadable=None)])
    assert _input_bytes(remote) == 5000  # not readable from here: 5x


def test_a_big_gzip_input_gets_a_big_runs_driver(monkeypatch, tmp_path):
    import gzip

    from mqctl.lagjob.session import SMALL_INPUT_BYTES

    raw = b'{"capture_ts": 1717200000000, "group": "GID_PAY"}\n' * (SMALL_INPUT_BYTES // 50 + 1)
    snap = tmp_path / "in" / "capture.jsonl.gz"
    snap.parent.mkdir()
    snap.write_bytes(gzip.compress(raw, compresslevel=1))
    seen = _session_args(monkeypatch, tmp_path, inputs=[str(snap)], master="local[2]")
    assert seen["java_opts"] == JVM_OPTS  # not the small run's quick compiler
    assert int(seen["conf"]["spark.driver.memory"][:-1]) >= 1024 + len(raw) // MB


def test_a_likely_bounded_re_run_sizes_its_compilers_by_the_files_it_parses(monkeypatch,
                                                                             tmp_path):
    """A cron re-run over a big history with a few new captures parses only the new files:
    its JVM gets the quick compiler (docs/lag-performance.md, "Fourteenth pass"), its memory
    still follows the whole input. Whatever makes a re-run compute everything (other options,
    another --out, pending dates, no derived state, --full, --since, a changed file, no lag
    dataset yet) sizes it by the whole input, as before."""
    import gzip
    import json
    import os

    from mqctl.lagjob.ingest import MANIFEST, Manifest
    from mqctl.lagjob.session import SMALL_INPUT_BYTES, SMALL_JVM_OPTS
    from mqctl.lagoptions import Options

    inp = tmp_path / "in"
    inp.mkdir()
    raw = b'{"capture_ts": 1717200000000, "group": "GID_PAY"}\n' * (SMALL_INPUT_BYTES // 50 + 1)
    old = inp / "old.jsonl.gz"
    old.write_bytes(gzip.compress(raw, compresslevel=1))
    new = inp / "new.jsonl"
    new.write_text('{"capture_ts": 1717200060000}\n' * 20, encoding="utf-8")
    out = tmp_path / "out"
    (out / "lag").mkdir(parents=True)
    (out / "_state").mkdir()

    def held(**kw):
        st = old.stat()
        man = Manifest(fingerprint=Options().fingerprint(), out=str(out), batches=[1],
                       files={str(old): {"size": st.st_size,
                                         "mtime_ms": int(st.st_mtime * 1000), "batch": 1}},
                       derived=[1])
        for k, v in kw.items():
            setattr(man, k, v)
        (out / "_state" / MANIFEST).write_text(man.to_json(), encoding="utf-8")

    said: list[str] = []

    def run(**kw):
        return _session_args(monkeypatch, tmp_path, inputs=[str(inp)], master="local[2]",
                             progress=said.append, **kw)

    held()
    seen = run()
    assert seen["java_opts"] == SMALL_JVM_OPTS
    assert int(seen["conf"]["spark.driver.memory"][:-1]) >= 1024 + len(raw) // MB
    assert any("likely bounded re-run" in m and "MB it parses" in m for m in said)
    assert run(full=True)["java_opts"] == JVM_OPTS
    assert run(since="2024-06-01")["java_opts"] == JVM_OPTS
    assert run(window=3)["java_opts"] == JVM_OPTS  # other options: everything again
    assert run(spark_conf={"spark.driver.extraJavaOptions": "-XX:+UseG1GC"})["java_opts"] \
        == JVM_OPTS  # (theirs)
    for changed in ({"pending": ["2024-06-01"]}, {"derived": []},
                    {"out": str(tmp_path / "elsewhere")}, {"fingerprint": "x"}):
        held(**changed)
        assert run()["java_opts"] == JVM_OPTS, changed
    held()
    os.utime(old, ns=(0, 0))  # the held file changed: parsed again
    assert run()["java_opts"] == JVM_OPTS
    held()
    (out / "lag").rmdir()
    assert run()["java_opts"] == JVM_OPTS
    (out / "lag").mkdir()
    (inp / "broker.log").write_text("2024-06-01 10:00:00 INFO x\n", encoding="utf-8")
    assert run()["java_opts"] == JVM_OPTS  # not snapshots only: lag is written whole
    (inp / "broker.log").unlink()
    (out / "_state" / MANIFEST).write_text(json.dumps({"version": -1}), encoding="utf-8")
    assert run()["java_opts"] == JVM_OPTS


def test_pyspark_call_sites_are_captured_only_under_debug():
    """PySpark 4 sends about ten Py4J calls per DataFrame call to record its call site; the
    report's sessions turn that off, ``--debug`` (traces) keeps it for the error context."""
    from mqctl.lagjob.session import PYSPARK_CALL_SITES

    assert default_conf("local[2]")[PYSPARK_CALL_SITES] == "false"
    assert default_conf("spark://127.0.0.1:7077")[PYSPARK_CALL_SITES] == "false"
    assert default_conf("local[2]", traces=True)[PYSPARK_CALL_SITES] == "true"
    utils = pytest.importorskip("pyspark.errors.utils")
    if hasattr(utils, "is_debugging_enabled"):  # (PySpark 4; 3.5 records no call sites)
        import inspect

        assert PYSPARK_CALL_SITES in inspect.getsource(utils.is_debugging_enabled)
