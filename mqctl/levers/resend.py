"""``mqctl group dlq resend G``: dead letters sent again, each exactly once, with the
levers' discipline (:mod:`mqctl.levers.workflow` is the model).

1. The plan (read-only, :func:`mqctl.levers.resend_select.select`): the dead letters selected,
   each with its unique key, original topic, store time, reconsume times and destination.
2. With ``execute``: the group's change lock (:func:`mqctl.interrupt.change_lock`, the one
   the levers and ``offsets reset`` take), the confirmation, then the journal
   (:mod:`mqctl.levers.journal`) before the first send.
3. Per message, in order: ``sent`` in the journal -> ``skipped``; ``sending`` without ``sent``
   (the run that wrote it ended in between) -> QUERY_MESSAGE by its unique key on the broker
   it was sent to, and a record carrying ``RESENT_FROM_DLQ`` = its id is ``found`` (recorded
   ``sent``, not sent again); else a ``sending`` record, SEND_MESSAGE_V2 as the Java producer
   sends it (producer group ``mqctl-resend``, :mod:`mqctl.remoting.send`), a ``sent`` record,
   and the read-back (VIEW_MESSAGE_BY_ID with the offset message id the broker answered):
   ``verified`` or ``sent-not-verified``. A broker's refusal is ``failed`` (its remark); no
   answer is ``unknown`` (it may be stored: ``--resume`` looks before sending it).
4. ``--rate`` spaces the sends; an interrupt (SIGINT, SIGTERM, SIGHUP) stops between two
   messages: the outcome says what was sent and the ``--resume`` command that finishes.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import BrokerError, ExitCode, MqctlError, PartialFailure, RefusedError, UsageError
from mqctl.interrupt import Stop, boundary
from mqctl.levers.journal import Journal, JournalState, free_journal, journal_path, read_journal
from mqctl.levers.resend_select import (
    RESENT_FROM,
    Letter,
    QueuePicker,
    ResendRequest,
    resent_properties,
    select,
)
from mqctl.levers.workflow import confirmed, under_change_lock
from mqctl.models import DLQ_PREFIX
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.message import StoredMessage, decode_messages, parse_offset_msg_id
from mqctl.remoting.send import parse_send_response, send_header
from mqctl.timeparse import now_ms

if TYPE_CHECKING:
    from mqctl.admin import Admin

PRODUCER_GROUP = "mqctl-resend"
Confirm = Callable[[str], Any]
BAD = ("failed", "unknown", "not-sent", "sent-not-verified")


@dataclass(frozen=True, slots=True)
class ResendPlan:
    request: ResendRequest
    namesrv: str
    created_ms: int
    letters: tuple[Letter, ...]
    held: int | None = None
    scanned: int = 0
    stopped: bool = False
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    journal: JournalState | None = None  # a resumed run's journal as read

    @property
    def group(self) -> str:
        return self.request.group

    def to_send(self) -> list[Letter]:
        return [x for x in self.letters if x.destination and not x.duplicate_of
                and (self.journal is None or x.msg_id not in self.journal.sent)]


@dataclass(frozen=True, slots=True)
class LetterResult:
    letter: Letter
    status: str  # verified | sent-not-verified | skipped | found | failed | unknown | ...
    detail: str = ""
    new_msg_id: str | None = None
    queue: str | None = None  # broker/queue it was sent to
    queue_offset: int | None = None


@dataclass(frozen=True, slots=True)
class ResendOutcome:
    plan: ResendPlan
    phase: str = "plan"
    results: tuple[LetterResult, ...] | None = None
    journal: str | None = None
    signal: str | None = None
    declined: bool = False
    notes: tuple[str, ...] = ()

    def count(self, *status: str) -> int:
        return sum(1 for r in self.results or () if r.status in status)

    def resume_command(self) -> str | None:
        if self.journal is None:
            return None
        return shlex.join(["mqctl", "-n", self.plan.namesrv, "group", "dlq", "resend",
                           self.plan.group, "--resume", self.journal, "--execute", "--yes"])

    def error(self) -> MqctlError | None:
        return outcome_error(self)


def plan_command(plan: ResendPlan) -> str:
    r = plan.request
    if r.resume:
        sel = ["--resume", r.resume]
    elif r.msg_ids:
        sel = [a for i in r.msg_ids for a in ("--msg-id", i)]
    elif r.all:
        sel = ["--all"]
    else:
        sel = [*(["--since", str(r.since_ms)] if r.since_ms is not None else []),
               *(["--until", str(r.until_ms)] if r.until_ms is not None else [])]
    extra = [] if r.resume else ["--to", r.to, "--limit", str(r.limit)]
    return shlex.join(["mqctl", "-n", plan.namesrv, "group", "dlq", "resend", r.group, *sel,
                       *extra, "--execute"])


async def make_plan(admin: Admin, r: ResendRequest, ns: str) -> ResendPlan:
    r.check()
    if r.resume is not None:
        return resumed_plan(r, ns, read_journal(r.resume))
    sel = await select(admin, r)
    notes = [f"not read: {f.broker}: {f.message}" for f in sel.failures]
    if not sel.letters:
        notes.append(f"nothing to send: no dead letter of {DLQ_PREFIX}{r.group} matches the "
                     "selection")
    if sel.scan_capped:
        notes.append(f"read the first {sel.scanned} dead letters only: narrow the selection "
                     "(--since/--until) to reach later ones")
    unknown = [x.msg_id for x in sel.letters if not x.destination]
    if unknown:
        notes.append(f"{len(unknown)} dead letter(s) carry no original topic (no RETRY_TOPIC "
                     "or DLQ_ORIGIN_TOPIC): not sent with --to original")
    return ResendPlan(r, ns, now_ms(), tuple(sel.letters), sel.held, sel.scanned, sel.stopped,
                      (), tuple(notes))


def resumed_plan(r: ResendRequest, ns: str, st: JournalState) -> ResendPlan:
    h = st.header
    if st.group != r.group:
        raise UsageError(f"the journal {st.path} is of group {st.group}, not {r.group}",
                         hint=f"resume it as `mqctl group dlq resend {st.group} --resume "
                              f"{st.path}`")
    if h.get("namesrv") and h.get("namesrv") != ns:
        raise UsageError(f"the journal {st.path} was written against name server "
                         f"{h.get('namesrv')}, not {ns}", hint="give the same -n")
    sel = h.get("selection") or {}
    req = replace(r, to=str(h.get("to") or "retry"), msg_ids=tuple(sel.get("msg_ids") or ()),
                  all=bool(sel.get("all")), since_ms=sel.get("since_ts"),
                  until_ms=sel.get("until_ts"), limit=int(sel.get("limit") or r.limit))
    letters = tuple(Letter.from_record(d) for d in h["messages"])
    notes = ["the last line of the journal was cut short (the run that wrote it was killed "
             "while writing): ignored"] if st.cut else []
    return ResendPlan(req, ns, int(h.get("created_ts") or now_ms()), letters,
                      h.get("held"), len(letters), bool(h.get("stopped")), (), tuple(notes), st)


async def run_resend(admin: Admin, namesrv: Sequence[str], r: ResendRequest, *,
                     stop: Stop | None = None, confirm: Confirm | None = None,
                     on_ready: Callable[[ResendPlan, str | None], None] | None = None,
                     warn: Callable[[str], None] | None = None) -> ResendOutcome:
    """The plan and, with ``r.execute``, the sends under the group's change lock."""
    ns = ";".join(namesrv)
    if not r.execute:
        boundary("start")
        return ResendOutcome(await make_plan(admin, r, ns))
    return await under_change_lock(
        namesrv, r.group, f"mqctl group dlq resend {r.group}", stop, warn,
        lambda notes: _Resend(admin, r, ns, stop or Stop(), confirm, on_ready, notes))

