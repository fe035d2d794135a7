"""A connected cluster: :class:`AsyncCluster` (coroutines, for asyncio code) and
:class:`Cluster` (the same methods, blocking, for a script), built from a name-server address
or a profile. Their methods return the typed results the commands render (docs/api.md).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from mqctl.allocate.workflow import Prepared, allocate, offline, prepare
from mqctl.api.connection import connect
from mqctl.config import load_settings
from mqctl.context import Context, current, use
from mqctl.errors import UsageError

if TYPE_CHECKING:
    import asyncio
    from contextlib import AbstractAsyncContextManager

    from mqctl.admin import Admin
    from mqctl.allocate.workflow import AllocateRequest, AllocationOutcome, Prepared
    from mqctl.config import Settings
    from mqctl.diagnose import Diagnosis
    from mqctl.interrupt import Stop
    from mqctl.levers import LeverOutcome, LeverPlan, LeverRequest
    from mqctl.levers.clone import CloneOutcome, CloneRequest
    from mqctl.levers.resend import ResendOutcome, ResendPlan
    from mqctl.levers.resend_select import ResendRequest
    from mqctl.locks import LockStore, LockView
    from mqctl.locks.release import ReleaseOutcome, ReleaseRequest, ReleaseRun
    from mqctl.message.dlq import GroupDlq
    from mqctl.message.find import FindRequest, FindResult
    from mqctl.message.track_capture import TrackResult
    from mqctl.models import ClusterInfo, TopicRoute
    from mqctl.remoting.client import RemotingClient
    from mqctl.render import Result
    from mqctl.reset.files import RollbackInfo
    from mqctl.reset.types import Plan
    from mqctl.reset.workflow import (
        NothingToRestore,
        Planned,
        Progress,
        ResetOutcome,
        ResetRequest,
        ResetRun,
    )
    from mqctl.snapshot import SnapshotOutcome, SnapshotRequest
    from mqctl.views.group_config import GroupConfigView
    from mqctl.views.groups import GroupsCapture
    from mqctl.views.members import GroupMembers
    from mqctl.views.message import MessageAt
    from mqctl.views.progress import GroupProgress
    from mqctl.views.topic import TopicConsumers, TopicStatus

T = TypeVar("T")
P = ParamSpec("P")


def _in_context(fn: Callable[Concatenate[AsyncCluster, P], Awaitable[T]]
                ) -> Callable[Concatenate[AsyncCluster, P], Awaitable[T]]:
    """The method runs in its cluster's context (clock, display zone, warnings)."""
    @functools.wraps(fn)
    async def wrapper(self: AsyncCluster, *args: P.args, **kwargs: P.kwargs) -> T:
        with use(self.context):
            return await fn(self, *args, **kwargs)

    return wrapper


@dataclass(frozen=True, slots=True)
class TopicTables:
    """What ``mqctl topics`` reads: the name server's topic list, the cluster info, and every
    master's topic table (broker -> table, or its :class:`mqctl.admin.BrokerFailure`)."""

    names: list[str]
    info: ClusterInfo
    configs: dict[str, Any]


def resolve_settings(namesrv: str | Sequence[str] | None = None, *, profile: str | None = None,
                     config_file: str | None = None, **flags: Any) -> Settings:
    """Settings with mqctl's precedence (docs/config.md): what is given here (as the flags
    would be) > environment (NAMESRV_ADDR, MQCTL_*) > the profile > the defaults."""

    if namesrv is not None and not isinstance(namesrv, str):
        namesrv = ";".join(namesrv)
    given = {"namesrv": namesrv, **flags}
    return load_settings(config_file=config_file, profile=profile,
                         flags={k: v for k, v in given.items() if v is not None})


