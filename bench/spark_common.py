"""The Spark session of the lag benches: the settings of the CLI's own session
(:func:`mqctl.lagjob.session.default_conf` and its JVM options), a 6 GB driver, no UI, only
warnings in the log; ``conf`` adds or overrides settings (an event log, the shuffle's
partitions)."""

from __future__ import annotations

import os
import sys
from typing import Any


def bench_session(app: str, master: str = "local[2]", driver_memory: str = "6g",
                  conf: dict[str, str] | None = None) -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from mqctl.lagjob.session import JVM_OPTS, default_conf

    settings = {**default_conf(master), "spark.driver.memory": driver_memory,
                "spark.driver.extraJavaOptions": JVM_OPTS,  # (as the CLI's session)
                "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                "spark.driver.bindAddress": "127.0.0.1", "spark.log.level": "WARN",
                **(conf or {})}
    builder = SparkSession.builder.master(master).appName(app)
    for k, v in settings.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()
