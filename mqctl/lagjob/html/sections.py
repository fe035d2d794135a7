"""Each charted group's section of the lag report's page, from the rows :mod:`.collect`
brought to the driver (pure: tested without Spark): its totals per capture (downsampled),
its queue lines, its owner lanes made of runs, and its marks by kind with their totals."""

from __future__ import annotations

from typing import Any

from mqctl.lagjob.html.data import HtmlLimits

Key = tuple[Any, ...]  # (topic, broker, queue_id)


def downsample(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """At most about ``n`` time-ordered rows: each bucket's maximum of every value (None when
    the bucket has no known value), at the bucket's first time."""
    if len(rows) <= n or n < 1:
        return rows
    t0, t1 = rows[0]["ts"], rows[-1]["ts"]
    width = max(1, (t1 - t0) // n + 1)
    out: list[dict[str, Any]] = []
    for r in rows:
        b = (r["ts"] - t0) // width
        if out and out[-1]["_b"] == b:
            cur = out[-1]
            for k in ("total_lag", "lag_seconds", "status_code"):
                if r.get(k) is not None:
                    cur[k] = r[k] if cur.get(k) is None else max(cur[k], r[k])
        else:
            out.append({**r, "_b": b})
    return out


def build_sections(keys: list[tuple[str, str]], group_rows: list[dict[str, Any]],
                   series: list[dict[str, Any]], marks: list[dict[str, Any]],
                   lim: HtmlLimits) -> list[dict[str, Any]]:
    """Per chosen group (``keys``: (cluster, group), its index the rows' ``_gi``), the
    section's data."""
    return [_section(cluster, group, [m for m in marks if m["_gi"] == gi],
                     [s for s in series if s.get("_gi") == gi], group_rows, lim)
            for gi, (cluster, group) in enumerate(keys)]


# a mark's columns after its time, for a total order: which marks the page keeps
# (``collect._Collector.marks``) and how it lists them (:func:`_mark_order`)
MARK_TIE_COLS = ("topic", "broker", "queue_id", "end_ts", "client", "other", "n1", "n2")
_NUMERIC_MARK_COLS = frozenset(("ts", "queue_id", "end_ts", "n1", "n2"))


def _mark_order(m: dict[str, Any]) -> tuple[Any, ...]:
    """A mark's place in its list: its time, then every other column (a total order: marks of
    one time, such as a dead client's queues, are listed the same in every run)."""
    return tuple((m.get(c) is None, m.get(c) if m.get(c) is not None else 0)
                 if c in _NUMERIC_MARK_COLS
                 else (m.get(c) is None, str(m.get(c) or ""))
                 for c in ("ts", *MARK_TIE_COLS))


def _section(cluster: str, group: str, mine: list[dict[str, Any]],
             series: list[dict[str, Any]], group_rows: list[dict[str, Any]],
             lim: HtmlLimits) -> dict[str, Any]:
    totals = downsample(sorted(series, key=lambda s: s["ts"]), lim.svg_points)
    queues, lanes, nq = _queues_and_lanes(mine, lim)
    _owner_runs(mine, queues, lanes)
    kinds: dict[str, list[dict[str, Any]]] = {}
    totals_by_kind: dict[str, int] = {}
    for m in mine:
        if m["kind"] in ("event", "storm", "unowned", "takeover"):
            kinds.setdefault(m["kind"], []).append(m)
            totals_by_kind[m["kind"]] = int(m["tot"] or 0)
    run_total = max((int(m["tot"] or 0) for m in mine if m["kind"] == "run"), default=0)
    latest = next((g for g in group_rows if (g.get("cluster") or "") == cluster
                   and g["group"] == group), {})
    for qd in queues.values():
        qd["points"].sort()
    for ld in lanes.values():
        ld["runs"].sort()
    return {
        "cluster": cluster, "group": group, "latest": latest, "totals": totals,
        "queues": sorted(queues.values(), key=lambda d: d["rank"]),
        "lanes": sorted(lanes.values(), key=lambda d: (str(d["topic"]), str(d["broker"]),
                                                       d["queue_id"] or 0)),
        "queue_count": nq, "runs_total": run_total,
        "events": sorted(kinds.get("event", []), key=_mark_order),
        "storms": sorted(kinds.get("storm", []), key=_mark_order),
        "unowned": sorted(kinds.get("unowned", []), key=_mark_order),
        "takeovers": sorted(kinds.get("takeover", []), key=_mark_order),
        "totals_by_kind": totals_by_kind,
    }


def _queues_and_lanes(mine: list[dict[str, Any]], lim: HtmlLimits
                      ) -> tuple[dict[Key, dict[str, Any]], dict[Key, dict[str, Any]], int]:
    """The ranked queues: the first ``lim.lines`` get a line, the first ``lim.lanes`` an
    owner lane; and how many queues the group has."""
    queues: dict[Key, dict[str, Any]] = {}
    lanes: dict[Key, dict[str, Any]] = {}
    nq = 0
    for m in mine:
        if m["kind"] == "queue":
            nq = max(nq, m["tot"] or 0)
            key = (m["topic"], m["broker"], m["queue_id"])
            d = {"topic": m["topic"], "broker": m["broker"], "queue_id": m["queue_id"],
                 "rank": m["rank"], "peak": m["n1"]}
            if (m["rank"] or 0) <= lim.lines:
                queues[key] = {**d, "points": []}
            if (m["rank"] or 0) <= lim.lanes:
                lanes[key] = {**d, "runs": [], "last_ts": m["end_ts"]}
    return queues, lanes, nq


def _owner_runs(mine: list[dict[str, Any]], queues: dict[Key, dict[str, Any]],
                lanes: dict[Key, dict[str, Any]]) -> None:
    """The lines' points, and each lane's runs: from an owner change to the next (or the
    queue's last capture)."""
    changes: dict[Key, list[tuple[int, Any]]] = {}
    for m in mine:
        key = (m["topic"], m["broker"], m["queue_id"])
        if m["kind"] == "line" and key in queues:
            queues[key]["points"].append((m["ts"], m["n1"], m["x"]))
        elif m["kind"] == "run" and key in lanes:
            changes.setdefault(key, []).append((m["ts"], m["client"]))
    run_rows = [m for m in mine if m["kind"] == "run"]
    # the bound keeps the first changes by lane: past the last lane it reached nothing is
    # known, and that lane's last kept owner is known only at its change
    cut_rank = (max(m["rank"] or 0 for m in run_rows)
                if run_rows and int(run_rows[0]["tot"] or 0) > len(run_rows) else None)
    for key, ch in changes.items():  # a run: from a change to the next (or the last capture)
        ch.sort(key=lambda c: c[0])
        cut = cut_rank is not None and lanes[key]["rank"] == cut_rank
        for i, (ts, owner) in enumerate(ch):
            end = (ch[i + 1][0] if i + 1 < len(ch) else
                   ts if cut else lanes[key]["last_ts"] or ts)
            if owner is not None:
                lanes[key]["runs"].append((ts, end, owner))
    if cut_rank is not None:
        for ln in lanes.values():
            ln["cut"] = (ln["rank"] or 0) >= cut_rank