class AsyncCluster:
    """A cluster for asyncio code: ``async with AsyncCluster("127.0.0.1:9876") as c: await
    c.groups()``. One client (pooled connections) for every call until the block ends.

    ``settings`` (:class:`mqctl.config.Settings`) or the name server(s), a profile and the
    settings a flag gives (``timeout``, ``tls``, ``access_key``, ...: docs/config.md);
    ``concurrency``: requests in flight at once during fan-out (default the settings');
    ``context``: the clock, display zone and warnings of what this cluster's calls compute
    (default the caller's, :func:`mqctl.context.current`)."""

    def __init__(self, namesrv: str | Sequence[str] | None = None, *,
                 profile: str | None = None, config_file: str | None = None,
                 settings: Settings | None = None, concurrency: int | None = None,
                 max_in_flight: int | None = None, context: Context | None = None,
                 **flags: Any) -> None:
        self.settings = settings if settings is not None else resolve_settings(
            namesrv, profile=profile, config_file=config_file, **flags)
        self.context = context if context is not None else current()
        self.concurrency = concurrency or self.settings.concurrency
        self._max_in_flight = max_in_flight
        self._client: RemotingClient | None = None
        self._opened: AbstractAsyncContextManager[RemotingClient] | None = None

    @property
    def namesrv(self) -> list[str]:
        return list(self.settings.namesrv)

    # ---------------------------------------------------------------- the connection

    async def __aenter__(self) -> AsyncCluster:
        await self.open()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def open(self) -> RemotingClient:
        """Connect (once: later calls reuse the client)."""
        if self._client is None:

            opened = connect(self.settings, max_in_flight=self._max_in_flight)
            self._client = await opened.__aenter__()
            self._opened = opened
        return self._client

    async def aclose(self) -> None:
        opened, self._opened, self._client = self._opened, None, None
        if opened is not None:
            await opened.__aexit__(None, None, None)

    async def admin(self) -> Admin:
        """A fresh :class:`mqctl.admin.Admin` over the cluster's client (its route cache lives
        for one call, as a command's does)."""
        from mqctl.admin import Admin

        return Admin(await self.open(), self.settings.namesrv, concurrency=self.concurrency)

    def lock_store(self, state_dir: str | None = None) -> LockStore:
        """The memory of ``mqctl locks show`` (departed clients' claims) for this cluster."""
        from mqctl.locks import LockStore

        return LockStore(state_dir, self.settings.namesrv)

    # ---------------------------------------------------------------- read-only views

    @_in_context
    async def cluster_info(self) -> ClusterInfo:
        """Clusters and brokers as the name server knows them (``mqctl cluster``)."""
        return await (await self.admin()).cluster_info()

    @_in_context
    async def route(self, topic: str) -> TopicRoute:
        """A topic's route (``mqctl route``)."""
        return await (await self.admin()).topic_route(topic, cached=False)

    @_in_context
    async def topics(self) -> TopicTables:
        """Every topic the name server knows, with each master's topic table (``mqctl
        topics``)."""
        from mqctl.views.topics import capture_topic_tables

        return TopicTables(*await capture_topic_tables(await self.admin()))

    @_in_context
    async def groups(self, *, include_system: bool = False, match: str | None = None,
                     clients: bool = True, time_lag: bool = True, lag_threshold: int = 1000,
                     time_lag_threshold_s: float = 60.0) -> GroupsCapture:
        """Every consumer group, one summary each (``mqctl groups``)."""
        from mqctl.views.groups import capture_groups

        return await capture_groups(await self.admin(), include_system=include_system,
                                    match=match, clients=clients, time_lag=time_lag,
                                    lag_threshold=lag_threshold,
                                    time_lag_threshold_ms=int(time_lag_threshold_s * 1000))

    @_in_context
    async def group_progress(self, group: str, *, topic: str | None = None,
                             clients: bool = True, retry: bool = True,
                             state_dir: str | None = None) -> GroupProgress:
        """A group's per-queue progress (``mqctl group progress``); a group no broker knows
        raises :class:`mqctl.errors.NotFoundError`."""
        from mqctl.views.existence import read_nothing_of, require_group
        from mqctl.views.paused import paused_by, paused_on
        from mqctl.views.progress_capture import capture_progress

        admin = await self.admin()
        p = await capture_progress(admin, group, topic, running_info=clients, dlq=retry,
                                   produce_tps=True, locks=True,
                                   lock_store=self.lock_store(state_dir))
        if read_nothing_of(p):
            await require_group(admin, group)
        paused = await paused_on(admin, group)
        if paused:
            p = dataclasses.replace(p, paused_on=paused,
                                    paused_by=paused_by(admin.namesrv, group))
        return p

    @_in_context
    async def offsets(self, group: str, *, topic: str | None = None
                      ) -> tuple[GroupProgress, dict[Any, int]]:
        """A group's committed offsets per queue and the min offsets the stats left out
        (``mqctl offsets show``)."""
        from mqctl.views.progress_capture import capture_offsets

        return await capture_offsets(await self.admin(), group, topic)

    @_in_context
    async def consumers(self, group: str) -> GroupMembers:
        """A group's clients as every broker sees them (``mqctl consumers``)."""
        from mqctl.views.existence import require_group
        from mqctl.views.members import capture_members

        admin = await self.admin()
        m = await capture_members(admin, group)
        if m.online_state is False:
            await require_group(admin, group)
        return m

    @_in_context
    async def group_config(self, group: str) -> GroupConfigView:
        """The group's subscription group config on every broker (``mqctl group config``)."""
        from mqctl.views.group_config import capture_group_config

        return await capture_group_config(await self.admin(), group)

    @_in_context
    async def locks(self, group: str, *, topic: str | None = None, include_retry: bool = False,
                    state_dir: str | None = None, remember: bool = True,
                    store: LockStore | None = None) -> LockView:
        """Who holds which queue lock of an orderly group (``mqctl locks show``).
        ``remember``: read and update the state file of departed clients' claims (``store``:
        that memory, kept by the caller across calls, e.g. a watch)."""
        from mqctl.locks import capture_locks, ensure_lockable

        if store is None and remember:
            store = self.lock_store(state_dir)
        view = await capture_locks(await self.admin(), group, topic=topic,
                                   include_retry=include_retry, store=store)
        ensure_lockable(view)
        if store is not None:  # not kept: a warning, not only a note
            for p in [p for p in store.problems if p.startswith("cannot write")]:
                self.context.warning(f"{p}: the next run cannot recall this one's claims")
                store.problems.remove(p)
        return view

    @_in_context
    async def diagnose(self, group: str, *, topic: str | None = None,
                       sample_s: float | None = None, state_dir: str | None = None
                       ) -> Diagnosis:
        """Why a group is behind or stuck: ranked findings (``mqctl diagnose``)."""
        from mqctl.diagnose import run

        return await run(await self.admin(), group, topic=topic, sample_s=sample_s,
                         store=self.lock_store(state_dir))

    @_in_context
    async def topic_status(self, topic: str) -> TopicStatus:
        """Per queue: min/max offset and the last store time (``mqctl topic status``)."""
        from mqctl.views.topic import capture_topic_status

        return await capture_topic_status(await self.admin(), topic)

    @_in_context
    async def topic_consumers(self, topic: str, *, include_system: bool = False
                              ) -> TopicConsumers:
        """The groups consuming a topic (``mqctl topic consumers``)."""
        from mqctl.views.topic import capture_topic_consumers

        return await capture_topic_consumers(await self.admin(), topic,
                                             include_system=include_system)

    @_in_context
    async def message(self, topic: str, broker: str, queue_id: int, offset: int) -> MessageAt:
        """The message at an offset, read without moving any offset (``mqctl message
        show``)."""
        from mqctl.views.message import read_message

        return await read_message(await self.admin(), topic, broker, queue_id, offset)

    @_in_context
    async def find_messages(self, request: FindRequest) -> FindResult:
        """Messages by key, unique key, offset message id or time range (``mqctl message
        find``): bounded, de-duplicated across brokers, read-only."""
        from mqctl.message.find import find

        return await find(await self.admin(), request)

    @_in_context
    async def track_message(self, request: FindRequest) -> TrackResult:
        """What became of one message in each group of its topic (``mqctl message
        track``)."""
        from mqctl.message.track_capture import track

        return await track(await self.admin(), request)

    @_in_context
    async def group_dlq(self, group: str, *, last: int = 20) -> GroupDlq:
        """What ``%DLQ%<group>`` holds: count, store times, the last ``last`` dead letters by
        original topic (``mqctl group dlq``)."""
        from mqctl.message.dlq import group_dlq

        return await group_dlq(await self.admin(), group, last=last)

    # ---------------------------------------------------------------- workflows

    @_in_context
    async def plan_reset(self, group: str | ResetRequest, topic: str | None = None, *,
                         stop: Stop | None = None, **options: Any) -> AsyncResetPlan:
        """A reset of ``group``'s offsets on ``topic``, planned (read-only): exactly one target
        (``to_time``, ``by_duration``, ``to_earliest``, ``to_latest``, ``to_offset``,
        ``shift_by``, ``from_file``), and ``queues``, ``force``, ``export``, ``show_messages``,
        ``max_replay``, ``max_skip`` as ``mqctl offsets reset`` takes them; ``execute=True``:
        a plan to apply (the guards refuse what passes their limits, and the group's change
        lock is held from before its offsets are read). Or a :class:`mqctl.reset.workflow.
        ResetRequest`."""
        from mqctl.reset.workflow import reset_request

        request = group if not isinstance(group, str) else reset_request(
            group, topic or "", **options)
        return AsyncResetPlan(self, await self._plan(request, stop))

    @_in_context
    async def plan_rollback(self, file: str, *, stop: Stop | None = None, execute: bool = False,
                            **options: Any) -> AsyncResetPlan | NothingToRestore:
        """The restore of a rollback file (a path, or a NAME of ``mqctl offsets rollbacks``),
        planned; ``force``, ``max_replay``, ``max_skip`` as ``mqctl offsets rollback`` takes
        them. A file of only queues without a committed offset before the reset gives a
        :class:`mqctl.reset.workflow.NothingToRestore` (nothing to send)."""
        from mqctl.reset.workflow import NothingToRestore, rollback_request

        request = rollback_request(file, namesrv=";".join(self.namesrv), execute=execute,
                                   **options)
        if isinstance(request, NothingToRestore):
            return request
        return AsyncResetPlan(self, await self._plan(request, stop))

    @_in_context
    async def allocate(self, request: AllocateRequest | Prepared) -> AllocationOutcome:
        """The queue allocation of a live group as its clients compute it, or of given inputs
        (``mqctl allocate``): a :class:`mqctl.allocate.workflow.AllocateRequest` (checked
        first) or what :func:`mqctl.allocate.workflow.prepare` made of one. Offline inputs
        do not connect."""

        prepared = request if isinstance(request, Prepared) else prepare(request)
        if not prepared.request.live:
            return offline(prepared)
        return await allocate(await self.admin(), prepared)

    @_in_context
    async def snapshot(self, request: SnapshotRequest,
                       on_progress: Callable[[str, int], None] | None = None
                       ) -> SnapshotOutcome:
        """One capture of the groups into ``request.out`` (``mqctl snapshot``): the
        :class:`mqctl.snapshot.SnapshotOutcome` (its ``result()`` and ``error()``)."""
        from mqctl.snapshot import run_snapshot

        return await run_snapshot(self.admin, request, namesrv=";".join(self.namesrv),
                                  on_progress=on_progress)

    @_in_context
    async def plan_release(self, group: str | ReleaseRequest, queues: Sequence[str] = (), *,
                           stop: Stop | None = None, **options: Any) -> ReleaseRun:
        """A release of stale queue locks (``queues``: ``broker-a:3``), planned read-only:
        ``topic``, ``client``, ``force``, ``state_dir``, ``no_state`` as ``mqctl locks
        release`` takes them; ``execute=True``: a plan to apply (the group's change lock is
        held until its ``close()``; ``with`` closes it). Its ``apply()`` sends the releases
        and re-checks (:class:`mqctl.locks.release.ReleaseOutcome`)."""
        from mqctl.locks.release import ReleaseRun, release_request

        request = group if not isinstance(group, str) else release_request(
            group, queues, **options)
        return await ReleaseRun.plan(await self.admin(), self.namesrv, request,
                                     context=self.context, stop=stop)

    async def _plan(self, request: ResetRequest, stop: Stop | None) -> ResetRun:
        from mqctl.reset.workflow import ResetRun

        return await ResetRun.plan(await self.admin(), self.settings, request,
                                   context=self.context, stop=stop,
                                   concurrency=self.concurrency)

    @_in_context
    async def rollback_states(self, infos: Sequence[RollbackInfo]
                              ) -> tuple[dict[str, str], list[str]]:
        """Where the group of each rollback file is now: at the saved offsets, at the reset's
        (``mqctl offsets rollbacks --check``); and the files that could not be checked."""
        from mqctl.reset.workflow import rollback_states

        return await rollback_states(await self.admin(), infos)

    @_in_context
    async def lever(self, request: LeverRequest, *, stop: Stop | None = None,
                    confirm: Callable[[str], Any] | None = None,
                    on_ready: Callable[[LeverPlan, str | None], None] | None = None
                    ) -> LeverOutcome:
        """A config lever (``group pause/resume``, ``group config set/rollback``): planned,
        and with ``request.execute`` applied and verified under the group's change lock
        (:func:`mqctl.levers.run_lever`)."""
        from mqctl.levers import run_lever

        return await run_lever(await self.admin(), self.settings.namesrv, request, stop=stop,
                               confirm=confirm, on_ready=on_ready,
                               warn=self.context.warning)

    @_in_context
    async def clone_offsets(self, request: CloneRequest, *, stop: Stop | None = None
                            ) -> CloneOutcome:
        """``mqctl offsets clone``: G2's offsets on a topic made G1's (CLONE_GROUP_OFFSET),
        planned, and with ``request.execute`` applied and verified under G2's change lock."""
        from mqctl.levers.clone import run_clone

        return await run_clone(await self.admin(), self.settings.namesrv, request, stop=stop,
                               warn=self.context.warning)

    @_in_context
    async def resend_dlq(self, request: ResendRequest, *, stop: Stop | None = None,
                         confirm: Callable[[str], Any] | None = None,
                         on_ready: Callable[[ResendPlan, str | None], None] | None = None
                         ) -> ResendOutcome:
        """``mqctl group dlq resend``: dead letters selected (read-only), and with
        ``request.execute`` sent again exactly once each under the group's change lock, with
        a journal (:func:`mqctl.levers.resend.run_resend`)."""
        from mqctl.levers.resend import run_resend

        return await run_resend(await self.admin(), self.settings.namesrv, request, stop=stop,
                                confirm=confirm, on_ready=on_ready, warn=self.context.warning)


