"""`mqctl --help` must not import pyspark or other heavy modules (timing lives in bench/)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pyspark", "py4j", "plotly", "yaml", "tabulate", "asyncio", "mqctl.sim",
         "mqctl.lagjob", "mqctl.admin")

PROBE = """
import json, sys
from mqctl.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
sys.stdout.flush()
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def loaded_modules(args: list[str]) -> set[str]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                       timeout=60)
    return set(json.loads(r.stderr.strip().splitlines()[-1]))


def test_help_imports_nothing_heavy():
    mods = loaded_modules(["--help"])
    heavy = sorted(m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY
                   or any(m.startswith(h + ".") for h in HEAVY))
    assert heavy == []
    assert not any(m == "rich" or m.startswith("rich.") for m in mods)


def test_subcommand_help_imports_nothing_heavy():
    for group in (["wire", "--help"], ["config", "--help"]):
        mods = loaded_modules(group)
        assert not any(m.startswith(("pyspark", "mqctl.sim", "mqctl.lagjob")) for m in mods)


def test_import_mqctl_is_light():
    """The package's face (``import mqctl``, what ``from mqctl import ...`` runs) loads no other
    module of mqctl than its version's and nothing heavy: the public API it names is imported
    when used."""
    r = subprocess.run([sys.executable, "-c", "import json, sys, mqctl; "
                        "sys.stdout.write(json.dumps(sorted(sys.modules)))"],
                       capture_output=True, text=True, timeout=60)
    mods = set(json.loads(r.stdout))
    assert sorted(m for m in mods if m.startswith("mqctl")) == ["mqctl", "mqctl.about"]
    assert not any(m.split(".")[0] in HEAVY for m in mods)
API_PROBE = """
import json, sys
from mqctl import Cluster, AsyncCluster, Context
import mqctl.api
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def test_importing_the_api_imports_nothing_heavy():
    """``from mqctl import Cluster`` (the public API, docs/api.md): no Spark, no simulator, no
    Rich, YAML or tabulate; what a call needs is imported when it is made."""
    r = subprocess.run([sys.executable, "-c", API_PROBE], capture_output=True, text=True,
                       timeout=60)
    mods = set(json.loads(r.stderr.strip().splitlines()[-1]))
    assert "mqctl.api.cluster" in mods
    heavy = ("pyspark", "py4j", "plotly", "yaml", "tabulate", "rich", "mqctl.sim",
             "mqctl.lagjob", "mqctl.admin", "mqctl.views", "mqctl.reset")
    assert sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in heavy)) == []
