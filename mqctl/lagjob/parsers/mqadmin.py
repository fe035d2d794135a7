"""mqadmin text: ``consumerProgress`` (ConsumerProgressSubCommand, every layout 4.x..5.3),
``brokerConsumeStats`` (BrokerConsumeStatsSubCommad) and ``topicStatus``
(TopicStatusSubCommand)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import tzinfo

from mqctl.lagjob.inputs import Kind, PathMeta, header_names, local_ms
from mqctl.lagjob.parsers.common import (
    MEMBER,
    OBS,
    OUT_OF_RANGE,
    POINT,
    SNAPSHOT_ONLY_NONE,
    Rec,
    bad,
    range_problem,
)

_PREAMBLE = ("RocketMQLog:", "log4j:", "$ ")
_DATE_TIME = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})"
                        r"(?:[.,]([0-9]{1,3}))?$")



# qid, broker offset, consumer offset, inflight, last consumed store time
_Offsets = tuple[int, int, int, int | None, int | None]

def _offset_rows(rows: Iterable[tuple[int, str]], header: list[str], source: str, kind: str,
                 ts: int, tz: tzinfo | None
                 ) -> Iterator[tuple[dict[str, str], _Offsets, Rec | None]]:
    """Each row of a per-queue offset table (consumerProgress, brokerConsumeStats) as
    ``({column: value}, (qid, broker offset, consumer offset, inflight, last time), None)``,
    or ``({}, _, bad record)``: fewer fields than the header (the last column takes the rest of
    the line: client ids and times hold spaces), a number that does not parse, or a value out
    of range. ``inflight`` and the last time are None without their column."""
    ncols = len(header)
    none: _Offsets = (0, 0, 0, None, None)
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < ncols:
            yield {}, none, bad(source, kind, lineno, "malformed row",
                                f"expected {ncols} columns", s, ts)
            continue
        vals = dict(zip(header[:-1], toks[: ncols - 1], strict=False))
        vals[header[-1]] = " ".join(toks[ncols - 1:])
        try:
            qid = int(vals["QID"])
            bo = int(vals["Broker Offset"])
            co = int(vals["Consumer Offset"])
            inflight = int(vals["Inflight"]) if "Inflight" in vals else None
            last = parse_local_time(vals.get("LastTime", ""), tz) if "LastTime" in vals else None
        except ValueError as exc:
            yield {}, none, bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(queue_ids=(qid,), broker_offset=bo, consumer_offset=co,
                            inflight=inflight,
                            pull_offset=co + inflight if inflight is not None else None)
        if why is not None:
            yield {}, none, bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        yield vals, (qid, bo, co, inflight, last), None


def parse_local_time(text: str, tz: tzinfo | None) -> int | None:
    """mqadmin's ``yyyy-MM-dd HH:mm:ss[,SSS]`` in the capturing machine's zone; None for N/A."""
    s = text.strip()
    if not s or s.upper() == "N/A":
        return None
    m = _DATE_TIME.match(s)
    if not m:
        raise ValueError(f"not a date: {s!r}")
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    ms = int((m.group(7) or "0").ljust(3, "0"))
    return local_ms(y, mo, d, h, mi, sec, ms, tz)


def _is_footer(s: str) -> bool:
    return s.startswith(("Consume TPS:", "Diff Total:", "Consume Diff Total:",
                         "Consume Inflight Total:", "Topic Put TPS:"))


def _table_lines(text: str) -> tuple[list[str] | None, int, list[tuple[int, str]]]:
    """(header names, header line no, [(line no, data line)]) of an mqadmin table."""
    header: list[str] | None = None
    hline = 0
    rows: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s or s.startswith(_PREAMBLE):
            continue
        if header is None:
            if s.startswith("#"):
                header, hline = header_names(s), i
            continue
        if _is_footer(s):
            continue
        rows.append((i, s))
    return header, hline, rows


def _no_table(source: str, kind: str, text: str, ts: int) -> Rec:
    first = next((ln.strip() for ln in text.splitlines()
                  if ln.strip() and not ln.strip().startswith(_PREAMBLE)), "")
    return bad(source, kind, None, "no table header", "the capture has no mqadmin table "
               "(an error message instead?)", first, ts)


def parse_consumer_progress(source: str, text: str, meta: PathMeta, ts: int, cluster: str,
                            tz: tzinfo | None) -> Iterator[Rec]:
    """``mqadmin consumerProgress`` with ``-g`` (every layout from 4.x to 5.3: optional
    ``#Client IP`` and ``#Inflight``) and without ``-g`` (one line per group)."""
    kind = Kind.CONSUMER_PROGRESS.value
    header, _, rows = _table_lines(text)
    if header is None:
        yield _no_table(source, kind, text, ts)
        return
    if "Group" in header and "Count" in header:
        yield from _consumer_progress_groups(source, rows, ts, cluster)
        return
    need = ("Topic", "Broker Name", "QID", "Broker Offset", "Consumer Offset")
    missing = [n for n in need if n not in header]
    if missing:
        yield bad(source, kind, None, "unknown table layout", "missing " + ", ".join(missing),
                  " ".join("#" + h for h in header), ts)
        return
    if meta.group is None:
        yield bad(source, kind, None, "group unknown",
                  "name the file consumerProgress.<GROUP>[.anything] or put it under "
                  "group=<GROUP>/", "", ts)
        return
    for vals, (qid, bo, co, inflight, last), err in _offset_rows(rows, header, source, kind,
                                                                 ts, tz):
        if err is not None:
            yield err
            continue
        ip = vals.get("Client IP")
        owner = ip if ip and ip.upper() != "N/A" else None
        yield (OBS, (ts, cluster, meta.group, vals["Topic"], vals["Broker Name"], qid, bo, None,
                     co, co + inflight if inflight is not None else None, last, None, owner,
                     [owner] if owner else None, None, None, None, kind, source,
                     *SNAPSHOT_ONLY_NONE))


def _consumer_progress_groups(source: str, rows: list[tuple[int, str]], ts: int,
                              cluster: str) -> Iterator[Rec]:
    # "%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d": Type/Model are empty when offline or pull
    kind = Kind.CONSUMER_PROGRESS.value
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < 5:
            yield bad(source, kind, lineno, "malformed row", "expected at least 5 columns", s,
                      ts)
            continue
        try:
            count, diff = int(toks[1]), int(toks[-1])
            int(toks[-2])
        except ValueError as exc:
            yield bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(members=count, diff_total=diff)
        if why is not None:
            yield bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        yield (MEMBER, (ts, cluster, toks[0], count, count > 0, diff, kind, source))


def parse_broker_consume_stats(source: str, text: str, ts: int, cluster: str,
                               tz: tzinfo | None) -> Iterator[Rec]:
    """``mqadmin brokerConsumeStats``: rows only for queues with lastTimestamp > 0 and
    diff >= diffLevel (never-consumed queues are absent; nothing is invented for them)."""
    kind = Kind.BROKER_CONSUME_STATS.value
    header, _, rows = _table_lines(text)
    if header is None:
        yield _no_table(source, kind, text, ts)
        return
    need = ("Topic", "Group", "Broker Name", "QID", "Broker Offset", "Consumer Offset")
    missing = [n for n in need if n not in header]
    if missing:
        yield bad(source, kind, None, "unknown table layout", "missing " + ", ".join(missing),
                  " ".join("#" + h for h in header), ts)
        return
    for vals, (qid, bo, co, _inflight, last), err in _offset_rows(rows, header, source, kind,
                                                                   ts, tz):
        if err is not None:
            yield err
            continue
        yield (OBS, (ts, cluster, vals["Group"], vals["Topic"], vals["Broker Name"], qid, bo,
                     None, co, None, last, None, None, None, None, None, None, kind, source,
                     *SNAPSHOT_ONLY_NONE))


def parse_topic_status(source: str, text: str, meta: PathMeta, ts: int,
                       cluster: str) -> Iterator[Rec]:
    """``mqadmin topicStatus -t T``: max offsets per queue (joined with store-file offsets)."""
    kind = Kind.TOPIC_STATUS.value
    header, _, rows = _table_lines(text)
    if header is None:
        yield _no_table(source, kind, text, ts)
        return
    need = ("Broker Name", "QID", "Min Offset", "Max Offset")
    missing = [n for n in need if n not in header]
    if missing:
        yield bad(source, kind, None, "unknown table layout", "missing " + ", ".join(missing),
                  " ".join("#" + h for h in header), ts)
        return
    if meta.topic is None:
        yield bad(source, kind, None, "topic unknown",
                  "name the file topicStatus.<TOPIC>[.anything] or put it under topic=<TOPIC>/",
                  "", ts)
        return
    idx = {n: i for i, n in enumerate(header)}
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < 4:
            yield bad(source, kind, lineno, "malformed row", "expected at least 4 columns", s,
                      ts)
            continue
        try:
            qid = int(toks[idx["QID"]])
            mn = int(toks[idx["Min Offset"]])
            mx = int(toks[idx["Max Offset"]])
        except (ValueError, IndexError) as exc:
            yield bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(queue_ids=(qid,), broker_offset=mx, min_offset=mn)
        if why is not None:
            yield bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        yield (POINT, (ts, cluster, meta.topic, toks[idx["Broker Name"]], qid, mx, mn, kind,
                       source))
