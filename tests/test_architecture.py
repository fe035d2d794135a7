"""The import graph of ``mqctl/`` keeps the shape docs/architecture.md describes.

An AST walk over every module (nothing is imported) collects each ``import mqctl...`` and
``from mqctl... import ...`` with where it runs:

* ``module``: at import time (the module's body, a class body, a module-level ``if``/``try``);
* ``function``: inside a function, so when it is called (still a runtime dependency);
* ``type``: under ``if TYPE_CHECKING:``, never at run time.

Then: no circle through ``module`` and ``function`` imports, none through ``type`` imports
either (reported apart), and no import against the layers below. The rules are data here and
prose in docs/architecture.md ("Who may import whom"): change both together. Known exceptions
are the explicit, commented ``TODO_EDGES``: each is work still to do, and the test fails once
one is no longer needed, so that the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_startup import HEAVY

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mqctl"
DOC = ROOT / "docs" / "architecture.md"

# Layers, top to bottom: a module may import its own layer and the layers below it, never one
# above. A module's layer is given by the longest prefix (a module or a package) that names it,
# so a package can lend a module to a lower layer: the rules the read views share (the lock
# classification that `group progress` shows, the allocation strategies it predicts owners
# with) sit with the views, below the commands' own workflows in the same packages.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("entry", ("mqctl.__main__", "mqctl.cli")),
    ("app", ("mqctl.complete", "mqctl.demo", "mqctl.sim")),
    # the public Python API that the CLI wraps (whichever of these names it takes)
    ("api", ("mqctl.api", "mqctl.cluster")),
    ("export", ("mqctl.exporter", "mqctl.laghealth", "mqctl.lagjob", "mqctl.lagmetrics",
                "mqctl.lagoptions",
                "mqctl.lagstatus", "mqctl.snapshot")),
    ("domain", ("mqctl.allocate", "mqctl.diagnose", "mqctl.levers", "mqctl.locks",
                "mqctl.message", "mqctl.reset")),
    ("views", ("mqctl.tcpdump", "mqctl.views", "mqctl.wire",
               # the lock classification (pure), and the memory of departed clients it reads
               "mqctl.locks.model", "mqctl.locks.store", "mqctl.locks.types",
               "mqctl.locks.view",
               # the allocation strategies, bit-exact with the Java client (pure)
               "mqctl.allocate.base", "mqctl.allocate.builtin", "mqctl.allocate.engine",
               "mqctl.allocate.hashring", "mqctl.allocate.reference",
               "mqctl.allocate.registry")),
    ("admin", ("mqctl.admin", "mqctl.config")),
    ("core", ("mqctl.context", "mqctl.fsutil", "mqctl.interrupt", "mqctl.models", "mqctl.render",
              "mqctl.timeparse", "mqctl.versions")),
    ("remoting", ("mqctl.remoting",)),
    ("base", ("mqctl", "mqctl.about", "mqctl.errors", "mqctl.remoting.codes")),
]
# The package's face, ``mqctl/__init__.py``: imported for ``__version__`` from anywhere (so it
# is in the base layer), it may itself import the API layer, to re-export the public API
# (``from mqctl import ...``); lazily, so that ``import mqctl`` stays light.
FACE = "mqctl"
FACE_IMPORTS_UP_TO = "api"

# The packages of the domain layer are independent: each is one command's workflow over the
# views (a reset, a lock release, an allocation, a diagnosis) and none imports another. What
# two of them need is a rule of a layer below.
INDEPENDENT = "domain"

# Packages that only these importers (and the package itself) may import: the simulated
# cluster is beside the product, and the Spark job is heavy (tests/test_startup.py).
ONLY_FROM: dict[str, tuple[str, ...]] = {
    "mqctl.sim": ("mqctl.cli.sim", "mqctl.cli.demo", "mqctl.demo"),
    "mqctl.lagjob": ("mqctl.cli.lag", "mqctl.cli.demo", "mqctl.demo"),
}

# Known exceptions, each a todo: (importer prefix, imported prefix) -> why it is still here.
# An edge matches when its importer and its imported module are (under) these names, so that
# a module split into a package keeps its entry. None today: the last ones (the simulator's
# type-only broker / cluster / consumer circle) went with mqctl/sim/ports.py.
TODO_EDGES: dict[tuple[str, str], str] = {}

# Circles broken once (one import of each, the one that went): they may not come back,
# not even as a TODO_EDGES entry.
BROKEN: tuple[tuple[str, str], ...] = (
    ("mqctl.remoting.fastjson", "mqctl.models"),       # the codec's own QueueKey
    ("mqctl.allocate.builtin", "mqctl.allocate.registry"),  # the registry makes the inner one
    ("mqctl.reset.files", "mqctl.reset.plan"),         # mqctl.reset.types
    ("mqctl.admin", "mqctl.views.message"),            # mqctl.admin.pull
    ("mqctl.sim.broker", "mqctl.sim.cluster"),         # mqctl.sim.ports
    ("mqctl.sim.broker", "mqctl.sim.consumer"),
    ("mqctl.sim.consumer", "mqctl.sim.cluster"),
)

# Below cli/ nothing prints or exits: these are the only other places allowed to (a module or
# package, or module:function for one top-level function of a module).
PRINTS: tuple[str, ...] = (
    "mqctl.cli",
    "mqctl.render",  # the one output path: cli hands it the rows and the stream
    # the spark-submit entry point (python -m mqctl.lagjob.job): its own error boundary
    "mqctl.lagjob.job:main",
    "mqctl.lagjob.job:_stderr_line",
)
RUNTIME = ("module", "function")


@dataclass(frozen=True, slots=True)
class Edge:
    importer: str
    imported: str
    kind: str  # module | function | type
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} ({self.kind}, line {self.line})"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _targets(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:  # relative: from the importing package, up level - 1
        up = package.split(".")
        up = up[:len(up) - node.level + 1]
        base = ".".join(up + ([base] if base else []))
    # `from pkg import sub` imports the submodule; `from mod import name` the module
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def import_edges(mods: dict[str, Path] | None = None) -> list[Edge]:
    mods = modules() if mods is None else mods
    known = set(mods)
    edges: list[Edge] = []
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def walk(node: ast.AST, kind: str, name: str = name, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for stmt in child.body:
                        walk_one(stmt, "type", name, package)
                    for stmt in child.orelse:
                        walk_one(stmt, kind, name, package)
                    continue
                inner = kind
                if kind == "module" and isinstance(
                        child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    inner = "function"
                walk_one(child, inner, name, package)

        def walk_one(node: ast.AST, kind: str, name: str, package: str) -> None:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in dict.fromkeys(_targets(node, package, known)):
                    if target == "mqctl" or target.startswith("mqctl."):
                        edges.append(Edge(name, target, kind, node.lineno))
            else:
                walk(node, kind)

        walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), "module")
    return edges


def under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def todo_for(e: Edge, todos: dict[tuple[str, str], str] | None = None
             ) -> tuple[str, str] | None:
    for key in TODO_EDGES if todos is None else todos:
        if under(e.importer, key[0]) and under(e.imported, key[1]):
            return key
    return None


def stale(edges: list[Edge], todos: dict[tuple[str, str], str]) -> list[tuple[str, str]]:
    """The entries of ``todos`` that no import matches any more."""
    live = {todo_for(e, todos) for e in edges}
    return sorted(set(todos) - live)


def layer_of(module: str) -> tuple[int, str, str]:
    """(rank, layer name, the prefix that placed it); rank 0 is the top."""
    best: tuple[int, int, str, str] | None = None
    for rank, (layer, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if under(module, prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), rank, layer, prefix)
    assert best is not None, module
    return best[1], best[2], best[3]


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e.importer != e.imported:
            graph[e.importer].add(e.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return sorted(found)


def describe(comps: list[list[str]], edges: list[Edge]) -> str:
    lines = []
    for comp in comps:
        lines.append("circle: " + ", ".join(comp))
        lines += [f"    {e}" for e in edges if e.importer in comp and e.imported in comp]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return import_edges()


# ---------------------------------------------------------------------------- the walk itself

def test_the_walk_sees_every_kind_of_import(tmp_path):
    pkg = tmp_path / "mqctl"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "b.py").write_text("")
    (pkg / "a.py").write_text(
        "from __future__ import annotations\n"
        "import typing\n"
        "from mqctl.sub import b\n"
        "if typing.TYPE_CHECKING:\n"
        "    from mqctl.sub.b import Thing\n"
        "class C:\n"
        "    from mqctl import sub\n"
        "    def m(self):\n"
        "        import mqctl.sub.b\n"
        "        from .sub import b as _b\n")
    found = {(e.importer, e.imported, e.kind) for e in import_edges({
        "mqctl": pkg / "__init__.py", "mqctl.sub": pkg / "sub" / "__init__.py",
        "mqctl.sub.b": pkg / "sub" / "b.py", "mqctl.a": pkg / "a.py"})}
    assert found == {("mqctl.sub", "mqctl.sub.b", "module"),
                     ("mqctl.a", "mqctl.sub.b", "module"),
                     ("mqctl.a", "mqctl.sub.b", "type"),
                     ("mqctl.a", "mqctl.sub", "module"),
                     ("mqctl.a", "mqctl.sub.b", "function")}


def test_cycles_finds_a_circle_and_only_it():
    e = [Edge("a", "b", "module", 1), Edge("b", "c", "function", 1), Edge("c", "a", "module", 1),
         Edge("c", "d", "module", 1), Edge("d", "d", "module", 1)]
    assert cycles(e) == [["a", "b", "c"]]
    assert cycles(e[1:]) == []


def test_the_real_graph_is_walked(edges):
    """The walk finds the imports this test relies on (a broken walk would pass everything)."""
    seen = {(e.importer, e.imported, e.kind) for e in edges}
    assert ("mqctl.__main__", "mqctl.cli", "module") in seen
    assert any(e.importer.startswith("mqctl.cli.") and e.kind == "function" for e in edges)
    assert any(e.kind == "type" for e in edges)
    assert ("mqctl.models", "mqctl.remoting.fastjson", "module") in seen


# ---------------------------------------------------------------------------- no circles

def test_no_import_circle_at_run_time(edges):
    runtime = [e for e in edges if e.kind in RUNTIME and todo_for(e) is None]
    comps = cycles(runtime)
    assert comps == [], "import circles (module- and function-level imports):\n" + describe(
        comps, runtime)


def test_no_import_circle_through_type_only_imports(edges):
    allowed = [e for e in edges if todo_for(e) is None]
    comps = cycles(allowed)
    assert comps == [], "import circles once TYPE_CHECKING imports count:\n" + describe(
        comps, allowed)


def test_the_circles_of_issue_19_stay_broken(edges):
    """None of the imports that closed a circle comes back, even as an allowed exception."""
    back = [str(e) for e in edges
            if any(under(e.importer, a) and under(e.imported, b) for a, b in BROKEN)]
    assert back == []
    assert not set(BROKEN) & set(TODO_EDGES)
    codec = sorted({e.imported for e in edges if e.importer == "mqctl.remoting.fastjson"})
    assert codec == ["mqctl.errors"]


# ---------------------------------------------------------------------------- direction

def test_every_module_has_a_layer():
    """A new top-level module or package is placed in LAYERS (and in docs/architecture.md)."""
    unplaced = [m for m in modules() if m != "mqctl" and layer_of(m)[2] == "mqctl"]
    assert unplaced == []


def rank_of(layer: str) -> int:
    return [name for name, _ in LAYERS].index(layer)


def against_the_layers(edges: list[Edge]) -> list[str]:
    wrong = []
    for e in edges:
        if todo_for(e) is not None:
            continue
        (low, low_name, _), (high, high_name, _) = layer_of(e.importer), layer_of(e.imported)
        if e.importer == FACE:
            low, low_name = rank_of(FACE_IMPORTS_UP_TO), f"the package's face ({FACE})"
        if high < low:
            wrong.append(f"{e}: {low_name} imports {high_name}, a layer above it")
    return wrong


def between_independent_packages(edges: list[Edge]) -> list[str]:
    """Imports from one package of the INDEPENDENT layer into another of it."""
    wrong = []
    for e in edges:
        (_, low_name, low_prefix), (_, high_name, high_prefix) = (layer_of(e.importer),
                                                                  layer_of(e.imported))
        if (low_name == high_name == INDEPENDENT and low_prefix != high_prefix
                and todo_for(e) is None):
            wrong.append(f"{e}: {low_prefix} imports {high_prefix}: the {INDEPENDENT} "
                         "packages are independent (move what both need to a layer below)")
    return wrong


def api_imports_of_the_cli(edges: list[Edge]) -> list[str]:
    """Imports of the CLI (of any kind, type-only too) from the API layer: the CLI wraps the
    API, never the reverse."""
    api = dict(LAYERS)["api"]
    return [f"{e}: the API imports the CLI" for e in edges
            if any(under(e.importer, a) for a in api)
            and any(under(e.imported, c) for c in dict(LAYERS)["entry"])]


def outside_their_commands(edges: list[Edge]) -> list[str]:
    wrong = []
    for e in edges:
        for package, importers in ONLY_FROM.items():
            if (under(e.imported, package) and not under(e.importer, package)
                    and not any(under(e.importer, i) for i in importers)
                    and todo_for(e) is None):
                wrong.append(f"{e}: only {', '.join(importers)} may import {package}")
    return wrong


def test_imports_follow_the_layers(edges):
    assert against_the_layers(edges) == []


def test_the_domain_packages_do_not_import_one_another(edges):
    assert between_independent_packages(edges) == []


def test_the_api_does_not_import_the_cli(edges):
    assert api_imports_of_the_cli(edges) == []


def test_the_api_layer_is_between_the_domain_and_the_cli():
    names = [name for name, _ in LAYERS]
    assert names.index("entry") < names.index("api") < names.index("export") \
        < names.index("domain") < names.index("views") < names.index("admin")


def test_sim_and_lagjob_are_imported_only_by_their_commands(edges):
    assert outside_their_commands(edges) == []


def test_the_direction_checks_can_fail():
    bad = [Edge("mqctl.remoting.fastjson", "mqctl.models", "function", 1),  # codec -> model
           Edge("mqctl.models", "mqctl.admin", "type", 2),                  # core -> admin
           Edge("mqctl.reset.plan", "mqctl.cli.offsets", "function", 3),    # domain -> cli
           Edge("mqctl.snapshot", "mqctl.lagjob.job", "function", 4),       # not its command
           Edge("mqctl.locks", "mqctl.sim.cluster", "module", 5)]           # sim from product
    ok = [Edge("mqctl.cli.offsets", "mqctl.reset", "function", 6),
          Edge("mqctl.models", "mqctl.remoting.fastjson", "module", 7),
          Edge("mqctl.errors", "mqctl.remoting.codes", "function", 8),
          Edge("mqctl.sim.broker", "mqctl.allocate", "function", 9),
          Edge("mqctl.cli.lag", "mqctl.lagjob", "function", 10)]
    assert [w.split(":")[0] for w in against_the_layers(bad + ok)] == [
        str(e).split(":")[0] for e in bad[:3]] + [str(bad[4]).split(":")[0]]
    assert len(outside_their_commands(bad + ok)) == 2


def test_the_domain_and_api_checks_can_fail():
    bad = [Edge("mqctl.diagnose.rules.locks", "mqctl.locks.capture", "function", 1),  # peer package
           Edge("mqctl.reset.plan", "mqctl.allocate", "type", 2),              # peer package
           Edge("mqctl.api", "mqctl.cli.common", "type", 3),                   # API -> CLI
           Edge("mqctl.cluster.reset", "mqctl.cli", "function", 4),            # API -> CLI
           Edge("mqctl.views.progress", "mqctl.locks.release", "module", 5),   # views -> domain
           Edge("mqctl", "mqctl.snapshot", "function", 6)]                     # face, fine
    ok = [Edge("mqctl.diagnose.capture", "mqctl.locks.view", "function", 7),   # a view's rule
          Edge("mqctl.locks.view", "mqctl.allocate.engine", "function", 8),
          Edge("mqctl.views.progress_capture", "mqctl.locks.view", "module", 9),
          Edge("mqctl.reset.plan", "mqctl.views.offsets", "module", 10),
          Edge("mqctl.api", "mqctl.reset", "module", 11),
          Edge("mqctl", "mqctl.api", "function", 12),                          # the face
          Edge("mqctl.allocate.registry", "mqctl", "function", 13)]            # __version__
    assert [w.split(":")[0] for w in between_independent_packages(bad + ok)] == [
        str(e).split(":")[0] for e in bad[:2]]
    assert [w.split(":")[0] for w in api_imports_of_the_cli(bad + ok)] == [
        str(e).split(":")[0] for e in bad[2:4]]
    assert [w.split(":")[0] for w in against_the_layers(bad + ok)] == [
        str(e).split(":")[0] for e in bad[2:5]]


def test_every_todo_edge_is_still_needed(edges):
    """A todo fixed is a todo removed: an entry that no longer matches any import fails."""
    assert stale(edges, TODO_EDGES) == []


def test_todo_entries_match_by_prefix_and_go_stale():
    todos = {("mqctl.admin", "mqctl.message"): "x", ("mqctl.sim.broker", "mqctl.sim.cluster"): "y"}
    e = [Edge("mqctl.admin.client", "mqctl.message", "function", 1),   # admin split: still it
         Edge("mqctl.sim.broker", "mqctl.sim.ports", "module", 2)]
    assert todo_for(e[0], todos) == ("mqctl.admin", "mqctl.message")
    assert todo_for(e[1], todos) is None
    assert stale(e, todos) == [("mqctl.sim.broker", "mqctl.sim.cluster")]


# ---------------------------------------------------------------------------- imports in functions
# An import inside a function is a dependency all the same (the walk above counts it), but the
# module's head does not show it. One is kept only to keep a module off the start-up path: a
# heavy module (tests/test_startup.py's HEAVY, Rich, the Spark job's Arrow and NumPy, or a
# module that loads one at import time, as mqctl.views.topic loads asyncio), the face's lazy
# re-exports, or the library in the body of a command in mqctl/cli (`mqctl --help` imports
# every command's module, not what the command runs). Every other import inside a function
# counts against its package's number in FUNCTION_IMPORTS, which only goes down: a package
# over its number fails, and one under it fails until the number is lowered (docs/
# architecture.md, "Who may import whom").

DEFERRED = (*HEAVY, "rich", "pyarrow", "numpy", "pandas")

# package -> the imports inside its functions that are none of those (0 when not listed)
FUNCTION_IMPORTS: dict[str, int] = {
    "mqctl.cli": 91,        # outside the command bodies: helpers, callbacks, completion
    "mqctl.errors": 2,      # a broker error's request and response names, off `--help`'s path
    "mqctl.interrupt": 11,
    "mqctl.lagjob": 122,
    "mqctl.lagoptions": 5,
    "mqctl.render": 4,
    "mqctl.timeparse": 6,
}


@dataclass(frozen=True, slots=True)
class Deferred:
    """An import inside a function."""

    module: str
    line: int
    targets: tuple[str, ...]  # the modules it loads
    command: bool  # in the body of a command of mqctl/cli (@x.command, @x.callback)

    def __str__(self) -> str:
        return f"{self.module}:{self.line} ({', '.join(self.targets)})"


def _loads(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    """What an import statement loads, any package (``_targets`` keeps mqctl's only)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return list(dict.fromkeys(_targets(node, package, known)))


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _is_command(fn: ast.AST) -> bool:
    return isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and any(
        re.search(r"\.(command|callback)\b", ast.unparse(d)) for d in fn.decorator_list)


def imports_by_place(trees: Mapping[str, ast.AST], paths: Mapping[str, Path]
                     ) -> tuple[dict[str, set[str]], list[Deferred]]:
    """Per module, what its import-time statements load (``TYPE_CHECKING`` apart); and every
    import inside a function."""
    known = set(paths)
    head: dict[str, set[str]] = defaultdict(set)
    deferred: list[Deferred] = []
    for name, tree in trees.items():
        package = _package_of(name, paths[name])

        def walk(node: ast.AST, outer: ast.AST | None, name: str = name,
                 package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for stmt in child.orelse:
                        walk(ast.Module(body=[stmt], type_ignores=[]), outer)
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    loads = _loads(child, package, known)
                    if outer is None:
                        head[name].update(loads)
                    else:
                        deferred.append(Deferred(name, child.lineno, tuple(loads),
                                                 under(name, "mqctl.cli") and _is_command(outer)))
                    continue
                walk(child, outer if outer is not None or not isinstance(
                    child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else child)

        walk(tree, None)
    return dict(head), deferred


def heavy_loads(head: Mapping[str, set[str]], deferred_ok: tuple[str, ...] = DEFERRED
                ) -> Callable[[str], frozenset[str]]:
    """The heavy modules (of ``deferred_ok``) that loading a module loads: itself, its parent
    packages, and what their heads import, transitively."""
    memo: dict[str, frozenset[str]] = {}

    def chain(module: str) -> list[str]:
        parts = module.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]

    def loads(module: str) -> frozenset[str]:
        if module not in memo:
            seen, todo = set(chain(module)), list(chain(module))
            while todo:
                for t in head.get(todo.pop(), ()):
                    for m in chain(t):
                        if m not in seen:
                            seen.add(m)
                            todo.append(m)
            memo[module] = frozenset(h for m in seen for h in deferred_ok if under(m, h))
        return memo[module]

    return loads


def counted_imports(trees: Mapping[str, ast.AST], paths: Mapping[str, Path]
                    ) -> dict[str, list[Deferred]]:
    """The imports inside functions that FUNCTION_IMPORTS counts, per package: all but those
    of a command's body, of the face, and those that keep a heavy module off the importer's
    load path (a heavy module the importer's own head loads is no reason)."""
    head, deferred = imports_by_place(trees, paths)
    loads = heavy_loads(head)
    out: dict[str, list[Deferred]] = defaultdict(list)
    for d in deferred:
        if d.command or d.module == FACE or any(loads(t) - loads(d.module) for t in d.targets):
            continue
        out[".".join(d.module.split(".")[:2])].append(d)
    return dict(out)


def against_the_caps(found: Mapping[str, list[Deferred]], caps: Mapping[str, int]) -> list[str]:
    wrong = []
    for package in sorted(set(found) | set(caps)):
        n, cap = len(found.get(package, [])), caps.get(package, 0)
        if n > cap:
            wrong.append(f"{package}: {n} imports inside functions, {cap} allowed; move them "
                         "to the module's head: " + ", ".join(map(str, found[package])))
        elif n < cap:
            wrong.append(f"{package}: {n} imports inside functions: lower FUNCTION_IMPORTS to "
                         f"{n}" if n else f"{package}: none left: drop it from FUNCTION_IMPORTS")
    return wrong


def test_imports_inside_functions_only_for_start_up(trees):
    paths = modules()
    assert against_the_caps(counted_imports(trees, paths), FUNCTION_IMPORTS) == []


def test_the_function_import_check_can_fail(tmp_path):
    pkg = tmp_path / "mqctl"
    (pkg / "cli").mkdir(parents=True)
    files = {
        "mqctl": ("__init__.py", "def __getattr__(name):\n    from mqctl.api import Cluster\n"),
        "mqctl.api": ("api.py", "import asyncio\n"),
        "mqctl.heavy": ("heavy.py", "from mqctl.api import x\n"),  # loads asyncio
        "mqctl.light": ("light.py", "import json\n"),
        "mqctl.loaded": ("loaded.py", "import asyncio\n"
                         "def f():\n    from mqctl.heavy import x\n"),  # 3: asyncio already
        "mqctl.cli": ("cli/__init__.py", ""),
        "mqctl.cli.cmd": ("cli/cmd.py",
                          "@app.command()\n"
                          "def run():\n    from mqctl.light import x\n"   # a command's body
                          "def helper():\n    from mqctl.light import y\n"),  # 5: counted
        "mqctl.views": ("views.py",
                        "import typing\n"
                        "if typing.TYPE_CHECKING:\n    from mqctl.cli import cmd\n"
                        "def f():\n"
                        "    import re\n"                     # 5: counted
                        "    from mqctl.heavy import z\n"     # heavy through its head
                        "    from pyspark.sql import F\n"     # heavy
                        "    def g():\n        from . import light\n"  # 9: counted
                        "class C:\n    def m(self):\n        import yaml\n"),  # heavy
    }
    paths = {}
    for name, (file, text) in files.items():
        (pkg / file).write_text(text)
        paths[name] = pkg / file
    trees = {n: ast.parse(p.read_text()) for n, p in paths.items()}
    found = counted_imports(trees, paths)
    assert {k: [str(d) for d in v] for k, v in found.items()} == {
        "mqctl.cli": ["mqctl.cli.cmd:5 (mqctl.light)"],
        "mqctl.loaded": ["mqctl.loaded:3 (mqctl.heavy)"],
        "mqctl.views": ["mqctl.views:5 (re)", "mqctl.views:9 (mqctl.light)"]}
    assert against_the_caps(found, {"mqctl.cli": 1, "mqctl.loaded": 1, "mqctl.views": 2}) == []
    assert [w.split(":")[0] for w in against_the_caps(
        found, {"mqctl.cli": 2, "mqctl.views": 1, "mqctl.wire": 1})] == [
        "mqctl.cli", "mqctl.loaded", "mqctl.views", "mqctl.wire"]


# ---------------------------------------------------------------------------- sizes
# A module holds one subject and a function one step: no module over MAX_MODULE_LINES lines,
# no function (or method) over MAX_FUNCTION_LINES lines, from its ``def`` to its last line.
# The exceptions are explicit: the packages of SIZE_EXEMPT (none today) and the modules and
# functions of LARGE, each with its size today as a ceiling: one that grows
# past it fails, and one back within the limits fails until its entry goes, so the list only
# shrinks (docs/architecture.md, "Where a new piece goes").

MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100
SIZE_EXEMPT: dict[str, str] = {}
# module, or module:function (a method as Class.method) -> its lines today
LARGE: dict[str, int] = {}


def sizes(trees: Mapping[str, ast.Module], lines: Mapping[str, int]) -> dict[str, int]:
    """Each module's lines, and each function's (``module:function``, ``module:Class.method``,
    nested ones as ``outer.inner``)."""
    out: dict[str, int] = dict(lines)
    for name, tree in trees.items():
        def walk(node: ast.AST, prefix: str, name: str = name) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    qual = prefix + child.name
                    if not isinstance(child, ast.ClassDef):
                        out[f"{name}:{qual}"] = (child.end_lineno or child.lineno) \
                            - child.lineno + 1
                    walk(child, qual + ".")
                else:
                    walk(child, prefix)

        walk(tree, "")
    return out


def against_the_sizes(found: Mapping[str, int], large: Mapping[str, int],
                      exempt: Mapping[str, str] = SIZE_EXEMPT) -> list[str]:
    wrong = []
    for key, n in sorted(found.items()):
        module, _, fn = key.partition(":")
        if any(under(module, e) for e in exempt):
            continue
        limit = MAX_FUNCTION_LINES if fn else MAX_MODULE_LINES
        what = f"function {key}" if fn else f"module {key}"
        if key in large:
            if n > large[key]:
                wrong.append(f"{what}: {n} lines, more than its {large[key]} (LARGE)")
            elif n <= limit:
                wrong.append(f"{what}: {n} lines, within {limit}: drop it from LARGE")
        elif n > limit:
            wrong.append(f"{what}: {n} lines, more than {limit}: split it by subject")
    wrong += [f"{key}: in LARGE, but no such module or function" for key in sorted(large)
              if key not in found]
    return wrong


def test_no_module_or_function_too_large(trees):
    paths = modules()
    lines = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in paths.items()}
    assert against_the_sizes(sizes(trees, lines), LARGE) == []


def test_the_size_check_can_fail():
    body = "\n".join(f"    x{i} = {i}" for i in range(101))
    method = "\n".join(f"        x{i} = {i}" for i in range(101))
    tree = ast.parse(f"def big():\n{body}\nclass C:\n    async def m(self):\n{method}\n"
                     "def small():\n    def inner():\n        pass\n")
    found = sizes({"mqctl.x": tree}, {"mqctl.x": 900})
    assert found["mqctl.x:big"] == 102 and found["mqctl.x:C.m"] == 102
    assert found["mqctl.x:small.inner"] == 2
    assert [w.split(":")[0] for w in against_the_sizes(found, {})] == [
        "module mqctl.x", "function mqctl.x", "function mqctl.x"]
    assert against_the_sizes(found, {"mqctl.x": 900, "mqctl.x:big": 102,
                                     "mqctl.x:C.m": 102}) == []
    assert [w.split(" lines")[0] for w in against_the_sizes(
        found, {"mqctl.x": 899, "mqctl.x:big": 102, "mqctl.x:C.m": 102,
                "mqctl.x:small": 200, "mqctl.y": 900})] == [
        "module mqctl.x: 900", "function mqctl.x:small: 3",
        "mqctl.y: in LARGE, but no such module or function"]
    assert against_the_sizes(found, {}, {"mqctl": "all"}) == []

# The lag report's room is held to smaller pieces than the rest of the package, so a reader can
# hold one at a time (docs/architecture.md, "The lag report's stages"): no class over
# LAGJOB_MAX_CLASS_LINES lines and no function over LAGJOB_MAX_FUNCTION_LINES.
LAGJOB_MAX_CLASS_LINES = 300
LAGJOB_MAX_FUNCTION_LINES = 80


def too_large_in(trees: Mapping[str, ast.Module], package: str, max_class: int,
                 max_function: int) -> list[str]:
    """The classes and functions (methods, nested ones) of ``package`` over the limits."""
    wrong = []
    for name, tree in sorted(trees.items()):
        if not under(name, package):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                limit = max_class if isinstance(node, ast.ClassDef) else max_function
                if n > limit:
                    wrong.append(f"{name}:{node.name}: {n} lines, more than {limit}")
    return wrong


def test_the_lag_report_holds_small_classes_and_functions(trees):
    assert too_large_in(trees, "mqctl.lagjob", LAGJOB_MAX_CLASS_LINES,
                        LAGJOB_MAX_FUNCTION_LINES) == []


def test_the_lag_report_size_check_can_fail():
    body = "\n".join(f"        x{i} = {i}" for i in range(80))
    tree = ast.parse(f"class C:\n    def m(self):\n{body}\n" + "\n".join(
        f"    y{i} = {i}" for i in range(300)) + "\n")
    assert [w.split(":")[1] for w in too_large_in({"mqctl.lagjob.x": tree, "mqctl.y": tree},
                                                  "mqctl.lagjob", 300, 80)] == ["C", "m"]


# ---------------------------------------------------------------------------- printing

def _prints(tree: ast.AST, allowed: frozenset[str] = frozenset()) -> list[int]:
    """Lines of print(), sys.exit(), X.print() and X.write() on sys.stdout/stderr, outside an
    ``if __name__ == "__main__":`` block and the top-level functions named in ``allowed``."""
    lines = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if (isinstance(child, ast.If) and isinstance(child.test, ast.Compare)
                    and isinstance(child.test.left, ast.Name)
                    and child.test.left.id == "__name__"):
                continue
            if node is tree and isinstance(child, ast.FunctionDef) and child.name in allowed:
                continue
            if isinstance(child, ast.Call):
                f = child.func
                text = ast.unparse(f)
                if (text in ("print", "sys.exit", "exit", "quit")
                        or re.fullmatch(r"sys\.(stdout|stderr)\.write", text)
                        or (isinstance(f, ast.Attribute) and f.attr == "print")):
                    lines.append(child.lineno)
            visit(child)

    visit(tree)
    return lines


def test_nothing_below_cli_prints_or_exits():
    assert _breaches(PRINTS, _prints) == []


def test_the_print_check_can_fail():
    tree = ast.parse("import sys\ndef f():\n    print('x')\n    console.print(1)\n"
                     "    sys.stderr.write('y')\nif __name__ == '__main__':\n    sys.exit(f())\n")
    assert _prints(tree) == [3, 4, 5]
    assert _prints(tree, frozenset({"f"})) == []


# ---------------------------------------------------------------------------- the page

def test_docs_architecture_mirrors_the_rules():
    """Every layer, every package or module a layer names, every ONLY_FROM rule and every todo
    edge appears on docs/architecture.md."""
    text = DOC.read_text(encoding="utf-8")
    missing = []
    for layer, prefixes in LAYERS:
        if f"**{layer}**" not in text:
            missing.append(f"layer {layer}")
        for prefix in prefixes:
            if prefix != "mqctl" and f"`{prefix}`" not in text:
                missing.append(prefix)
    for package, importers in ONLY_FROM.items():
        for i in importers:
            if f"`{i}`" not in text:
                missing.append(f"{package} importer {i}")
    for a, b in TODO_EDGES:
        if f"`{a}` -> `{b}`" not in text:
            missing.append(f"todo {a} -> {b}")
    assert missing == []


# ---------------------------------------------------------------------------- the codec's key

def test_codec_key_and_model_queue_are_one_key():
    """The codec returns its own QueueKey, the model its MessageQueue: the two must meet in a
    dict (a parsed offset table is looked up with the model's queues, and the reverse)."""
    from mqctl.models import MessageQueue, queue_map
    from mqctl.remoting import fastjson

    parsed = fastjson.loads('{{"brokerName":"b","queueId":3,"topic":"T"}:7,'
                            '{"brokerName":"b","queueId":"4","topic":"T"}:8}')
    keys = list(parsed)
    assert [type(k).__name__ for k in keys] == ["QueueKey", "QueueKey"]
    assert parsed[MessageQueue("T", "b", 4)] == 8
    assert {MessageQueue("T", "b", 3): 1}[keys[0]] == 1
    assert keys[0] != MessageQueue("T", "b", 4) and keys[0] != ("T", "b", 3)
    model = queue_map(parsed)
    assert [type(k) for k in model] == [MessageQueue, MessageQueue]
    assert sorted(model) == [MessageQueue("T", "b", 3), MessageQueue("T", "b", 4)]
    # written back the same way, whichever key type the map holds
    assert fastjson.dumps_fastjson(parsed) == fastjson.dumps_fastjson(model) == (
        '{{"brokerName":"b","queueId":3,"topic":"T"}:7,{"brokerName":"b","queueId":4,'
        '"topic":"T"}:8}')
    assert fastjson.dumps(parsed) == fastjson.dumps(model)


# ---------------------------------------------------------------------------- one output path
# what a command prints on stdout goes through mqctl.render.emit (a Result:
# -q prints nothing, -o json one document). These are the only places that write to stdout
# themselves (module, or module:function for one top-level function), each for a reason
# render cannot serve.
STDOUT: tuple[str, ...] = (
    "mqctl.render",  # the one output path
    "mqctl.cli.watchscreen:watch_rounds",  # --watch: JSON Lines, one document per round
    # a shell script and the shell's completion protocol: text for a shell, not a result
    "mqctl.cli.completion:completion",
    "mqctl.cli.completion:shell_complete",
    "mqctl.cli.app:_version",  # --version, answered before any command or option
    # a path for "$(mqctl lag job-path)": MQCTL_OUTPUT=json must not turn it into JSON
    "mqctl.cli.lag:job_path",
)


def _stdout_writes(tree: ast.Module, allowed: frozenset[str] = frozenset()) -> list[int]:
    """Lines that write to stdout outside the top-level functions named in ``allowed``:
    print() without a file= other than sys.stderr, sys.stdout.write/writelines, typer.echo
    and click.echo without err=True, and a Console().print (a Rich console on stdout)."""
    skipped = {id(n) for f in tree.body
               if isinstance(f, ast.FunctionDef) and f.name in allowed for n in ast.walk(f)}
    return sorted(n.lineno for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and id(n) not in skipped and _to_stdout(n))


def _to_stdout(call: ast.Call) -> bool:
    text = ast.unparse(call.func)

    def to_stderr(keyword: str) -> bool:
        return any(k.arg == keyword and ast.unparse(k.value) in ("sys.stderr", "True")
                   for k in call.keywords)

    if text == "print":
        return not to_stderr("file")
    if text in ("echo", "secho", "typer.echo", "typer.secho", "click.echo", "click.secho"):
        return not to_stderr("err")
    return bool(re.fullmatch(r"sys\.(__)?stdout(__)?\.write(lines)?", text)
                or (isinstance(call.func, ast.Attribute) and call.func.attr == "print"
                    and re.search(r"console", text, re.IGNORECASE)))


def _breaches(places: tuple[str, ...],
              check: Callable[[ast.Module, frozenset[str]], list[int]]) -> list[str]:
    """``module:line`` of what ``check(tree, allowed functions)`` finds in every module of
    mqctl outside ``places`` (a module or package, or module:function)."""
    found = []
    for name, path in modules().items():
        if any(under(name, p) for p in places if ":" not in p):
            continue
        allowed = frozenset(p.partition(":")[2] for p in places if p.partition(":")[0] == name)
        found += [f"{name}:{line}"
                  for line in check(ast.parse(path.read_text(encoding="utf-8")), allowed)]
    return found


def test_only_the_render_path_writes_to_stdout():
    assert _breaches(STDOUT, _stdout_writes) == []


def test_the_stdout_check_can_fail():
    bad = ("import sys, typer\n"
           "def up():\n"
           "    sys.stdout.write('name server: x\\n')\n"  # 3: what sim up did
           "    print('x')\n"  # 4
           "    print('x', file=sys.stderr)\n"  # 5: stderr, fine
           "    typer.echo('y')\n"  # 6
           "    typer.echo('y', err=True)\n"  # 7: stderr, fine
           "    console.print('z')\n"  # 8
           "    sys.stderr.write('stopped')\n"  # 9: stderr, fine
           "def ok():\n"
           "    sys.stdout.write('allowed')\n")  # 11
    tree = ast.parse(bad)
    assert _stdout_writes(tree) == [3, 4, 6, 8, 11]
    assert _stdout_writes(tree, frozenset({"ok"})) == [3, 4, 6, 8]
    # the allowed places exist (a stale entry would allow nothing and hide a rename)
    for entry in STDOUT:
        mod, _, fn = entry.partition(":")
        path = modules()[mod]
        if fn:
            names = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
                     if isinstance(n, ast.FunctionDef)}
            assert fn in names, entry


