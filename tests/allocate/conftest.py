"""Fixtures for the allocate tests: throwaway plugin distributions and a clean registry."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STICKY_SRC = ROOT / "plugins" / "mqctl-sticky" / "src"


@pytest.fixture
def fresh_registry():
    """The global registry with no plugin loaded yet; restored afterwards."""
    from mqctl.allocate.registry import registry

    saved = (dict(registry._entries), list(registry.problems), registry._plugins_loaded)
    for name in [n for n, e in registry._entries.items() if e.info.origin != "builtin"]:
        del registry._entries[name]
    registry.problems.clear()
    registry._plugins_loaded = False
    yield registry
    registry._entries.clear()
    registry._entries.update(saved[0])
    registry.problems[:] = saved[1]
    registry._plugins_loaded = saved[2]


@pytest.fixture
def make_dist(tmp_path, monkeypatch):
    """``make_dist(name, version, entry_points={ep: "module:attr"}, modules={mod: source})``
    writes a real (unpacked) distribution with a ``.dist-info`` directory on ``sys.path``."""

    def make(name: str, version: str, entry_points: dict[str, str],
             modules: dict[str, str]) -> Path:
        root = tmp_path / f"site-{name}"
        root.mkdir()
        for mod, src in modules.items():
            (root / f"{mod}.py").write_text(textwrap.dedent(src), encoding="utf-8")
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
        eps = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
        (info / "entry_points.txt").write_text(f"[mqctl.strategies]\n{eps}\n", encoding="utf-8")
        monkeypatch.syspath_prepend(str(root))
        for mod in modules:
            sys.modules.pop(mod, None)
        return root

    return make


@pytest.fixture
def sticky_cls():
    """The sticky plugin's class, from the installed distribution or the source tree."""
    try:
        from mqctl_sticky import StickyStrategy
    except ImportError:
        sys.path.insert(0, str(STICKY_SRC))
        from mqctl_sticky import StickyStrategy
    return StickyStrategy


@pytest.fixture
def sticky_registered(fresh_registry, sticky_cls):
    """``sticky`` in the registry whether or not ``./dev`` installed the plugin."""
    fresh_registry.load_plugins()
    if "sticky" not in fresh_registry.names():
        fresh_registry.register(sticky_cls, origin="mqctl-sticky", version="0.1.0")
    return fresh_registry
