"""The strategy registry: built-ins, entry-point plugins in real throwaway distributions."""

from __future__ import annotations

import pytest

from mqctl.allocate import compute_allocation
from mqctl.allocate.registry import normalise
from mqctl.errors import PluginError, UsageError
from mqctl.models import MessageQueue

Q = [MessageQueue("T", "broker-a", i) for i in range(6)]

PER_CONSUMER = """
class EveryOther:
    '''Duck-typed, Java contract only: a consumer takes queues whose id parity matches.'''
    description = "parity"

    def __init__(self, offset=0):
        self.offset = offset

    def allocate(self, group, current_cid, mq_all, cid_all):
        i = cid_all.index(current_cid)
        return [q for q in mq_all if (q.queue_id + self.offset) % len(cid_all) == i]
"""

GROUP_PLUGIN = """
from mqctl.allocate import AllocationStrategy

class Reverse(AllocationStrategy):
    name = "reverse"
    description = "last consumer first"
    calls = 0

    def allocate_group(self, group, mq_all, cid_all):
        type(self).calls += 1
        out = {c: [] for c in dict.fromkeys(cid_all)}
        rev = list(dict.fromkeys(cid_all))[::-1]
        for i, q in enumerate(mq_all):
            out[rev[i % len(rev)]].append(q)
        return out
"""


def test_builtins_without_loading_plugins(fresh_registry):
    compute_allocation("avg", Q, ["a"])
    assert fresh_registry._plugins_loaded is False  # built-in names never scan entry points
    assert [i.origin for i in fresh_registry.infos()][:6] == ["builtin"] * 6
    assert fresh_registry._plugins_loaded is True


def test_normalise():
    assert normalise(" AVG_BY_CIRCLE ") == "avg-by-circle"
    assert normalise("Consistent_Hash") == "consistent-hash"


def test_per_consumer_plugin_from_a_distribution(fresh_registry, make_dist):
    make_dist("mqctl-parity", "1.2.3", {"parity": "parity_plugin:EveryOther"},
              {"parity_plugin": PER_CONSUMER})
    infos = {i.name: i for i in fresh_registry.infos()}
    assert infos["parity"].origin == "mqctl-parity"
    assert infos["parity"].version == "1.2.3"
    assert infos["parity"].description == "parity"
    a = compute_allocation("PARITY", Q, ["b", "a"], offset=1, virtual_nodes=3)
    # sorted cidAll = [a, b]; (qid + 1) % 2 == index
    assert {c: [q.queue_id for q in v] for c, v in a.assignments.items()} == {
        "a": [1, 3, 5], "b": [0, 2, 4]}


def test_group_plugin_called_once_per_group(fresh_registry, make_dist):
    make_dist("mqctl-reverse", "0.0.1", {"reverse": "reverse_plugin:Reverse"},
              {"reverse_plugin": GROUP_PLUGIN})
    a = compute_allocation("reverse", Q, ["a", "b", "c"])
    import reverse_plugin

    assert reverse_plugin.Reverse.calls == 1
    assert [q.queue_id for q in a.assignments["c"]] == [0, 3]


def test_broken_plugins_are_warnings_not_crashes(fresh_registry, make_dist):
    make_dist("mqctl-broken", "9.9", {"boom": "boom_plugin:Strategy",
                                      "nothing": "empty_plugin:NotAStrategy",
                                      "avg": "empty_plugin:NotAStrategy"},
              {"boom_plugin": "raise RuntimeError('import-time failure')\n",
               "empty_plugin": "class NotAStrategy:\n    pass\n"})
    names = [i.name for i in fresh_registry.infos()]
    assert "boom" not in names and "nothing" not in names
    problems = " | ".join(fresh_registry.problems)
    assert "'boom' from mqctl-broken 9.9 failed to load: RuntimeError: import-time failure" \
        in problems
    assert "'nothing' from mqctl-broken 9.9 failed to load" in problems
    assert "'avg' from mqctl-broken ignored: the name is taken by builtin" in problems
    assert "pip uninstall mqctl-broken" in problems
    # the built-ins still work
    assert compute_allocation("avg", Q, ["a"]).assignments["a"] == Q


def test_entry_points_read_once(fresh_registry, make_dist, monkeypatch):
    import importlib

    registry = importlib.import_module("mqctl.allocate.registry")

    calls = []
    real = registry.entry_points

    def counting(**kw):
        calls.append(kw)
        return real(**kw)

    monkeypatch.setattr(registry, "entry_points", counting)
    with pytest.raises(UsageError):
        compute_allocation("nope-1", Q, ["a"])
    with pytest.raises(UsageError):
        compute_allocation("nope-2", Q, ["a"])
    fresh_registry.infos()
    assert calls == [{"group": "mqctl.strategies"}]


def test_plugin_failing_at_run_time_is_a_plugin_error(fresh_registry, make_dist):
    make_dist("mqctl-crash", "1.0", {"crash": "crash_plugin:Crash",
                                     "badinit": "crash_plugin:BadInit"},
              {"crash_plugin": """
                  class Crash:
                      def allocate(self, group, current_cid, mq_all, cid_all):
                          raise ZeroDivisionError("oops")

                  class BadInit:
                      def __init__(self, needed):
                          pass
                      def allocate(self, *a):
                          return []
              """})
    with pytest.raises(PluginError, match="strategy 'crash' failed: ZeroDivisionError: oops"):
        compute_allocation("crash", Q, ["a"])
    with pytest.raises(PluginError, match=r"'badinit' .* could not be created"):
        compute_allocation("badinit", Q, ["a"])


def test_in_process_register_and_duplicate_name(fresh_registry):
    from mqctl.allocate import AllocationStrategy, register

    class Mine(AllocationStrategy):
        name = "mine"

        def allocate_group(self, group, mq_all, cid_all):
            return {c: list(mq_all) for c in cid_all}

    info = register(Mine, origin="test")
    assert info.name == "mine" and info.origin == "test"
    with pytest.raises(ValueError, match="already registered"):
        register(Mine)
    assert compute_allocation("MINE", Q, ["x"]).assignments == {"x": Q}
    # a plugin that hands out everything to everyone: the "at most once" note is not ours to
    # enforce, but the result shows the sharing
    assert len(compute_allocation("mine", Q, ["x", "y"]).shared) == 6


def test_strategy_must_implement_something():
    from mqctl.allocate import AllocationStrategy

    class Nothing(AllocationStrategy):
        name = "nothing"

    with pytest.raises(TypeError, match="neither allocate"):
        Nothing()


def test_sticky_entry_point_declared():
    import tomllib
    from pathlib import Path

    pp = Path(__file__).resolve().parents[2] / "plugins" / "mqctl-sticky" / "pyproject.toml"
    data = tomllib.loads(pp.read_text())
    assert data["project"]["entry-points"]["mqctl.strategies"] == {
        "sticky": "mqctl_sticky:StickyStrategy"}