class AsyncResetPlan:
    """A planned reset of an :class:`AsyncCluster`: ``plan`` (:class:`mqctl.reset.Plan`),
    :meth:`result` (the plan as ``offsets reset`` prints it), :meth:`apply`. Holds the group's
    change lock (a plan made with ``execute=True``) until :meth:`close`, which :meth:`apply`
    does at its end unless the plan is used as ``with plan:``."""

    def __init__(self, cluster: AsyncCluster, run: ResetRun) -> None:
        self.cluster, self.run = cluster, run
        self._held = False

    @property
    def plan(self) -> Plan:
        return self.run.planned.plan

    @property
    def planned(self) -> Planned:
        return self.run.planned

    def result(self) -> Result:
        """The plan as ``mqctl offsets reset`` prints it (a :class:`mqctl.render.Result`:
        ``mqctl.render.emit(result, "plain")`` writes it)."""
        from mqctl.reset.rows import outcome_result

        return outcome_result(self.unchanged())

    def unchanged(self) -> ResetOutcome:
        """The outcome of not applying it (what ``offsets reset`` without --execute says)."""
        return self.run.unchanged()

    def __enter__(self) -> AsyncResetPlan:
        self._held = True
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.run.close()

    async def apply(self, *, rollback_file: str | None = None, confirm: Any = None,
                    on_progress: Callable[[Progress], None] | None = None,
                    verify_wait: float | None = None, stop: Stop | None = None
                    ) -> ResetOutcome:
        """Apply, verify, and say what happened (:class:`mqctl.reset.workflow.ResetOutcome`:
        its ``results`` per queue, ``rollback`` file, and :meth:`~mqctl.reset.workflow.
        ResetOutcome.error`, None when every queue took). ``rollback_file``: where the
        previous offsets go (written before the first change); ``confirm(question)``: asked
        before a large change (``y`` goes ahead); ``on_progress``: each step
        (:class:`mqctl.reset.workflow.Progress`); ``verify_wait``: seconds before the verdict
        (default by the reset path)."""

        if not self.run.planned.execute:
            raise UsageError("this plan was made to be read, not applied",
                             hint="plan it with execute=True to apply it")
        try:
            with use(self.cluster.context):
                return await self.run.apply(rollback_file=rollback_file, confirm=confirm,
                                            on_progress=on_progress, verify_wait=verify_wait,
                                            stop=stop)
        finally:
            if not self._held:
                self.close()


