"""Lock tests never touch the developer's cache directory."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_real_cache(tmp_path_factory, monkeypatch):
    """No lock test writes the developer's ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
