"""Shared fixtures: sample paths, a CLI runner that goes through the real error boundary."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the recorded real RocketMQ 4.9.3/5.3.3 corpus, beside the checkout (as CI has it)
REAL_CORPUS = ROOT.parent / "shared" / "samples" / "real"


def _samples_dir() -> Path:
    env = os.environ.get("MQCTL_SAMPLES")
    if env:
        return Path(env)
    for cand in (ROOT / "tests" / "samples",):
        if cand.is_dir():
            return cand
    return ROOT / "tests" / "samples"


SAMPLES = _samples_dir()


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        import json

        return json.loads(self.stdout)


def run_cli(args: list[str], env: dict[str, str] | None = None,
            stdin: str | None = None) -> CliResult:
    """Run ``mqctl`` in-process through :func:`mqctl.cli.main` with captured streams."""
    import sys

    from mqctl.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_env = dict(os.environ)
    old_stdin = sys.stdin
    try:
        if env:
            os.environ.update(env)
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        sys.stdin = old_stdin
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


# the simulated cluster's fixtures (sim, sim_factory) live next to the sim's own tests
try:
    from sim_fixtures import *  # noqa: F403
except ImportError as _exc:  # pragma: no cover - only before the sim package exists
    if "sim_fixtures" not in str(_exc):
        raise


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """No test reads the developer's real ~/.config/mqctl or NAMESRV_ADDR."""
    cfg = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(cfg / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cfg / "cache"))
    for var in ("MQCTL_CONFIG", "MQCTL_PROFILE", "NAMESRV_ADDR", "MQCTL_NAMESRV",
                "MQCTL_OUTPUT", "MQCTL_TIMEOUT", "MQCTL_ACCESS_KEY", "MQCTL_SECRET_KEY",
                "MQCTL_SECURITY_TOKEN", "MQCTL_TLS", "MQCTL_TLS_CA", "MQCTL_TLS_INSECURE",
                "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