class ReleasePlan:
    """A planned release of a :class:`Cluster` (:class:`mqctl.locks.release.ReleaseRun`,
    blocking): ``plans``, ``before`` (the lock view it rests on), :meth:`ready_result`,
    :meth:`unchanged`, :meth:`apply`."""

    def __init__(self, cluster: Cluster, run: ReleaseRun) -> None:
        self.cluster, self.run = cluster, run

    @property
    def plans(self) -> tuple[Any, ...]:
        return self.run.plans

    def ready_result(self) -> Result:
        """The plan as ``locks release --execute`` prints it before sending."""
        from mqctl.locks.release_rows import ready_result

        return ready_result(self.run)

    def unchanged(self) -> ReleaseOutcome:
        return self.run.unchanged()

    def apply(self, **kw: Any) -> ReleaseOutcome:
        return self.cluster.run(lambda _c: self.run.apply(**kw))

    def close(self) -> None:
        self.run.close()

    def __enter__(self) -> ReleasePlan:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ResetPlan:
    """A planned reset of a :class:`Cluster`: :class:`AsyncResetPlan`, blocking."""

    def __init__(self, cluster: Cluster, plan: AsyncResetPlan) -> None:
        self.cluster, self.aio = cluster, plan

    @property
    def plan(self) -> Plan:
        return self.aio.plan

    @property
    def planned(self) -> Planned:
        return self.aio.planned

    def result(self) -> Result:
        return self.aio.result()

    def unchanged(self) -> ResetOutcome:
        return self.aio.unchanged()

    def __enter__(self) -> ResetPlan:
        self.aio.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.aio.close()

    def close(self) -> None:
        self.aio.close()

    def apply(self, **kw: Any) -> ResetOutcome:
        """:meth:`AsyncResetPlan.apply`, blocking."""
        return self.cluster.run(lambda _c: self.aio.apply(**kw))


