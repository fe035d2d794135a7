"""Per-queue rows of a round rolled up as the lag report does (``mqctl.lagjob.group_topics.
group_topic_rows``; ``mqctl.lagjob.transforms.status``: ``latest_per_broker``,
``latest_groups_rows``; health as
``transforms/health.py`` from the status): per group, topic and broker; per group and topic;
per group. The rows carry the columns the Prometheus families read (:mod:`mqctl.lagmetrics`).

Sums skip unknown values as the report's ``try_sum`` does, over the queues that were read; a
broker or group that did not answer this round makes the values it would have given unknown
(its queues' rows have ``read`` false), never a smaller total shown as the whole.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mqctl.lagmetrics import topic_kind
from mqctl.lagstatus import HEALTH_CODE, SEVERITY, STATUS_HEALTH, STATUSES


def _sum(vals: Iterable[Any]) -> Any:
    known = [v for v in vals if v is not None]
    if not known:
        return None
    return sum(sorted(known))  # (doubles in ascending order, as the report adds them)


def _max(vals: Iterable[Any]) -> Any:
    known = [v for v in vals if v is not None]
    return max(known) if known else None


def _min(vals: Iterable[Any]) -> Any:
    known = [v for v in vals if v is not None]
    return min(known) if known else None


def _any(vals: Iterable[bool | None]) -> bool | None:
    known = [v for v in vals if v is not None]
    return any(known) if known else None


def _grouped(rows: Iterable[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], list[dict]]:
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    return out


def _partial(rows: Sequence[dict[str, Any]], value: Any) -> Any:
    """``value``, or None when a queue of ``rows`` was not read this round."""
    return None if any(not r["read"] for r in rows) else value


def broker_rows(queues: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for (cluster, group, topic, broker), qs in sorted(_grouped(
            queues, "cluster", "group", "topic", "broker").items(), key=_key):
        est = _max(int(bool(q["estimated"])) for q in qs if q["lag_seconds"] is not None)
        out.append({"cluster": cluster, "group": group, "topic": topic, "broker": broker,
                    "total_lag": _partial(qs, _sum(q["lag"] for q in qs)),
                    "lag_seconds": _partial(qs, _max(q["lag_seconds"] for q in qs)),
                    "estimated": None if est is None else est == 1,
                    "consume_rate": _partial(qs, _sum(q["consume_rate"] for q in qs)),
                    "produce_rate": _partial(qs, _sum(q["produce_rate"] for q in qs)),
                    "queues": len(qs)})
    return out


def _key(item: tuple[tuple[Any, ...], Any]) -> tuple[str, ...]:
    return tuple("" if k is None else str(k) for k in item[0])


def topic_rows(queues: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per group and topic (the report's ``group_topic_rows``): totals, maxima, rates, the
    worst queue status and how many queues are in it, ``complete`` (the fraction of queues
    whose window is full); then each group's worst topic as ``group_status_code``."""
    out = []
    for (cluster, group, topic), qs in sorted(_grouped(
            queues, "cluster", "group", "topic").items(), key=_key):
        sev = [SEVERITY[q["status"]] for q in qs if q["status"] is not None]
        code = _partial(qs, max(sev) if sev else None)
        full = [float(q["complete"] >= 1.0) for q in qs if q["complete"] is not None]
        out.append({
            "cluster": cluster, "group": group, "topic": topic, "capture_ts": qs[0]["capture_ts"],
            "queues": len(qs), "queues_known": sum(q["lag"] is not None for q in qs),
            "total_lag": _partial(qs, _sum(q["lag"] for q in qs)),
            "max_lag": _partial(qs, _max(q["lag"] for q in qs)),
            "lag_seconds": _partial(qs, _max(q["lag_seconds"] for q in qs)),
            "consume_rate": _partial(qs, _sum(q["consume_rate"] for q in qs)),
            "produce_rate": _partial(qs, _sum(q["produce_rate"] for q in qs)),
            "status_code": code, "status": None if code is None else STATUSES[code],
            "status_queues": None if code is None else sev.count(code),
            "window_samples": _min(q["window_samples"] for q in qs),
            "complete": sum(full) / len(full) if full else None,
            "members": _max(q["members"] for q in qs), "online": _any(q["online"] for q in qs),
            "consume_type": _max(q.get("consume_type") for q in qs),
            "message_model": _max(q.get("message_model") for q in qs),
            "never_committed": sum(q["committed"] is False for q in qs),
            "unowned_now": sum(_unowned(q) for q in qs),
            "partial": any(not q["read"] for q in qs),
        })
    worst: dict[tuple[Any, Any], Any] = {}
    for r in out:
        k = (r["cluster"], r["group"])
        worst[k] = _max([worst.get(k), r["status_code"]])
    for r in out:
        r["group_status_code"] = worst[(r["cluster"], r["group"])]
    return out


