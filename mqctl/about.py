"""mqctl's version: the base every layer may import (``mqctl.__version__`` is this one)."""

__version__ = "0.1.0"