@dataclass
class _Resend:
    admin: Admin
    request: ResendRequest
    ns: str
    stop: Stop
    confirm: Confirm | None
    on_ready: Callable[[ResendPlan, str | None], None] | None
    notes: list[str]
    phase: str = "plan"
    results: list[LetterResult] = field(default_factory=list)

    def outcome(self, plan: ResendPlan, **kw: Any) -> ResendOutcome:
        return ResendOutcome(plan, phase=self.phase, notes=tuple(self.notes), **kw)

    async def run(self) -> ResendOutcome:
        boundary("start")
        self.stop.late = "after the plan was shown: nothing was sent"
        plan = await make_plan(self.admin, self.request, self.ns)
        boundary("planned")
        if plan.refusals or not plan.letters:
            return self.outcome(plan)
        path = (Path(self.request.resume) if self.request.resume else
                free_journal(Path(self.request.journal) if self.request.journal
                             else journal_path(plan.group, plan.created_ms)))
        if self.on_ready is not None:
            self.on_ready(plan, str(path))
        if plan.to_send() and not await confirmed(self.confirm, question(plan)):
            return self.outcome(plan, declined=True)
        self.stop.before_change()
        journal = (Journal.reopen(path) if plan.journal is not None
                   else Journal.create(path, header_of(plan)))  # before the first send
        self.phase = "send"
        boundary("sending")
        try:
            await self.send_all(plan, journal)
        finally:
            journal.close()
        if self.stop.stopped:
            self.stop.reported = True
            return self.outcome(plan, results=tuple(self.results), journal=str(path),
                                signal=self.stop.reason)
        self.phase = "done"
        self.stop.late = "after every message was sent: the result above stands"
        boundary("done")
        return self.outcome(plan, results=tuple(self.results), journal=str(path))

    async def send_all(self, plan: ResendPlan, journal: Journal) -> None:
        picker = QueuePicker(self.admin)
        interval = 1.0 / self.request.rate if self.request.rate else 0.0
        sent_any = False
        for i, x in enumerate(plan.letters):
            if self.stop.stopped:
                self.results += [LetterResult(y, "not-sent", f"interrupted ({self.stop.reason})")
                                 for y in plan.letters[i:]]
                return
            done = self.already(plan, x)
            if done is not None:
                self.results.append(done)
                continue
            pending = plan.journal.pending(x.msg_id) if plan.journal else None
            if pending is not None:
                found = await self.look_for(x, pending, journal)
                if found is not None:
                    self.results.append(found)
                    continue
            if sent_any and interval and await self.wait(interval):
                self.results += [LetterResult(y, "not-sent", f"interrupted ({self.stop.reason})")
                                 for y in plan.letters[i:]]
                return
            self.results.append(await self.send_one(x, picker, journal))
            sent_any = True
            boundary("message-done")

    def already(self, plan: ResendPlan, x: Letter) -> LetterResult | None:
        if x.duplicate_of:
            return LetterResult(x, "duplicate", f"same unique key as {x.duplicate_of}: sent "
                                "once")
        if not x.destination:
            return LetterResult(x, "failed", "no original topic (no RETRY_TOPIC property): use "
                                "--to retry")
        rec = plan.journal.sent.get(x.msg_id) if plan.journal else None
        if rec is not None:
            return LetterResult(x, "skipped", "already sent (journal)", rec.get("new_msg_id"),
                                rec.get("queue"), rec.get("queue_offset"))
        return None

    async def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` (--rate); True when an interrupt came meanwhile."""
        self.stop.sync()
        try:
            await asyncio.wait_for(self.stop.requested.wait(), timeout=seconds)
        except TimeoutError:
            pass
        return self.stop.stopped

    async def look_for(self, x: Letter, pending: dict[str, Any], journal: Journal
                       ) -> LetterResult | None:
        """A message whose ``sending`` has no ``sent``: found in the destination -> recorded
        ``sent (found)``; not found -> None (send it)."""
        if not x.unique_key:
            return LetterResult(x, "unknown", "sent before an interruption, no unique key to "
                                "look it up by: not sent again")
        addr, topic = str(pending.get("addr") or ""), str(pending.get("destination") or "")
        try:
            resp = await self.admin.query_message(addr, topic, x.unique_key, max_num=32,
                                                  begin_ms=0, end_ms=(1 << 63) - 1, unique=True)
        except MqctlError as exc:
            return LetterResult(x, "unknown", f"sent before an interruption; the look-up in "
                                f"{topic} failed ({exc.message}): not sent again, --resume "
                                "looks again")
        msgs = decode_messages(resp.body)[0] if resp.code == ResponseCode.SUCCESS else []
        hit = next((m for m in msgs if m.topic == topic
                    and m.properties.get(RESENT_FROM) == x.msg_id), None)
        if hit is None:
            return None
        queue = f"{pending.get('broker')}/{hit.queue_id}"
        journal.append({"event": "sent", "dlq_msg_id": x.msg_id, "unique_key": x.unique_key,
                        "new_msg_id": hit.msg_id, "queue": queue,
                        "queue_offset": hit.queue_offset, "status": "FOUND", "found": True})
        return LetterResult(x, "found", "sent before an interruption: found in "
                            f"{topic}, not sent again", hit.msg_id, queue, hit.queue_offset)

    async def content(self, x: Letter) -> StoredMessage:
        if x.message is not None:
            return x.message
        where = parse_offset_msg_id(x.msg_id)
        resp = await self.admin.view_message(*where) if where else None
        msgs = decode_messages(resp.body)[0] if resp is not None and resp.body else []
        if not msgs:
            raise MqctlError(f"the dead letter {x.msg_id} is no longer stored")
        return msgs[0]

    async def send_one(self, x: Letter, picker: QueuePicker, journal: Journal) -> LetterResult:
        assert x.destination is not None
        try:
            m = await self.content(x)
            broker, addr, qid = await picker.pick(x.destination, x)
        except MqctlError as exc:
            return LetterResult(x, "failed", exc.message)
        queue = f"{broker}/{qid}"
        journal.append({"event": "sending", "dlq_msg_id": x.msg_id, "unique_key": x.unique_key,
                        "destination": x.destination, "broker": broker, "addr": addr,
                        "queue": queue})
        header = send_header(group=PRODUCER_GROUP, topic=x.destination, queue_id=qid,
                             properties=resent_properties(m, self.request.to),
                             born_ms=m.born_timestamp, flag=m.flag,
                             sys_flag=m.sys_flag & 0x1 | (m.sys_flag & (0x7 << 8)))
        try:
            resp = await self.admin.send_message(addr, header, m.body)
        except BrokerError as exc:
            journal.append({"event": "failed", "dlq_msg_id": x.msg_id, "code": exc.code,
                            "remark": exc.remark})
            return LetterResult(x, "failed", f"{exc.code}: {(exc.remark or '').strip()}",
                                queue=queue)
        except MqctlError as exc:
            return LetterResult(x, "unknown", f"no answer ({exc.message}): it may be stored; "
                                "--resume looks for it before sending", queue=queue)
        res = parse_send_response(resp.code, resp.ext_fields)
        journal.append({"event": "sent", "dlq_msg_id": x.msg_id, "unique_key": x.unique_key,
                        "new_msg_id": res.msg_id, "queue": f"{broker}/{res.queue_id}",
                        "queue_offset": res.queue_offset, "status": res.status})
        return await self.verify(x, res.msg_id, f"{broker}/{res.queue_id}", res.queue_offset)

    async def verify(self, x: Letter, new_id: str | None, queue: str, offset: int | None
                     ) -> LetterResult:
        """VIEW_MESSAGE_BY_ID with the offset message id the broker answered."""
        where = parse_offset_msg_id(new_id or "")
        try:
            if where is None:
                raise MqctlError(f"the broker answered no offset message id ({new_id!r})")
            resp = await self.admin.view_message(*where)
        except MqctlError as exc:
            return LetterResult(x, "sent-not-verified", f"read-back failed: {exc.message}",
                                new_id, queue, offset)
        msgs = decode_messages(resp.body)[0] if resp is not None and resp.body else []
        ok = bool(msgs) and msgs[0].topic == x.destination and msgs[0].properties.get(
            RESENT_FROM) == x.msg_id
        return LetterResult(x, "verified" if ok else "sent-not-verified",
                            "read back" if ok else "not read back as sent", new_id, queue,
                            offset)


def header_of(plan: ResendPlan) -> dict[str, Any]:
    r = plan.request
    return {"group": plan.group, "namesrv": plan.namesrv, "to": r.to,
            "producer_group": PRODUCER_GROUP, "selection": r.selection(),
            "created_ts": plan.created_ms, "held": plan.held, "stopped": plan.stopped,
            "messages": [x.to_record() for x in plan.letters]}


def question(plan: ResendPlan) -> str:
    dests = sorted({x.destination for x in plan.to_send() if x.destination})
    return (f"About to send {len(plan.to_send())} dead letter(s) of {plan.group} to "
            f"{', '.join(dests)}. Proceed? [y/N] ")


def outcome_error(o: ResendOutcome) -> MqctlError | None:
    """Not confirmed, refused (6), interrupted (130), messages not sent or not verified (8)."""
    if o.declined:
        return RefusedError("the resend was not confirmed: nothing was sent, no journal "
                            "written", hint="answer y to send; --yes sends without asking")
    if o.plan.refusals:
        return RefusedError(o.plan.refusals[0], hint="nothing was sent" if
                            o.plan.request.execute else "the plan cannot be executed as it is")
    resume = o.resume_command()
    sent = o.count("verified", "sent-not-verified", "found")
    if o.signal is not None:
        return MqctlError(f"interrupted by {o.signal} during send: {sent} message(s) sent, "
                          f"{o.count('skipped')} skipped, {o.count('not-sent')} not sent; "
                          "nothing more was sent", hint=f"finish: {resume}",
                          exit_code=ExitCode.INTERRUPTED)
    bad = [r for r in o.results or () if r.status in BAD]
    if not bad:
        return None
    return PartialFailure(f"{len(bad)} of {len(o.results or ())} message(s) were not resent "
                          "and verified: " + "; ".join(f"{r.letter.msg_id} {r.status} "
                                                       f"({r.detail})" for r in bad[:3]),
                          [(r.letter.msg_id, r.status) for r in bad], hint=_bad_hint(bad, resume))


def _bad_hint(bad: list[LetterResult], resume: str | None) -> str | None:
    """--resume for what it can finish (failed, unknown, not sent); a look in the
    destination for what was sent and not read back (--resume skips it: the journal says
    sent)."""
    parts = [f"finish: {resume}"] if resume and any(
        r.status != "sent-not-verified" for r in bad) else []
    parts += [f"check: mqctl message find -t {r.letter.destination} --unique-key "
              f"{r.letter.unique_key}" for r in bad
              if r.status == "sent-not-verified" and r.letter.unique_key][:2]
    return "; ".join(parts) or None


__all__ = ["PRODUCER_GROUP", "LetterResult", "ResendOutcome", "ResendPlan", "make_plan",
           "outcome_error", "plan_command", "run_resend"]
