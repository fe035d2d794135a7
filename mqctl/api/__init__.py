"""mqctl's Python API: the cluster the commands read and change, as objects (docs/api.md).

::

    from mqctl import Cluster

    with Cluster("127.0.0.1:9876") as c:
        for g in c.groups().groups:
            print(g.group, g.members, g.lag)

What is listed in ``__all__`` is public and kept stable within a minor version (mqctl is 0.x:
a change to it is named in CHANGELOG.md); everything else (modules, names starting with an
underscore, the capture internals) may change. Importing this package is light: no pyspark,
no Rich, no YAML; the requests and result types of the workflows load on first use.
"""

from typing import Any

from mqctl.allocate import workflow as allocate
from mqctl.api.cluster import (
    AsyncCluster,
    AsyncResetPlan,
    Cluster,
    ReleasePlan,
    ResetPlan,
    TopicTables,
    resolve_settings,
)
from mqctl.context import Context
from mqctl.errors import ExitCode, MqctlError, PartialFailure

__all__ = ["AllocateRequest", "AllocationOutcome", "AsyncCluster", "AsyncResetPlan", "Cluster",
           "Context", "ExitCode", "FindRequest", "MqctlError", "PartialFailure",
           "ReleaseOutcome",
           "ReleasePlan", "ReleaseRequest", "ResetOutcome", "ResetPlan", "ResetRequest",
           "SnapshotOutcome", "SnapshotRequest", "TopicTables", "resolve_settings"]


def __getattr__(name: str) -> Any:
    """The workflows' requests and outcomes, loaded on first use."""
    if name in ("AllocateRequest", "AllocationOutcome"):

        return getattr(allocate, name)
    if name in ("SnapshotRequest", "SnapshotOutcome"):
        from mqctl import snapshot

        return getattr(snapshot, name)
    if name in ("ResetRequest", "ResetOutcome"):
        from mqctl.reset import workflow as reset

        return getattr(reset, name)
    if name == "FindRequest":
        from mqctl.message import find

        return find.FindRequest
    if name in ("ReleaseRequest", "ReleaseOutcome"):
        from mqctl.locks import release

        return getattr(release, name)
    raise AttributeError(f"module 'mqctl.api' has no attribute {name!r}")
