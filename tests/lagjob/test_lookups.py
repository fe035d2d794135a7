"""`lookups.install`: PySpark's Java class and static-method look-ups answered once per name,
with the same results (docs/lag-performance.md, "Fifteenth pass")."""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.spark


@contextmanager
def _commands():
    """Count the Py4J commands sent meanwhile by kind (``r u``: a class or package look-up,
    ``r m``: a member look-up, ``c``: a call)."""
    from py4j import java_gateway

    seen: Counter[str] = Counter()
    send = java_gateway.GatewayClient.send_command

    def counted(self, command, *args, **kwargs):
        parts = command.split("\n")
        seen[" ".join(parts[:2]) if parts[0] == "r" else parts[0]] += 1
        return send(self, command, *args, **kwargs)

    java_gateway.GatewayClient.send_command = counted
    try:
        yield seen
    finally:
        java_gateway.GatewayClient.send_command = send


def test_functions_are_looked_up_once_and_give_the_same_plans(spark):
    from pyspark import SparkContext
    from pyspark.sql import functions as F

    from mqctl.lagjob import lookups

    df = spark.createDataFrame([(1, "a"), (2, None), (3, "c")], "n long, s string")

    def build():
        return df.select((F.col("n") * F.lit(10)).alias("x"),
                         F.when(F.col("s").isNull(), F.lit("-")).otherwise(F.upper("s")).alias("y"),
                         F.coalesce(F.col("s"), F.lit("?")).alias("z"))

    was, was_session = SparkContext._jvm, spark._jvm
    plain = was._mqctl_of if isinstance(was, lookups.CachedView) else was  # (a report's)
    try:
        SparkContext._jvm = spark._jvm = plain
        build()  # (anything PySpark does once per session is done)
        with _commands() as before:
            want = build()
        assert before["r u"] >= 8 and before["r m"] >= 8  # (the measure can fail)

        lookups.install(spark)
        lookups.install(spark)  # (twice: one view)
        view = SparkContext._jvm
        assert isinstance(view, lookups.CachedView) and view._mqctl_of is plain
        assert view._id == plain._id  # the same JVM-side view: its imports
        build()  # (the first build asks, once per name)
        with _commands() as after:
            got = build()
        assert after["r u"] == 0 and after["r m"] == 0
        assert after["c"] == before["c"]  # the same calls, without the look-ups
        assert got.collect() == want.collect() == [(10, "A", "a"), (20, "-", "?"), (30, "C", "c")]
        assert got.schema == want.schema
        assert spark._jvm is view  # (the session's own reference too)
    finally:
        SparkContext._jvm, spark._jvm = was, was_session


def test_what_is_kept_and_what_is_asked_again(spark):
    from py4j.java_gateway import JavaPackage
    from pyspark import SparkContext

    from mqctl.lagjob import lookups

    plain = SparkContext._jvm
    if isinstance(plain, lookups.CachedView):
        plain = plain._mqctl_of
    view = lookups.CachedView(plain)
    # a class by its full name, through packages, and by an imported short name: kept
    system = getattr(view, "java.lang.System")
    assert isinstance(system, lookups.CachedClass)
    assert getattr(view, "java.lang.System") is system
    assert view.java.lang.System is system  # (the same name through the packages)
    assert view.PythonUtils is view.PythonUtils  # (org.apache.spark.api.python.*)
    # a static method: one member for every overload, each call runs
    assert system.currentTimeMillis is system.currentTimeMillis
    first = system.nanoTime()
    assert system.nanoTime() > first
    assert getattr(view, "java.lang.Integer").toString(255, 16) == "ff"
    assert getattr(view, "java.lang.Integer").toString(7) == "7"
    # a static field's value is read each time, never kept
    integer = getattr(view, "java.lang.Integer")
    assert integer.MAX_VALUE == 2**31 - 1
    assert "MAX_VALUE" not in integer._mqctl_members
    # a nested class is a class of its own, kept
    entry = getattr(view, "java.util.AbstractMap").SimpleEntry
    assert isinstance(entry, lookups.CachedClass)
    assert entry._fqn == "java.util.AbstractMap$SimpleEntry"
    assert entry("k", "v").getValue() == "v"  # (its constructor)
    # a name the JVM answers as a package is not kept (an import could make it a class)
    pkg = view.no_such_package_of_mqctl
    assert isinstance(pkg, JavaPackage)
    assert "no_such_package_of_mqctl" not in view._mqctl_classes
    with pytest.raises(Exception, match="does not exist"):
        getattr(view, "java.lang.Integer").noSuchMemberOfMqctl  # noqa: B018
