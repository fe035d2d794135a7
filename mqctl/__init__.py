"""mqctl: an operations toolkit for Apache RocketMQ consumer groups.

The library comes first; the CLI (:mod:`mqctl.cli`) is one caller of it. Importing this package
is cheap: submodules are imported on use.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