# ---------------------------------------------------------------------------- views
# Two more rules (docs/architecture.md, "Views and requests"):
#
# * requests only through Admin: a request is a call ``<x>.invoke(...)`` (RemotingClient.invoke;
#   ``super().invoke(ctx)`` is Click's, not a request). Outside mqctl/admin/ (and
#   mqctl/remoting/, which defines it) only the modules of RAW_REQUESTS send one, and only a
#   request that changes state (``RequestCode.<X>`` with X in MUTATING_REQUESTS): Admin is
#   read-only, so each read request code has its request and parse in one place.
# * no view logic in mqctl/cli/: a CLI function does not build rows (a dict display with at
#   least ROW_KEYS string keys inside a loop or a comprehension: one row per item) and the CLI
#   defines no dataclass (its own AppState apart). Rows are built in mqctl/views/*_rows.py (or
#   the package of the command); the command parses, calls the library and emits the Result.
#   VIEW_LOGIC_TODO names the CLI functions that still build rows; like TODO_EDGES it only
#   shrinks (an entry that no longer builds rows fails).

REQUEST_HOMES = ("mqctl.admin", "mqctl.remoting")
# modules that send state-changing requests themselves (Admin sends none) -> why
RAW_REQUESTS: dict[str, str] = {
    "mqctl.reset.apply": "INVOKE_BROKER_TO_RESET_OFFSET / UPDATE_CONSUMER_OFFSET of a reset",
    "mqctl.locks.release": "UNLOCK_BATCH_MQ of a lock release",
    "mqctl.levers.apply": "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP of a pause, resume or config "
                          "change",
    "mqctl.levers.clone": "CLONE_GROUP_OFFSET of an offsets clone",
}
ROW_KEYS = 3
CLI_DATACLASSES = ("mqctl.cli.common:AppState",)
# CLI functions that still build rows (module:function) -> where the rows belong
VIEW_LOGIC_TODO: dict[str, str] = {}