class Cluster:
    """A cluster for a script: the methods of :class:`AsyncCluster`, blocking.

    ``with Cluster("127.0.0.1:9876") as c: c.groups()``; or ``Cluster(profile="prod")``. The
    asyncio event loop is the cluster's own (created on first use, closed by :meth:`close`),
    so it cannot be used from inside a running event loop: use :class:`AsyncCluster` there.
    A method interrupted (Ctrl-C) leaves the cluster usable; what it had sent is cancelled."""

    def __init__(self, namesrv: str | Sequence[str] | None = None, **kw: Any) -> None:
        self.aio = AsyncCluster(namesrv, **kw)
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def settings(self) -> Settings:
        return self.aio.settings

    @property
    def context(self) -> Context:
        return self.aio.context

    @property
    def namesrv(self) -> list[str]:
        return self.aio.namesrv

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def run(self, work: Callable[[AsyncCluster], Awaitable[T]]) -> T:
        """``work(async cluster)`` on the cluster's event loop, in its context."""
        import asyncio

        if self._loop is None:
            self._loop = asyncio.new_event_loop()

        async def go() -> T:
            return await work(self.aio)

        with use(self.context):
            return self._loop.run_until_complete(go())

    def close(self) -> None:
        """Close the connections and the event loop (what is still running is cancelled)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        import asyncio

        try:
            with use(self.context):
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(self.aio.aclose())
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()

    # the read-only views, as AsyncCluster's (their docs there)

    def cluster_info(self) -> ClusterInfo:
        return self.run(lambda c: c.cluster_info())

    def route(self, topic: str) -> TopicRoute:
        return self.run(lambda c: c.route(topic))

    def topics(self) -> TopicTables:
        return self.run(lambda c: c.topics())

    def groups(self, **kw: Any) -> GroupsCapture:
        return self.run(lambda c: c.groups(**kw))

    def group_progress(self, group: str, **kw: Any) -> GroupProgress:
        return self.run(lambda c: c.group_progress(group, **kw))

    def offsets(self, group: str, **kw: Any) -> tuple[GroupProgress, dict[Any, int]]:
        return self.run(lambda c: c.offsets(group, **kw))

    def consumers(self, group: str) -> GroupMembers:
        return self.run(lambda c: c.consumers(group))

    def group_config(self, group: str) -> GroupConfigView:
        return self.run(lambda c: c.group_config(group))

    def locks(self, group: str, **kw: Any) -> LockView:
        return self.run(lambda c: c.locks(group, **kw))

    def diagnose(self, group: str, **kw: Any) -> Diagnosis:
        return self.run(lambda c: c.diagnose(group, **kw))

    def topic_status(self, topic: str) -> TopicStatus:
        return self.run(lambda c: c.topic_status(topic))

    def topic_consumers(self, topic: str, **kw: Any) -> TopicConsumers:
        return self.run(lambda c: c.topic_consumers(topic, **kw))

    def message(self, topic: str, broker: str, queue_id: int, offset: int) -> MessageAt:
        return self.run(lambda c: c.message(topic, broker, queue_id, offset))

    def find_messages(self, request: FindRequest) -> FindResult:
        return self.run(lambda c: c.find_messages(request))

    def track_message(self, request: FindRequest) -> TrackResult:
        return self.run(lambda c: c.track_message(request))

    def group_dlq(self, group: str, *, last: int = 20) -> GroupDlq:
        return self.run(lambda c: c.group_dlq(group, last=last))

    # the workflows

    def plan_reset(self, group: str | ResetRequest, topic: str | None = None,
                   **kw: Any) -> ResetPlan:
        """:meth:`AsyncCluster.plan_reset`, blocking; its plan's ``apply`` too."""
        return ResetPlan(self, self.run(lambda c: c.plan_reset(group, topic, **kw)))

    def lever(self, request: LeverRequest, **kw: Any) -> LeverOutcome:
        return self.run(lambda c: c.lever(request, **kw))

    def clone_offsets(self, request: CloneRequest, **kw: Any) -> CloneOutcome:
        return self.run(lambda c: c.clone_offsets(request, **kw))

    def resend_dlq(self, request: ResendRequest, **kw: Any) -> ResendOutcome:
        return self.run(lambda c: c.resend_dlq(request, **kw))

    def plan_rollback(self, file: str, **kw: Any) -> ResetPlan | NothingToRestore:
        got = self.run(lambda c: c.plan_rollback(file, **kw))
        return ResetPlan(self, got) if isinstance(got, AsyncResetPlan) else got

    def rollback_states(self, infos: Sequence[RollbackInfo]
                        ) -> tuple[dict[str, str], list[str]]:
        return self.run(lambda c: c.rollback_states(infos))

    def allocate(self, request: AllocateRequest | Prepared) -> AllocationOutcome:
        return self.run(lambda c: c.allocate(request))

    def snapshot(self, request: SnapshotRequest,
                 on_progress: Callable[[str, int], None] | None = None) -> SnapshotOutcome:
        return self.run(lambda c: c.snapshot(request, on_progress))

    def plan_release(self, group: str | ReleaseRequest, queues: Sequence[str] = (),
                     **kw: Any) -> ReleasePlan:
        """:meth:`AsyncCluster.plan_release`, blocking; its ``apply`` too."""
        return ReleasePlan(self, self.run(lambda c: c.plan_release(group, queues, **kw)))
