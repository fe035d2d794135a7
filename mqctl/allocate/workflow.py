"""``mqctl allocate`` as small ordered steps: the request checked (before any network), the
offline inputs or the live group read (route, members, each client's running info), the
strategy the clients run, the preview; a frozen :class:`AllocationOutcome`.

Warnings (plugins that did not load, clients that do not subscribe, strategies the clients
disagree on) go to the run's context (:func:`mqctl.context.current`), as they are found.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqctl.allocate import registry, report
from mqctl.allocate.live import (
    check_subscribed,
    choose_strategy,
    per_client_allocation,
    pops,
    read_live_group,
    read_reports,
)
from mqctl.allocate.plan import compare_with_reports
from mqctl.allocate.preview import PreviewOptions, build_params, offline_inputs, preview
from mqctl.allocate.report import add_strategy_choice, strategies_result
from mqctl.context import current
from mqctl.errors import PartialFailure, UsageError

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.allocate.live import LiveGroup, LiveReports, StrategyChoice
    from mqctl.allocate.preview import PreviewOptions
    from mqctl.models import MessageQueue
    from mqctl.render import Result


@dataclass(frozen=True, slots=True)
class AllocateRequest:
    """What to allocate, as ``mqctl allocate`` takes it: a topology file, the shorthand
    (``queues`` ``broker-a:8,broker-b:8``, ``consumers`` ``3`` or ids), or the live group
    (``group`` and ``topic`` alone); the strategy and its parameters; a what-if (``add``,
    ``remove``, ``compare``); ``against_live``: compare with what each client owns."""

    group: str | None = None
    topic: str | None = None
    strategy: str | None = None
    topology: str | None = None
    queues: str | None = None
    consumers: str | None = None
    virtual_nodes: int | None = None
    queue_config: str | None = None
    rooms: str | None = None
    inner: str | None = None
    broker_room_regex: str | None = None
    consumer_room_regex: str | None = None
    previous: str | None = None
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    compare: str | None = None
    against_live: bool = False
    by_queue: bool = False

    @property
    def live(self) -> bool:
        """Reads the live cluster (no topology, no shorthand)."""
        return self.topology is None and self.queues is None and self.consumers is None


@dataclass(frozen=True, slots=True)
class Prepared:
    """The request checked, its offline inputs read and its options built."""

    request: AllocateRequest
    options: PreviewOptions
    topology: Any = None  # mqctl.allocate.inputs.Topology (offline)


@dataclass(frozen=True, slots=True)
class AllocationOutcome:
    """The preview (:class:`mqctl.render.Result`, as ``mqctl allocate`` prints it), what it
    rests on live (the group, the clients' reports, the strategy chosen) and what did not
    answer (``failures``: (who, why))."""

    result: Result
    live: LiveGroup | None = None
    reports: LiveReports | None = None
    choice: StrategyChoice | None = None
    failures: tuple[tuple[str, str], ...] = ()

    def error(self) -> PartialFailure | None:
        """Exit 8 when a broker or a client did not answer (the output covers the rest)."""
        if not self.failures:
            return None
        return PartialFailure(f"{len(self.failures)} broker/client request(s) failed: "
                              + "; ".join(f"{w}: {m}" for w, m in self.failures[:5]),
                              list(self.failures), hint="the output above covers what answered")


def plugin_warnings() -> None:
    """The strategy plugins that did not load, as warnings."""

    for p in registry.problems:
        current().warning(p)


def strategies() -> Result:
    """``--list-strategies``: the built-in strategies and the plugins."""

    infos = registry.infos()
    plugin_warnings()
    return strategies_result(infos)


def prepare(r: AllocateRequest) -> Prepared:
    """Check the request and read its files (before any network): live needs both a group
    and a topic; the offline inputs; the strategies exist and can work with what is given."""

    if r.live and bool(r.group) != bool(r.topic):
        raise UsageError(f"the live cluster needs both --group and --topic (got only "
                         f"{'--group' if r.group else '--topic'})",
                         hint="e.g. mqctl allocate -g GID_PAY -t TopicPay; `mqctl consumers "
                              "GROUP` lists the topics a group subscribes to")
    if r.live and not (r.group and r.topic):
        raise UsageError("nothing to allocate",
                         hint="give --topology FILE, or --queues and --consumers, or --group "
                              "and --topic to read the live cluster")
    if r.against_live and not r.live:
        raise UsageError("--against-live needs live inputs",
                         hint="use --group G --topic T without --topology/--queues")
    topo, file_topic = None, r.topic
    if not r.live:
        topo = offline_inputs(topology=r.topology, queues=r.queues, consumers=r.consumers,
                              topic=r.topic, group=r.group)
        topics = {mq.topic for mq in topo.queues}
        if file_topic is None and len(topics) == 1:
            file_topic = next(iter(topics))  # for 'broker:queueId' in --queue-config/--previous
    opts = PreviewOptions(
        strategy=r.strategy or "avg",
        params=build_params(virtual_nodes=r.virtual_nodes, rooms=r.rooms,
                            queue_config=r.queue_config, inner=r.inner,
                            broker_room_regex=r.broker_room_regex,
                            consumer_room_regex=r.consumer_room_regex, previous=r.previous,
                            topic=file_topic),
        add=r.add, remove=r.remove, compare=r.compare, by_queue=r.by_queue)
    try:
        opts.check_strategies()
    finally:
        plugin_warnings()
    return Prepared(r, opts, topo)


def offline(p: Prepared) -> AllocationOutcome:
    """The preview of offline inputs (pure)."""

    topo = p.topology
    result, _ = preview(list(topo.queues), list(topo.consumers), topo.group, p.options,
                        broadcasting=topo.broadcasting)
    return AllocationOutcome(result)


async def read_live(admin: Admin, group: str, topic: str
                    ) -> tuple[LiveGroup, LiveReports | None]:
    """Route, member lists and each client's running info (its strategy and queues).
    Read-only: GET_CONSUMER_RUNNING_INFO is forwarded by a broker to the client, one request
    per client."""

    live = await read_live_group(admin, group, topic)
    reports = None
    if live.consumers and not live.pop and not live.broadcasting:
        reports = await read_reports(admin, group, set(live.consumers), live.route)
    return live, reports


async def allocate(admin: Admin, p: Prepared) -> AllocationOutcome:
    """The preview of the live group: the strategy the clients report (a note says so; when
    they disagree each client's share as it computes it), and with ``against_live`` what
    each client owns."""

    r = p.request
    assert r.group is not None and r.topic is not None
    live, reports = await read_live(admin, r.group, r.topic)
    for w in check_subscribed(live, reports):  # exit 2 when no client subscribes
        current().warning(w)
    queues, consumers, opts = list(live.queues), list(live.consumers), p.options
    choice = None
    if not (pops(live, reports) or live.broadcasting):
        choice = choose_strategy(r.strategy, reports, consumers=consumers,
                                 virtual_nodes_given=r.virtual_nodes is not None)
        opts = with_choice(opts, choice)
    shown = reports if r.against_live else None
    if choice is not None and choice.strategy is None and not opts.what_if and consumers:
        result = per_client_preview(queues, consumers, r.group, opts, choice, live, shown)
    else:
        result, _ = preview(queues, consumers, r.group, opts, live=live, reports=shown,
                            broadcasting=False, running=reports)
    if choice is not None:
        add_strategy_choice(result, choice)
        for w in choice.warnings:
            current().warning(w)
    failures = [(f.broker, f.message) for f in live.failures]
    # without --against-live a silent client only leaves its strategy unknown (a note); a
    # pop group's table shows what each client pops from, so a silent one is a gap in it
    asked = shown if shown is not None else (reports if reports is not None and reports.pops
                                             else None)
    failures += sorted(asked.failures.items()) if asked is not None else []
    return AllocationOutcome(result, live, reports, choice, tuple(failures))


def with_choice(opts: PreviewOptions, choice: StrategyChoice) -> PreviewOptions:
    """The options with the strategy the clients run (the most common one for a what-if when
    they disagree); a client strategy mqctl cannot configure is a usage error that names it."""
    name = choice.strategy
    if name is None:
        counts: dict[str, int] = {}
        for n in choice.per_client.values():
            counts[n] = counts.get(n, 0) + 1
        name = max(counts, key=lambda k: (counts[k], k))
    new = dataclasses.replace(opts, strategy=name)
    if choice.source == "clients":
        try:
            new.check_strategies()
            for n in choice.per_client.values():
                dataclasses.replace(opts, strategy=n).check_strategies()
        except UsageError as exc:
            raise UsageError(f"the clients run {', '.join(choice.names)}: {exc.message}",
                             hint=exc.hint or "pass --strategy to predict with another "
                             "strategy") from None
    return new


def per_client_preview(queues: list[MessageQueue], consumers: list[str], group: str,
                       opts: PreviewOptions, choice: StrategyChoice, live: LiveGroup,
                       reports: LiveReports | None) -> Result:
    """Clients that disagree on the strategy: each client's share as it computes it."""

    alloc = per_client_allocation(queues, consumers, group, choice.per_client, opts.params)
    result = report.allocation_result(alloc, opts.by_queue)
    report.add_live(result, live)
    if reports is not None:
        report.add_differences(result, compare_with_reports(alloc, reports.owned), reports,
                               alloc)
    return result