def _mutating_names() -> set[str]:
    from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode

    return {RequestCode(c).name for c in MUTATING_REQUESTS}


def raw_requests(trees: Mapping[str, ast.AST]) -> list[str]:
    """Each ``<x>.invoke(...)`` against the rule, as ``module:line: why``."""
    mutating = _mutating_names()
    wrong = []
    for name, tree in sorted(trees.items()):
        if any(under(name, home) for home in REQUEST_HOMES):
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("invoke", "invoke_oneway")):
                continue
            recv = node.func.value
            if (isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name)
                    and recv.func.id == "super"):
                continue  # Click's Command.invoke(ctx)
            code = node.args[1] if len(node.args) > 1 else None
            code_name = (code.attr if isinstance(code, ast.Attribute)
                         and isinstance(code.value, ast.Name) and code.value.id == "RequestCode"
                         else None)
            if name not in RAW_REQUESTS:
                wrong.append(f"{name}:{node.lineno}: a raw request outside mqctl/admin/ "
                             f"({code_name or 'code?'}): add a method to Admin")
            elif code_name not in mutating:
                wrong.append(f"{name}:{node.lineno}: {code_name or 'a code not named'} is not "
                             "a state-changing request: read it through Admin")
    return wrong


def _rows_built(fn: ast.AST) -> list[int]:
    """Lines of dict displays with ROW_KEYS+ string keys built in a loop or comprehension of
    ``fn`` itself (nested functions are checked on their own)."""
    hits: list[int] = []

    def walk(node: ast.AST, in_loop: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                          | ast.ClassDef):
                continue
            loop = in_loop or isinstance(child, ast.For | ast.AsyncFor | ast.While
                                         | ast.ListComp | ast.SetComp | ast.GeneratorExp
                                         | ast.DictComp)
            if isinstance(child, ast.Dict) and in_loop and sum(
                    isinstance(k, ast.Constant) and isinstance(k.value, str)
                    for k in child.keys) >= ROW_KEYS:
                hits.append(child.lineno)
            walk(child, loop)

    walk(fn, False)
    return hits