def _unowned(q: dict[str, Any]) -> bool:
    """A queue of an online clustering push group that no member holds (owner known)."""
    return (q["read"] and q["online"] is True and q["owner"] is None and not q["owner_unknown"]
            and q.get("consume_type") not in ("CONSUME_POP", "CONSUME_ACTIVELY")
            and q.get("message_model") != "BROADCASTING")


def group_rows(topics: Iterable[dict[str, Any]], unread: Iterable[str] = ()
               ) -> list[dict[str, Any]]:
    """Per group (``latest_groups_rows`` and the health from the status): its own topics'
    lag and time lag, its %RETRY% and %DLQ% backlogs apart, the worst status and the queues in
    it over the topics in that state, ``complete`` weighted by known queues. ``unread``: groups
    not read at all this round (every value unknown)."""
    out = []
    by_group = _grouped(topics, "cluster", "group")
    for (cluster, group), ts in sorted(by_group.items(), key=_key):
        kinds = [topic_kind(t["topic"]) for t in ts]
        main = [t for t, k in zip(ts, kinds, strict=True) if k == "topic"]
        code = ts[0]["group_status_code"]
        worst = [t for t in ts if t["status_code"] is not None and t["status_code"] == code]
        weights = [(t["complete"], t["queues_known"]) for t in ts if t["complete"] is not None]
        den = sum(w for _, w in weights)
        status = None if code is None else STATUSES[code]
        health = STATUS_HEALTH.get(status) if status else None
        out.append({
            "cluster": cluster, "group": group, "capture_ts": ts[0]["capture_ts"],
            "topics": len(ts), "queues": sum(t["queues"] for t in ts),
            "total_lag": _sum_known(main, "total_lag"),
            "lag_seconds": _max_known(main, "lag_seconds"),
            "retry_lag": _sum_known([t for t, k in zip(ts, kinds, strict=True)
                                     if k == "retry"], "total_lag"),
            "dlq_lag": _sum_known([t for t, k in zip(ts, kinds, strict=True) if k == "dlq"],
                                  "total_lag"),
            "group_status_code": code, "group_status": status,
            "status_queues": sum(t["status_queues"] for t in worst) if worst else None,
            "status_queues_of": sum(t["queues"] for t in worst) if worst else None,
            "window_samples": _min(t["window_samples"] for t in ts),
            "complete": (sum(c * w for c, w in weights) / den) if den else None,
            "members": _max(t["members"] for t in ts), "online": _any(t["online"] for t in ts),
            "consume_type": _max(t["consume_type"] for t in ts),
            "message_model": _max(t["message_model"] for t in ts),
            "health": health, "health_code": None if health is None else HEALTH_CODE[health],
            "unowned_now": sum(t["unowned_now"] for t in ts),
        })
    out += [{"cluster": None, "group": g, "read": False} for g in sorted(set(unread))
            if not any(r["group"] == g for r in out)]
    return out


def _sum_known(rows: list[dict[str, Any]], key: str) -> Any:
    """The report's sum over topics (unknown values skipped; None for no such topic), or None
    when a queue of one of them was not read this round (a part is no whole)."""
    return None if any(r["partial"] for r in rows) else _sum(r[key] for r in rows)


def _max_known(rows: list[dict[str, Any]], key: str) -> Any:
    return None if any(r["partial"] for r in rows) else _max(r[key] for r in rows)
