"""Session settings of the lag report (issue 16 item 4): chosen from the input size, the
master, and never the user's --conf (pure: no JVM)."""

from __future__ import annotations

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


def test_huge_generated_methods_are_compiled_on_driver_and_executors():
    assert "-XX:-DontCompileHugeMethods" in JVM_OPTS
    assert default_conf("local[2]")["spark.executor.extraJavaOptions"] == JVM_OPTS
    assert default_conf("spark://127.0.0.1:7077")["spark.executor.extraJavaOptions"] == JVM_OPTS
