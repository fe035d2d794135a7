"""The ``mqctl allocate`` workflow as a library call: inputs -> allocation(s) -> a Result.

The CLI parses flags into :class:`PreviewOptions`, reads the inputs (files here, the live
cluster through :mod:`mqctl.allocate.live`) and renders what :func:`preview` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.allocate import report
from mqctl.allocate.base import Allocation
from mqctl.allocate.engine import broadcast_allocation, compute_allocation
from mqctl.allocate.inputs import (
    Topology,
    load_assignment,
    load_topology,
    parse_consumer_spec,
    parse_queue_spec,
)
from mqctl.allocate.live import pops
from mqctl.allocate.plan import WhatIf, apply_membership, compare_with_reports, compute_moves
from mqctl.allocate.registry import registry
from mqctl.allocate.report import compact_queues
from mqctl.errors import PartialFailure, UsageError
from mqctl.models import MessageQueue, pop_queue_text
from mqctl.render import Column, Result, Table

if TYPE_CHECKING:
    from mqctl.allocate.live import LiveGroup, LiveReports
    from mqctl.render import Result

# which built-in strategy reads which parameter (for "option not used" notes)
_USES = {"virtual_nodes": {"consistent-hash"}, "rooms": {"machine-room"},
         "config": {"config"}, "inner": {"machine-room-nearby"},
         "broker_room_regex": {"machine-room-nearby"},
         "consumer_room_regex": {"machine-room-nearby"}}
_FLAG = {"virtual_nodes": "--virtual-nodes", "rooms": "--rooms", "config": "--queue-config",
         "inner": "--inner", "broker_room_regex": "--broker-room-regex",
         "consumer_room_regex": "--consumer-room-regex", "previous": "--previous"}


@dataclass(frozen=True)
class PreviewOptions:
    strategy: str = "avg"
    params: dict[str, Any] = field(default_factory=dict)
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    compare: str | None = None
    by_queue: bool = False

    @property
    def what_if(self) -> bool:
        return bool(self.add or self.remove or self.compare)

    def check_strategies(self) -> None:
        """Fail fast (before any network) on unknown names or parameters that cannot work."""
        for name in (self.strategy, self.compare):
            if name:
                registry.create(name, **self._params_for(name, probe=True))

    def _params_for(self, name: str, probe: bool = False) -> dict[str, Any]:
        p = dict(self.params)
        if probe and registry.info(name).uses_previous:
            p.setdefault("previous", {})
        return p

    def unused_notes(self) -> list[str]:
        used: set[str] = set()
        names = [n for n in (self.strategy, self.compare) if n]
        for n in names:
            info = registry.info(n)
            if info.origin != "builtin":
                return []  # a plugin may read anything
            key, implied = registry.canonical(n)
            used.add(key)
            if key == "machine-room-nearby":
                inner = implied.get("inner") or self.params.get("inner") or "avg"
                used.add(registry.canonical(str(inner))[0])
        notes = []
        for param, users in _USES.items():
            if param in self.params and not (users & used):
                notes.append(f"{_FLAG[param]} is not used by {' / '.join(sorted(used))}")
        if "previous" in self.params and not any(registry.info(n).uses_previous
                                                 for n in names):
            notes.append(f"--previous is not used by {' / '.join(sorted(used))}")
        return notes


def build_params(*, virtual_nodes: int | None = None, rooms: str | None = None,
                 queue_config: str | None = None, inner: str | None = None,
                 broker_room_regex: str | None = None, consumer_room_regex: str | None = None,
                 previous: str | None = None, topic: str | None = None) -> dict[str, Any]:
    """Strategy parameters from CLI values; files are read here (errors name the file)."""
    p: dict[str, Any] = {}
    if virtual_nodes is not None:
        p["virtual_nodes"] = virtual_nodes
    if rooms is not None:
        rs = [r.strip() for r in rooms.split(",") if r.strip()]
        if not rs:
            raise UsageError("--rooms needs at least one machine room", hint="e.g. --rooms hz,sh")
        p["rooms"] = rs
    if queue_config is not None:
        p["config"] = load_assignment(queue_config, topic, "queue config file")
    if inner is not None:
        p["inner"] = inner
    if broker_room_regex is not None:
        p["broker_room_regex"] = broker_room_regex
    if consumer_room_regex is not None:
        p["consumer_room_regex"] = consumer_room_regex
    if previous is not None:
        p["previous"] = load_assignment(previous, topic, "previous allocation file")
    return p


def offline_inputs(*, topology: str | None, queues: str | None, consumers: str | None,
                   topic: str | None, group: str | None) -> Topology:
    if topology is not None:
        if queues is not None or consumers is not None:
            raise UsageError("--topology cannot be combined with --queues/--consumers",
                             hint="put everything in the topology file, or use the shorthand")
        t = load_topology(topology)
        return Topology(group=group or t.group, queues=t.queues, consumers=t.consumers,
                        source=t.source, message_model=t.message_model)
    if queues is None or consumers is None:
        raise UsageError("--queues and --consumers go together",
                         hint="e.g. --queues broker-a:8,broker-b:8 --consumers 3")
    return Topology(group=group or "", queues=tuple(parse_queue_spec(queues, topic)),
                    consumers=tuple(parse_consumer_spec(consumers)), source="command line")


def _allocate(name: str, queues: Sequence[MessageQueue], consumers: Sequence[str], group: str,
              params: dict[str, Any], broadcasting: bool) -> Allocation:
    if broadcasting:
        return broadcast_allocation(queues, consumers, group=group)
    return compute_allocation(name, queues, consumers, group=group, **params)


def preview(queues: Sequence[MessageQueue], consumers: Sequence[str], group: str,
            opts: PreviewOptions, *, live: LiveGroup | None = None,
            reports: LiveReports | None = None, broadcasting: bool = False,
            running: LiveReports | None = None) -> tuple[Result, Allocation | None]:
    """Allocate (and compare); returns the Result to render and the base allocation.
    ``running``: the clients' running info as read (live), which says whether they pop
    (:func:`mqctl.allocate.live.pops`): then no allocation applies and none is made."""

    if not queues:
        where = f" of topic {live.topic}" if live else ""
        raise UsageError(f"no queues to allocate{where}",
                         hint="a topic needs readable queues (perm R); offline, give "
                              "--queues broker-a:8 or a topology with queues")
    if live is not None:
        _require_configured_queues(queues, opts.params, live.topic)
    if not consumers and not opts.add:
        if live is not None and live.failures:
            from mqctl.admin import failure_hint

            unread = ", ".join(sorted(f.broker for f in live.failures))
            raise PartialFailure(f"no consumer of {group!r} listed by the brokers that answered; "
                                 f"{unread} did not answer, so whether the group is online is "
                                 "unknown", [(f.broker, f.message) for f in live.failures],
                                 hint=failure_hint([f.error for f in live.failures],
                                                   partial=True))
        if live is not None:
            raise UsageError(f"group {group!r} has no online consumer on any broker of topic "
                             f"{live.topic}",
                             hint="check the group name, or preview a start with "
                                  "--add-consumer ID")
        raise UsageError("no consumers to allocate to",
                         hint="give --consumers c1,c2 (or a count), or consumers in the "
                              "topology")
    if live is not None:

        if pops(live, running or reports):
            res = pop_result(group, live, running or reports, opts)
            report.add_live(res, live)
            return res, None
    broadcasting = broadcasting or (live is not None and live.broadcasting)
    before = _allocate(opts.strategy, queues, consumers, group, opts.params, broadcasting)
    if opts.what_if:
        after_consumers = apply_membership(consumers, opts.add, opts.remove)
        after_name = opts.compare or opts.strategy
        after_params = dict(opts.params)
        if registry.info(after_name).uses_previous:
            # a sticky what-if starts from the current allocation under the base strategy
            after_params["previous"] = before.assignments
        after = _allocate(after_name, queues, after_consumers, group, after_params,
                          broadcasting)
        w = WhatIf(before, after, tuple(compute_moves(before, after)),
                   added=tuple(opts.add), removed=tuple(opts.remove))
        result = report.whatif_result(w, opts.by_queue)
    else:
        result = report.allocation_result(before, opts.by_queue)
    extra = opts.unused_notes()
    result.notes.extend(extra)
    if isinstance(result.data, dict):
        result.data["notes"] = list(result.data.get("notes", [])) + extra
    if live is not None:
        report.add_live(result, live)
    if reports is not None:
        diffs = compare_with_reports(before, reports.owned)
        report.add_differences(result, diffs, reports, before)
    return result, before


def _require_configured_queues(queues: Sequence[MessageQueue], params: dict[str, Any],
                               topic: str) -> None:
    """Live: ``--queue-config`` naming a queue the topic's route does not have is bad input
    (exit 2), as ``offsets reset --queues`` and ``locks release --queue`` refuse it. RocketMQ's
    AllocateMessageQueueByConfig hands out its list unchecked, so a client configured so would
    pull a queue id the broker refuses (PullMessageProcessor: ``queueId[..] is illegal``); the
    preview would show an owner of nothing. Offline (``--queues``/``--topology``) the list is
    returned as the Java class returns it (docs/allocate.md)."""
    cfg = params.get("config")
    if not isinstance(cfg, dict):
        return
    have = set(queues)
    unknown = sorted({mq for qs in cfg.values() if isinstance(qs, list) for mq in qs
                      if isinstance(mq, MessageQueue) and mq not in have})
    if unknown:
        raise UsageError(f"--queue-config names queue(s) the topic {topic} does not have: "
                         + ", ".join(m.short if m.topic == topic else f"{m.topic} {m.short}"
                                     for m in unknown[:5])
                         + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""),
                         hint=f"see `mqctl route {topic}` for its brokers and queues")


def pop_result(group: str, live: LiveGroup, reports: LiveReports | None,
               opts: PreviewOptions) -> Result:
    """A group that pops the topic: no queue allocation applies, so none is predicted. The
    broker assigns each pop client the queues it pops from (QueryAssignmentProcessor.
    allocate4Pop over the broker's member list with the group's popShareQueueNum: with 0, the
    default, every client gets every queue of every broker, queue id -1) and hands any of
    their messages to whichever client pops first. Where the clients' running info was read
    the table shows what the broker assigned each (its mqPopTable), a client that does not
    pop the topic with the queues it owns (mqTable), one that did not answer as unknown."""

    ids = list(dict.fromkeys(live.consumers))
    rows: list[dict[str, Any]] = []
    pop_data: dict[str, list[dict[str, Any]] | None] = {}
    for cid in ids:
        if reports is None:
            break
        if cid in reports.pop_queues:
            qs = reports.pop_queues[cid]
            rows.append({"consumer": cid, "mode": "pop", "queues": pop_queue_text(qs)})
            pop_data[cid] = [q.to_dict() for q in qs]
        elif cid in reports.owned:
            rows.append({"consumer": cid, "mode": "queues",
                         "queues": compact_queues(reports.owned[cid]) or "(none)"})
        else:
            rows.append({"consumer": cid, "mode": None, "queues": None})
            pop_data[cid] = None
    brokers = sorted({mq.broker_name for mq in live.queues})
    notes = [f"group {group} pops {live.topic} ("
             + ("the brokers list it as CONSUME_POP" if live.pop else
                "its clients' running info holds pop process queues, mqPopTable: 5.x push "
                "consumers with clientRebalance=false in the group's POP request mode")
             + "): the broker hands out messages, not queues, so queue allocation does not "
               "apply and no strategy predicts it; the broker assigns each pop client what it "
               "pops from (QueryAssignmentProcessor.allocate4Pop: queue id -1 is every queue "
               f"of that broker; with popShareQueueNum 0 or less, the default, every client pops "
               f"every queue of {', '.join(brokers) or 'every broker'})"]
    if rows:
        notes.append("POPS FROM: what each client reports the broker assigned it (running "
                     "info mqPopTable)")
    if any(r["mode"] == "queues" for r in rows):
        notes.append("mode `queues`: a client that does not pop the topic allocates it "
                     "itself with its strategy (clientRebalance true) over every member, pop "
                     "clients included: QUEUES is what it reports owning")
    if reports is not None:
        notes += [f"client {c} did not report its queues: {m}"
                  for c, m in sorted(reports.failures.items())]
    if opts.strategy != "avg" or opts.what_if:
        notes.append("--strategy, --add-consumer, --remove-consumer and --compare do not "
                     "apply to a pop group: nothing was allocated")
    data = {"strategy": "pop", "group": group, "topics": [live.topic],
            "assignments": {c: [] for c in ids}, "pop": pop_data, "unassigned": [],
            "idle": [], "duplicates": {}, "notes": notes}
    tables = ([Table([Column("consumer", "CONSUMER", kind="id"),
                      Column("mode", "MODE", unknown="-"),
                      Column("queues", "POPS FROM", unknown="-")], rows,
                     title=f"pop assignment of {group} on {live.topic}", name="consumers")]
              if rows else [])
    return Result(tables, data=data, notes=list(notes))
