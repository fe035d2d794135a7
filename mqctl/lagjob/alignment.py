"""How the lag report groups the times of its records into captures (``--align``): the rule,
its one implementation and the words that say when captures came closer than it (pure
Python, no Spark; docs/exports.md section 2.6 states the same rule for users).

What alignment is for: one moment of a cluster is often written by several exports a few
seconds apart (a cron run copying each broker's ``consumerOffset.json``, ``mqadmin
brokerConsumeStats`` per broker, ``consumerProgress`` next to ``topics.json``). Each sees a
different part of the cluster; together they are one capture. Two records of the **same**
thing (the same queue of a group, the same group's member list, the same broker's config of
a topic or group) at different times are never one moment: they are two captures, however
close. So, per cluster, over the distinct times of the records that take a capture
(observations of queues, consumerProgress group lists, topics.json and
subscriptionGroup.json entries; topicStatus points do not: the broker history is by time):

1. Walk the times in ascending order. The first time opens a capture, named by it
   (``capture_ts``).
2. A later time ``t`` joins the open capture when both hold:

   a. ``t - capture_ts <= align`` (the span is bounded by the capture's **first** time:
      alignment never chains, whatever the gaps between the times in it), and
   b. no record at ``t`` describes something the capture already holds from an earlier time
      (the same key: ``group, topic, broker, queue_id`` of an observation; ``group`` of a
      group list row; ``broker, topic`` of a topics.json entry; ``broker, group`` of a
      subscriptionGroup.json entry).

   Otherwise ``t`` opens the next capture.
3. ``align = 0``: every time is a capture of its own.

Records of one key at the **same** time (the same file given twice, two sources with the same
capture time) are duplicates of one observation: the capture keeps one (the source priority
of the kernel's dedupe, :func:`mqctl.lagjob.kernel.dedupe`). So every queue has at most one
observation time in a capture, the capture's values of a queue all come from that one
observation, and each row keeps its own ``observed_ts`` (rates and time lags use it, not the
capture's name).

A capture starts only where the walk says so, and whether a time joins depends only on the
capture's first time and the times after it: the captures from any capture start on are the
same whatever came before. A bounded re-run that reads the times from a capture start on
(its look-back) therefore finds the full run's captures.

:func:`align` is the walk for the times of one chain (times of a cluster less than ``align``
apart one after the other: a time after a larger gap always opens a capture, so each chain is
walked on its own). It takes each time with ``shared``: the latest earlier time of the chain
that has a record of a key this time has too (None: none); condition (b) is ``shared is None
or shared < capture_ts``. :func:`shared_times` computes ``shared`` from the records (the
Spark job computes the same with a window, ``transforms.latest_shared``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field


@dataclass
class Close:
    """Captures of one cluster opened by a time at most ``--align`` after the previous
    capture's last time (which alignment would have joined).

    ``shared``: they hold something the previous capture already had, at most ``--align``
    after its first time (the cluster captured again within ``--align``: rule 2b);
    ``closest_ms``: the smallest time between the first times of such a capture and the
    previous one. ``spans``: they came more than ``--align`` after the previous capture's
    first time (exports of one run that took longer than ``--align``: rule 2a)."""

    shared: int = 0
    closest_ms: int | None = None
    spans: int = 0

    def add(self, other: Close) -> None:
        self.shared += other.shared
        self.spans += other.spans
        if other.closest_ms is not None:
            self.closest_ms = (other.closest_ms if self.closest_ms is None
                               else min(self.closest_ms, other.closest_ms))

    def to_json(self) -> dict[str, int | None]:
        return {"shared": self.shared, "closest_ms": self.closest_ms, "spans": self.spans}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> Close:
        def num(k: str) -> int | None:
            v = d.get(k)
            return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

        return cls(num("shared") or 0, num("closest_ms"), num("spans") or 0)


@dataclass
class Aligned:
    """What :func:`align` found: the capture of each time (in the order given) and the
    close captures (:class:`Close`; counted only for captures starting at or after
    ``count_from``)."""

    starts: list[int] = field(default_factory=list)
    close: Close = field(default_factory=Close)


def align(times: Sequence[tuple[int, int | None]], align_ms: int,
          count_from: int | None = None) -> Aligned:
    """The captures of a cluster's times: ``times`` are ``(t, shared)`` in ascending,
    distinct ``t`` (module docstring: ``shared`` is the latest earlier time with a record of
    a key ``t`` has too). Returns each time's ``capture_ts`` and the close captures
    (:class:`Close`: opened by a time at most ``align_ms`` after the time before it) among
    those starting at ``count_from`` or later (all: None)."""
    out = Aligned()
    start: int | None = None
    prev: int | None = None
    for t, shared in times:
        if prev is not None and t <= prev:
            raise ValueError("times must be ascending and distinct")
        if start is None or prev is None or t - prev > align_ms:
            start = t  # a gap longer than --align: a capture like any other
        elif t - start <= align_ms and (shared is None or shared < start):
            pass  # joins the open capture
        else:
            if count_from is None or t >= count_from:
                if t - start <= align_ms:  # (2b: the open capture holds it already)
                    out.close.shared += 1
                    gap = t - start
                    out.close.closest_ms = (gap if out.close.closest_ms is None
                                            else min(out.close.closest_ms, gap))
                else:  # (2a: more than --align after the capture's first time)
                    out.close.spans += 1
            start = t
        prev = t
        out.starts.append(start)
    return out


def align_chains(rows: Iterable[tuple[str, int, int, int | None]], align_ms: int,
                 count_from: int | None = None
                 ) -> tuple[list[tuple[str, int, int]], dict[str, Close]]:
    """:func:`align` over every chain: ``rows`` are ``(cluster, chain, t, shared)`` in any
    order. Returns the times whose capture is named by an earlier time (``(cluster, t,
    capture_ts)``; every other time is a capture named by itself) and the close captures
    per cluster (those starting at ``count_from`` or later)."""
    chains: dict[tuple[str, int], list[tuple[int, int | None]]] = {}
    for cluster, chain, t, shared in rows:
        chains.setdefault((cluster, int(chain)), []).append(
            (int(t), None if shared is None else int(shared)))
    moved: list[tuple[str, int, int]] = []
    close: dict[str, Close] = {}
    for (cluster, _chain), times in sorted(chains.items()):
        times.sort()
        got = align(times, align_ms, count_from)
        moved += [(cluster, t, c) for (t, _s), c in zip(times, got.starts, strict=True)
                  if c != t]
        if got.close.shared or got.close.spans:
            close.setdefault(cluster, Close()).add(got.close)
    return moved, close


def shared_times(records: Iterable[tuple[int, Hashable]]) -> list[tuple[int, int | None]]:
    """``(t, shared)`` for the distinct times of ``records`` (``(t, key)``), ascending: for
    each time, the latest earlier time with a record of one of its keys (None: none). The
    reference for the Spark window that computes it (``transforms.latest_shared``)."""
    by_time: dict[int, set[Hashable]] = {}
    for t, key in records:
        by_time.setdefault(int(t), set()).add(key)
    seen: dict[Hashable, int] = {}  # key -> its latest time so far
    out: list[tuple[int, int | None]] = []
    for t in sorted(by_time):
        prev = [seen[k] for k in by_time[t] if k in seen]
        out.append((t, max(prev) if prev else None))
        for k in by_time[t]:
            seen[k] = t
    return out


def warnings(close: dict[str, Close], align_ms: int, window: int) -> list[str]:
    """The run's words for the close captures of each cluster (empty: none): on stderr, in
    summary.json's ``warnings`` and at the top of report.html."""
    from mqctl.lagjob.verdicts import duration

    out = []
    a = duration(align_ms)
    for cluster, c in sorted(close.items()):
        if c.shared:
            closest = duration(c.closest_ms) if c.closest_ms is not None else "-"
            out.append(
                f"{c.shared} capture(s) of cluster {cluster} came within --align {a} of the "
                f"previous one (closest {closest} apart) and observe queues it already observed: "
                "each is a capture of its own, not merged into the previous one. The status window "
                f"(--window {window} captures) and the rates assume captures further apart: "
                "over these the window spans less time than it does at your usual interval, "
                "and the rates are over a few seconds. Take the captures more than --align "
                "apart, or give a smaller --align.")
        if c.spans:
            out.append(
                f"{c.spans} capture(s) of cluster {cluster} began within --align {a} of the "
                "previous capture's last record but more than --align after its first: a "
                "capture spans at most --align from its first record, so exports of one run "
                "that took longer are split (part of the queues in each). Give a larger "
                "--align if these are the exports of one run.")
    return out


__all__ = ["Aligned", "Close", "align", "align_chains", "shared_times", "warnings"]
