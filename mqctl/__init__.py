"""mqctl: an operations toolkit for Apache RocketMQ consumer groups.

The library comes first; the CLI (:mod:`mqctl.cli`) is one caller of it, and
:mod:`mqctl.api` is its public face (``from mqctl import Cluster``, docs/api.md). Importing
this package is cheap: the API and every submodule are imported on first use.
"""

from typing import Any

from mqctl.about import __version__

# the public API, loaded on first use (``import mqctl`` stays as light as ``mqctl --help``)
_API = ("AsyncCluster", "Cluster", "Context", "ExitCode", "MqctlError", "PartialFailure")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        import mqctl.api

        return getattr(mqctl.api, name)
    raise AttributeError(f"module 'mqctl' has no attribute {name!r}")
