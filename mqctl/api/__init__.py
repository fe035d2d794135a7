"""mqctl's Python API: the cluster the commands read and change, as objects (docs/api.md).

::

    from mqctl import Cluster

    with Cluster("127.0.0.1:9876") as c:
        for g in c.groups().groups:
            print(g.group, g.state, g.lag)

What is listed in ``__all__`` is public and kept stable within a minor version (mqctl is 0.x:
a change to it is named in CHANGELOG.md); everything else (modules, names starting with an
underscore, the capture internals) may change. Importing this package is light: no pyspark,
no Rich, no YAML.
"""

from mqctl.api.cluster import AsyncCluster, Cluster, TopicTables, resolve_settings
from mqctl.context import Context
from mqctl.errors import ExitCode, MqctlError, PartialFailure

__all__ = ["AsyncCluster", "Cluster", "Context", "ExitCode", "MqctlError", "PartialFailure",
           "TopicTables", "resolve_settings"]
