"""``mqctl lag report``: a Spark job over broker exports, mqadmin captures, snapshots and logs.

It computes offset lag and time lag per capture, group, topic, broker and queue, a Burrow-style
status per group over a window of captures, and the rebalance history (events, queue moves,
storms, unowned intervals, lock takeovers), and writes date-partitioned Parquet datasets, CSV
and JSON summaries, a self-contained HTML report and a Prometheus textfile.

Library use (``mqctl demo`` does this)::

    from mqctl.lagjob import run_report
    res = run_report(["snapshots/"], "out/", spark=existing_session, fail_on=["lag>1000"])

Importing this package does not import pyspark; the Spark modules (``readers``,
``transforms``, ``schemas``, ``session``) load when a report runs.
"""

from __future__ import annotations

from mqctl.lagjob.job import ReportResult, result_view, run_report
from mqctl.lagjob.thresholds import Breach, Threshold, parse_threshold

__all__ = ["Breach", "ReportResult", "Threshold", "parse_threshold", "result_view",
           "run_report"]
