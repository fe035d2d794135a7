"""The small datasets' writes (writers.write_partitioned): one file per date either way; a
dataset of few rows is written by one task, in one Spark job (no shuffle by date first)."""

from __future__ import annotations

from pathlib import Path

from mqctl.lagjob.writers import ONE_TASK_ROWS, write_partitioned

DATES = ["2024-06-01", "2024-06-02", "2024-06-03"]


def _frame(spark):
    rows = [(i, DATES[i % 3]) for i in range(30)]
    return spark.createDataFrame(rows, "n long, date string")  # (2 partitions)


def _jobs(spark, group: str) -> int:
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def _write(spark, out: Path, group: str, rows: int | None) -> None:
    spark.sparkContext.setJobGroup(group, group)
    try:
        write_partitioned(spark, _frame(spark), str(out), DATES, DATES, one_file_per_date=True,
                          rows=rows)
    finally:
        spark.sparkContext.setJobGroup("other", "other")


def test_a_small_dataset_is_one_file_per_date_written_in_one_job(spark, tmp_path):
    _write(spark, tmp_path / "few", "test-writes:few", 30)
    _write(spark, tmp_path / "many", "test-writes:many", ONE_TASK_ROWS + 1)
    _write(spark, tmp_path / "unknown", "test-writes:unknown", None)
    for name in ("few", "many", "unknown"):
        for d in DATES:
            files = list((tmp_path / name / f"date={d}").glob("*.parquet"))
            assert len(files) == 1, (name, d, files)
        back = spark.read.parquet(str(tmp_path / name))
        assert sorted((r["n"], str(r["date"])) for r in back.collect()) == sorted(
            (i, DATES[i % 3]) for i in range(30))
    assert _jobs(spark, "test-writes:few") == 1
