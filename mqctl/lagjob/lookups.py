"""PySpark's Java class and static-method look-ups, answered once per name.

Every ``F.col``, ``F.lit``, ``F.when`` ... that builds a report's plans resolves its Java
function through Py4J before calling it: ``getattr(sc._jvm, "org.apache.spark.sql.functions")``
asks the JVM whether the name is a class (``r u``: a reflection command, a class-loader search,
a miss through each of Spark's 280 jars for a short name such as ``functions``), then
``.col`` asks whether that class has such a member (``r m``), and only then is the function
called (``c z:``). py4j's ``JVMView``, ``JavaPackage`` and ``JavaClass`` keep no answer, so the
demo's warm report made 4,343 class and 4,202 member look-ups for 4,202 static calls: 1.7 s of
Py4J round trips in a 35 s run (docs/lag-performance.md, "Fifteenth pass"; measured by
counting ``GatewayClient.send_command`` by command).

A class name always names the same class in one JVM, and a class's static method by a name is
the same ``JavaMember`` (py4j resolves the overload from the arguments at each call), so both
answers can be kept for the life of the JVM. What is not kept: a name the JVM answered as a
package (a later ``java_import`` could make it a class), and a static field's value (it is
read each time, as before).

:func:`install` replaces ``SparkContext._jvm`` (and the session's copy of it) with a
:class:`CachedView` of the same JVM-side view: same id, same imports, same gateway. A JVM
started later in the process gets a fresh ``JVMView`` from PySpark; ``install`` wraps that one
in its turn.
"""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView
from py4j.java_gateway import is_magic_member as _magic  # (``__x__``: Python's, not Java's)


class CachedClass(JavaClass):
    """A :class:`JavaClass` that keeps its static methods and nested classes by name."""

    def __init__(self, fqn: str, gateway_client: Any) -> None:
        super().__init__(fqn, gateway_client)
        self._mqctl_members: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        members = self.__dict__.get("_mqctl_members")
        if members is None or _magic(name):  # (during __init__, or Python's own: as py4j)
            return JavaClass.__getattr__(self, name)
        hit = members.get(name)
        if hit is not None:
            return hit
        value = JavaClass.__getattr__(self, name)
        if isinstance(value, JavaClass):  # a nested class
            value = members[name] = CachedClass(value._fqn, self._gateway_client)
        elif isinstance(value, JavaMember):  # a static method (every overload)
            members[name] = value
        return value  # a static field's value: read again next time


class CachedPackage(JavaPackage):
    """A :class:`JavaPackage` whose classes come from (and go to) its view's names."""

    def __init__(self, fqn: str, gateway_client: Any, jvm_id: str | None,
                 classes: dict[str, CachedClass]) -> None:
        super().__init__(fqn, gateway_client, jvm_id)
        self._mqctl_classes = classes

    def __getattr__(self, name: str) -> Any:
        classes = self.__dict__.get("_mqctl_classes")
        if classes is None or _magic(name):
            return JavaPackage.__getattr__(self, name)
        return _resolve(classes, self._fqn + "." + name,
                        lambda: JavaPackage.__getattr__(self, name), self._jvm_id)


class CachedView(JVMView):
    """A :class:`JVMView` over the same JVM-side view as ``view`` that keeps the classes it
    resolved, by the name they were asked by (``functions``, ``org.apache.spark.sql.functions``)."""

    def __init__(self, view: JVMView) -> None:  # (JVMView's would make a new view)
        # the same view: its id (and so its imports on the JVM side), client and name
        self.__dict__.update(view.__dict__)
        self._mqctl_classes: dict[str, CachedClass] = {}
        self._mqctl_of = view

    def __getattr__(self, name: str) -> Any:
        classes = self.__dict__.get("_mqctl_classes")
        if classes is None or _magic(name):
            return JVMView.__getattr__(self, name)
        return _resolve(classes, name, lambda: JVMView.__getattr__(self, name), self._id)


def _resolve(classes: dict[str, CachedClass], key: str, ask: Any, jvm_id: str) -> Any:
    hit = classes.get(key)
    if hit is not None:
        return hit
    value = ask()
    if isinstance(value, JavaClass):
        value = classes[key] = CachedClass(value._fqn, value._gateway_client)
    elif isinstance(value, JavaPackage):  # not kept: see the module's docstring
        value = CachedPackage(value._fqn, value._gateway_client, jvm_id, classes)
    return value


def install(spark: Any) -> None:
    """Let PySpark's look-ups through ``spark``'s JVM view be answered once per name (a no-op
    when they already are, or without a JVM view)."""
    from pyspark import SparkContext

    view = SparkContext._jvm
    if view is None:
        return
    if not isinstance(view, CachedView):
        view = CachedView(view)
        SparkContext._jvm = view
    for holder in (spark, getattr(spark, "sparkContext", None)):
        # the session keeps its own reference (``SparkSession._jvm``), as may the context
        if holder is not None and "_jvm" in getattr(holder, "__dict__", {}) \
                and holder.__dict__["_jvm"] is not view:
            holder._jvm = view