def view_logic(trees: Mapping[str, ast.AST]) -> dict[str, list[str]]:
    """CLI functions that build rows (``module:function`` -> lines) and CLI dataclasses."""
    found: dict[str, list[str]] = {}
    for name, tree in sorted(trees.items()):
        if not under(name, "mqctl.cli"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = _rows_built(node)
                if lines:
                    found.setdefault(f"{name}:{node.name}", []).extend(
                        f"rows built at line {n}" for n in lines)
            elif isinstance(node, ast.ClassDef) and f"{name}:{node.name}" not in \
                    CLI_DATACLASSES and any(
                        (d.id if isinstance(d, ast.Name) else
                         d.func.id if isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
                         else "") == "dataclass" for d in node.decorator_list):
                found.setdefault(f"{name}:{node.name}", []).append("a dataclass in the CLI")
    return found


@pytest.fixture(scope="module")
def trees() -> dict[str, ast.AST]:
    return {name: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for name, path in modules().items()}


def test_requests_go_through_admin(trees):
    assert raw_requests(trees) == []


def test_the_request_rule_can_fail():
    bad = {
        # a read request beside Admin (what mqctl/topicview.py did)
        "mqctl.views.topic": ast.parse(
            "async def f(admin):\n"
            "    await admin.client.invoke(addr, RequestCode.GET_TOPIC_STATS_INFO, {})\n"),
        # a read request in a module allowed its state-changing ones
        "mqctl.locks.release": ast.parse(
            "async def g(admin):\n"
            "    await admin.client.invoke(a, RequestCode.GET_CONSUMER_RUNNING_INFO, {})\n"
            "    await admin.client.invoke(a, RequestCode.UNLOCK_BATCH_MQ, {})\n"),
        # fine: Admin itself, and Click's invoke
        "mqctl.admin.client": ast.parse(
            "async def h(self):\n    await self.client.invoke(a, RequestCode.GET_MAX_OFFSET)\n"),
        "mqctl.cli.app": ast.parse(
            "class G:\n    def invoke(self, ctx):\n        return super().invoke(ctx)\n"),
    }
    assert raw_requests(bad) == [
        "mqctl.locks.release:2: GET_CONSUMER_RUNNING_INFO is not a state-changing request: "
        "read it through Admin",
        "mqctl.views.topic:2: a raw request outside mqctl/admin/ (GET_TOPIC_STATS_INFO): add "
        "a method to Admin"]


def test_the_cli_builds_no_rows(trees):
    found = view_logic(trees)
    assert {k: v for k, v in found.items() if k not in VIEW_LOGIC_TODO} == {}


def test_every_view_logic_todo_is_still_needed(trees):
    """A CLI function whose rows moved out leaves VIEW_LOGIC_TODO: the list only shrinks."""
    assert sorted(set(VIEW_LOGIC_TODO) - set(view_logic(trees))) == []


def test_the_view_logic_rule_can_fail():
    bad = {
        # progress_result as it was in mqctl/cli/inspect.py: one dict per queue
        "mqctl.cli.inspect": ast.parse(
            "def progress_result(p):\n"
            "    rows = []\n"
            "    for q in p.queues:\n"
            "        rows.append({'topic': q.topic, 'lag': q.lag, 'owner': q.owner})\n"
            "    return [{'a': 1, 'b': 2, 'c': q} for q in rows]\n"
            "from dataclasses import dataclass\n"
            "@dataclass(frozen=True)\n"
            "class Row:\n    x: int\n"),
        # fine: one dict outside a loop, a two-key pair in one, and a view module
        "mqctl.cli.ok": ast.parse(
            "def f(x):\n"
            "    data = {'a': 1, 'b': 2, 'c': 3}\n"
            "    return data, [{'k': k, 'v': v} for k, v in x]\n"),
        "mqctl.views.progress_rows": ast.parse(
            "def g(p):\n    return [{'a': 1, 'b': 2, 'c': q} for q in p]\n"),
    }
    assert view_logic(bad) == {
        "mqctl.cli.inspect:Row": ["a dataclass in the CLI"],
        "mqctl.cli.inspect:progress_result": ["rows built at line 4", "rows built at line 5"]}


def test_docs_architecture_names_the_view_rules():
    text = DOC.read_text(encoding="utf-8")
    missing = [m for m in [*RAW_REQUESTS, *VIEW_LOGIC_TODO] if f"`{m}`" not in text]
    assert missing == []
