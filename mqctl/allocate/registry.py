"""One registry for every strategy: the built-ins and the ``mqctl.strategies`` entry points.

A plugin distribution declares, in its ``pyproject.toml``::

    [project.entry-points."mqctl.strategies"]
    sticky = "mqctl_sticky:StickyStrategy"

The entry point's name is the strategy name (normalised to lower-kebab). The object it loads is
called with the strategy parameters as keyword arguments (only those its signature accepts,
unless it takes ``**params``) and must give an object with ``allocate_group(group, mq_all,
cid_all)`` and/or the Java contract ``allocate(group, current_cid, mq_all, cid_all)``; a
subclass of :class:`~mqctl.allocate.base.AllocationStrategy` is the easy way. A plugin that
implements only ``allocate`` is run once per distinct consumer.

Entry points are read lazily (only when a name is not a built-in, or when the list is asked
for) and once. A plugin that fails to load is skipped and recorded in :attr:`Registry.problems`
(the CLI prints them as warnings); it never breaks the built-ins.

The registry imports the built-ins (:mod:`mqctl.allocate.builtin`), never the other way round:
a strategy that runs another inside it (``machine-room-nearby``) names its default in the class
attribute ``default_inner``, and :meth:`Registry.create` creates the inner one from its name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from mqctl.about import __version__
from mqctl.allocate.base import AllocationStrategy, Assignment, distinct
from mqctl.allocate.builtin import BUILTINS, own_inner_error
from mqctl.errors import MqctlError, PluginError, UsageError
from mqctl.models import STRATEGY_CLASS_NAMES, MessageQueue

ENTRY_POINT_GROUP = "mqctl.strategies"


def normalise(name: str) -> str:
    """Case-insensitive, ``_`` and ``-`` interchangeable: ``AVG_BY_CIRCLE`` -> ``avg-by-circle``."""
    return name.strip().lower().replace("_", "-")


@dataclass(frozen=True, slots=True)
class StrategyInfo:
    name: str
    origin: str            # "builtin" or the plugin's distribution name
    version: str
    description: str
    java_name: str | None
    uses_previous: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "origin": self.origin, "version": self.version,
                "javaName": self.java_name, "usesPrevious": self.uses_previous,
                "description": self.description}


@dataclass(frozen=True, slots=True)
class _Entry:
    factory: Callable[..., Any]
    info: StrategyInfo


class _Adapter(AllocationStrategy):
    """Wraps a duck-typed plugin object (not an :class:`AllocationStrategy`)."""

    def __init__(self, obj: Any, name: str, **params: Any) -> None:
        self.params = params
        self.obj = obj
        self._name = name
        self._group = getattr(obj, "allocate_group", None)
        self._one = getattr(obj, "allocate", None)
        if not callable(self._group) and not callable(self._one):
            raise TypeError(f"{type(obj).__name__} has neither allocate() nor allocate_group()")

    @property
    def display_name(self) -> str:
        return self._name

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if callable(self._one):
            return list(self._one(group, current_cid, mq_all, cid_all) or [])
        return super().allocate(group, current_cid, mq_all, cid_all)

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        if callable(self._group):
            return dict(self._group(group, mq_all, cid_all) or {})
        return {c: self.allocate(group, c, mq_all, cid_all) for c in distinct(cid_all)}


def _call_with_params(factory: Callable[..., Any], params: dict[str, Any]) -> Any:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return factory(**params)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return factory(**params)
    accepted = {k: v for k, v in params.items() if k in sig.parameters}
    return factory(**accepted)


class Registry:
    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._plugins_loaded = False
        self.problems: list[str] = []

    # ------------------------------------------------------------------ registration

    def register(self, factory: Callable[..., Any], *, name: str | None = None,
                 origin: str = "builtin", version: str | None = None,
                 replace: bool = False) -> StrategyInfo:
        """Add a strategy class (or factory). Built-ins cannot be replaced by plugins."""

        key = normalise(name or str(getattr(factory, "name", "") or ""))
        if not key:
            raise ValueError(f"strategy {factory!r} has no name")
        if key in self._entries and not replace:
            raise ValueError(f"strategy {key!r} is already registered by "
                             f"{self._entries[key].info.origin}")
        doc = (inspect.getdoc(factory) or "").strip().splitlines()
        info = StrategyInfo(
            name=key, origin=origin, version=version or __version__,
            description=str(getattr(factory, "description", "") or (doc[0] if doc else "")),
            java_name=getattr(factory, "java_name", None),
            uses_previous=bool(getattr(factory, "uses_previous", False)))
        self._entries[key] = _Entry(factory, info)
        return info

    def unregister(self, name: str) -> None:
        self._entries.pop(normalise(name), None)

    def load_plugins(self, *, force: bool = False) -> list[str]:
        """Read the ``mqctl.strategies`` entry points (once); return the problems found."""
        if self._plugins_loaded and not force:
            return self.problems
        self._plugins_loaded = True

        try:
            eps = list(entry_points(group=ENTRY_POINT_GROUP))
        except Exception as exc:  # a broken installed metadata file
            self.problems.append(f"cannot read {ENTRY_POINT_GROUP} entry points: {exc}")
            return self.problems
        for ep in sorted(eps, key=lambda e: (e.name, e.value)):
            dist = getattr(ep, "dist", None)
            origin = str(dist.name) if dist is not None else "unknown distribution"
            version = str(dist.version) if dist is not None else "?"
            key = normalise(ep.name)
            if key in self._entries:
                owner = self._entries[key].info.origin
                if owner == origin:
                    continue  # the same plugin seen twice (e.g. force reload)
                self.problems.append(f"plugin strategy {key!r} from {origin} ignored: the name "
                                     f"is taken by {owner}")
                continue
            try:
                obj = ep.load()
                if not callable(obj):
                    raise TypeError(f"{ep.value} is not a class or factory")
                if isinstance(obj, type) and not issubclass(obj, AllocationStrategy) and not (
                        hasattr(obj, "allocate") or hasattr(obj, "allocate_group")):
                    raise TypeError(f"{ep.value} has neither allocate() nor allocate_group()")
                self.register(obj, name=key, origin=origin, version=version)
            except Exception as exc:  # a plugin must not break mqctl
                self.problems.append(
                    f"plugin strategy {key!r} from {origin} {version} failed to load: "
                    f"{type(exc).__name__}: {exc} (uninstall it with 'pip uninstall {origin}')")
        return self.problems

    # ------------------------------------------------------------------ lookup

    def canonical(self, name: str) -> tuple[str, dict[str, Any]]:
        """The registry key for ``name`` and the parameters the name itself implies.

        Accepts lower-kebab names, RocketMQ's names (``AVG_BY_CIRCLE``), ``getName()`` of
        ``AllocateMachineRoomNearby`` (``MACHINE_ROOM_NEARBY-AVG`` -> inner ``avg``) and the
        Java class names reported in running info.
        """
        raw = name.strip()
        cls = raw.split("@", 1)[0]
        simple = {k.rsplit(".", 1)[-1]: v for k, v in STRATEGY_CLASS_NAMES.items()}
        if cls in STRATEGY_CLASS_NAMES:
            raw = STRATEGY_CLASS_NAMES[cls]
        elif cls in simple:  # the simple class name, as docs and logs write it
            raw = simple[cls]
        key = normalise(raw)
        nearby = "machine-room-nearby"
        if key.startswith(nearby + "-") and key not in self._entries:
            return nearby, {"inner": key[len(nearby) + 1:]}
        return key, {}

    def names(self) -> list[str]:
        return list(self._entries)

    def _entry(self, name: str) -> tuple[_Entry, dict[str, Any]]:
        key, implied = self.canonical(name)
        if key not in self._entries:
            self.load_plugins()
        if key not in self._entries:
            known = ", ".join(self.names())
            raise UsageError(f"unknown strategy {name!r} (known: {known})",
                             hint="see 'mqctl allocate --list-strategies'; RocketMQ names such "
                                  "as AVG_BY_CIRCLE are accepted too")
        return self._entries[key], implied

    def info(self, name: str) -> StrategyInfo:
        return self._entry(name)[0].info

    def infos(self) -> list[StrategyInfo]:
        self.load_plugins()
        return [e.info for e in self._entries.values()]

    def create(self, name: str, **params: Any) -> AllocationStrategy:
        """A configured strategy. Bad parameters raise :class:`UsageError`; a plugin that fails
        raises :class:`PluginError`."""
        entry, implied = self._entry(name)
        merged = {**params, **implied}
        builtin = entry.info.origin == "builtin"
        default_inner = getattr(entry.factory, "default_inner", None)
        if default_inner is not None and not isinstance(merged.get("inner"), AllocationStrategy):
            inner = str(merged.get("inner") or default_inner)
            merged["inner"] = self._inner(entry.info.name, inner, merged)
        try:
            obj = _call_with_params(entry.factory, merged)
        except MqctlError:
            raise
        except Exception as exc:
            if builtin:
                raise
            raise PluginError(f"strategy {entry.info.name!r} ({entry.info.origin}) could not "
                              f"be created: {type(exc).__name__}: {exc}",
                              hint="check the plugin's documentation for its options") from exc
        if isinstance(obj, AllocationStrategy):
            return obj
        try:
            return _Adapter(obj, entry.info.name, **merged)
        except TypeError as exc:
            raise PluginError(f"strategy {entry.info.name!r} ({entry.info.origin}): {exc}",
                              hint="a strategy needs allocate() or allocate_group()") from exc

    def _inner(self, outer: str, inner: str, params: dict[str, Any]) -> AllocationStrategy:
        """The strategy a wrapping strategy (``default_inner`` set: machine-room-nearby) runs
        inside, created by name from this registry with the outer one's other parameters."""
        if self.canonical(inner)[0] == outer:
            raise own_inner_error(outer)
        return self.create(inner, **{k: v for k, v in params.items() if k != "inner"})

    def is_plugin(self, name: str) -> bool:
        return self._entry(name)[0].info.origin != "builtin"


def _builtin_registry() -> Registry:
    r = Registry()
    for cls in BUILTINS:
        r.register(cls)
    return r


registry = _builtin_registry()


def strategy_names(include_plugins: bool = True) -> list[str]:
    if include_plugins:
        registry.load_plugins()
    return registry.names()


def register(factory: Callable[..., Any], **kw: Any) -> StrategyInfo:
    """Register an in-process strategy (tests, notebooks): ``register(MyStrategy)``."""
    return registry.register(factory, **kw)

