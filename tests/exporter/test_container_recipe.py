"""docs/exporter.md's Dockerfile: built from a wheel of this checkout and run (its
``--help``) where a container engine answers; skipped with the reason elsewhere. Its
ENTRYPOINT is an exporter command line mqctl accepts either way."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


def dockerfile() -> str:
    text = (ROOT / "docs" / "exporter.md").read_text(encoding="utf-8")
    m = re.search(r"```dockerfile\n(.*?)```", text, re.S)
    assert m, "docs/exporter.md has no dockerfile block"
    return m.group(1)


def test_the_entrypoint_is_a_command_line_mqctl_accepts(cli):
    m = re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile(), re.M)
    assert m
    argv = json.loads(m.group(1))
    assert argv[:2] == ["mqctl", "exporter"]
    assert cli([*argv[1:], "--help"]).exit_code == 0
    assert "systemd" in (ROOT / "docs" / "exporter.md").read_text() and "ExecReload" in (
        ROOT / "docs" / "exporter.md").read_text()


def _engine() -> str:
    for name in ("docker", "podman"):
        path = shutil.which(name)
        if path and subprocess.run([path, "info"], capture_output=True,
                                   timeout=30).returncode == 0:
            return path
    pytest.skip("no container engine answers here (docker/podman missing or its daemon not "
                "running): the Dockerfile is built where one does")


@pytest.mark.timeout(2400)  # a wheel, an image build and a run (the global timeout: 300 s)
def test_the_dockerfile_builds_from_the_wheel_and_runs(tmp_path):
    engine = _engine()
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist),
                    str(ROOT)], check=True, capture_output=True, timeout=600)
    (tmp_path / "Dockerfile").write_text(dockerfile())
    tag = "mqctl-exporter-test"
    subprocess.run([engine, "build", "-t", tag, str(tmp_path)], check=True, timeout=1200)
    r = subprocess.run([engine, "run", "--rm", "--entrypoint", "mqctl", tag, "exporter",
                        "--help"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "--listen" in r.stdout, shlex.join(r.args)
