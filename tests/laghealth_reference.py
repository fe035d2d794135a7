"""The Spark report's rebalance and health transforms restated row by row in plain Python, from
their definitions (``mqctl/lagjob/transforms/rebalance.py``: ``owner_track``,
``changes_from_track``, ``unowned_from_track``, ``capture_resets``, ``mark_resets``,
``drop_reset_gaps``, ``rebalance_events``, ``rebalance_rounds``, ``rebalance_storms``;
``status.with_rebalances``; ``health.group_health``): each window function as a partition,
an order and a frame over dict rows. The reference both implementations are checked
against: :mod:`mqctl.laghealth` (tests/test_laghealth.py) and the Spark transforms
(tests/lagjob/test_laghealth_spark.py), over the same random histories."""

from __future__ import annotations

from collections import defaultdict

GQUEUE = ("cluster", "group", "topic", "broker", "queue_id")


def _parts(rows, keys, order):
    out = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    for v in out.values():
        v.sort(key=order)
    return out


def owner_track(obs):
    """``owner_track``: the rows not read dropped, then the captures that know ownership,
    each with its previous owner and capture (``lag``) and its next capture (``lead``)."""
    o = [r for r in obs if not (r["owner"] is None and r["owner_unknown"])]
    known = defaultdict(int)
    for r in o:
        known[(r["cluster"], r["group"], r["topic"], r["capture_ts"])] |= r["owner"] is not None
    o = [r for r in o if known[(r["cluster"], r["group"], r["topic"], r["capture_ts"])]
         or r["online"] is False]
    out = []
    for rows in _parts(o, GQUEUE, lambda r: r["capture_ts"]).values():
        island, prev_none = 0, None
        for i, r in enumerate(rows):
            none = int(r["owner"] is None)
            if prev_none is not None and none != prev_none:
                island += 1
            prev_none = none
            out.append({**r, "_prev_owner": rows[i - 1]["owner"] if i else None,
                        "_prev_ts": rows[i - 1]["capture_ts"] if i else None,
                        "_next_ts": rows[i + 1]["capture_ts"] if i + 1 < len(rows) else None,
                        "_none": none, "_island": island})
    return out


def changes_from_track(track):
    out = []
    for r in track:
        if r["_prev_ts"] is None or r["owner"] == r["_prev_owner"]:
            continue
        base = {k: r[k] for k in GQUEUE} | {"ts": r["capture_ts"],
                                            "window_start_ts": r["_prev_ts"],
                                            "cause": "rebalance"}
        if r["owner"] is not None:
            out.append({**base, "client": r["owner"], "change": "gained"})
        if r["_prev_owner"] is not None:
            out.append({**base, "client": r["_prev_owner"], "change": "lost"})
    return out


def unowned_from_track(track):
    isl = defaultdict(list)
    for r in track:
        isl[(*(r[k] for k in GQUEUE), r["_island"])].append(r)
    out = []
    for k, rows in isl.items():
        if max(r["_none"] for r in rows) != 1:
            continue
        first = min(rows, key=lambda r: r["capture_ts"])
        last = max(rows, key=lambda r: r["capture_ts"])
        out.append({**dict(zip(GQUEUE, k[:5], strict=True)), "since_ts": first["_prev_ts"],
                    "start_ts": first["capture_ts"], "end_ts": last["_next_ts"]})
    return out


def capture_resets(obs):
    o = [r for r in obs if r["owner"] is not None and r["consumer_offset"] is not None]
    back = []
    for rows in _parts(o, GQUEUE, lambda r: r["capture_ts"]).values():
        for i in range(1, len(rows)):
            p, r = rows[i - 1], rows[i]
            if r["consumer_offset"] < p["consumer_offset"] and r["owner"] == p["owner"]:
                back.append(r)
    ev = {}
    for r in back:
        ev[(r["capture_ts"], r["cluster"], r["group"], r["topic"], r["owner"])] = 1
    return [{"ts": k[0], "cluster": k[1], "group": k[2], "topic": k[3], "client": k[4],
             "cause": "reset", "n_gained": 0, "n_lost": 0} for k in ev]


def mark_resets(changes, resets, window_ms=30_000):
    marks = set()
    for rows in _parts(changes, GQUEUE,
                       lambda r: (r["ts"], -ord(r["change"][0]))).values():  # change desc
        for i in range(len(rows) - 1):
            a, b = rows[i], rows[i + 1]
            if a["change"] != "lost" or b["change"] != "gained" or a["client"] != b["client"]:
                continue
            for r in resets:
                if ((r["cluster"], r["group"], r["client"])
                        == (a["cluster"], a["group"], a["client"])
                        and a["window_start_ts"] - window_ms <= r["ts"] <= b["ts"] + window_ms):
                    q = tuple(a[k] for k in GQUEUE)
                    marks |= {(q, a["client"], a["ts"], "lost"), (q, a["client"], b["ts"],
                                                                  "gained")}
    return [{**c, "cause": "reset"} if (tuple(c[k] for k in GQUEUE), c["client"], c["ts"],
                                        c["change"]) in marks else c for c in changes]


def drop_reset_gaps(unowned, changes):
    gaps = {(tuple(c[k] for k in GQUEUE), c["ts"]) for c in changes
            if c["cause"] == "reset" and c["change"] == "lost"}
    return [u for u in unowned if (tuple(u[k] for k in GQUEUE), u["start_ts"]) not in gaps]


def rebalance_events(changes):
    ev = defaultdict(lambda: {"gained": set(), "lost": set()})
    for c in changes:
        k = (c["ts"], c["cluster"], c["group"], c["topic"], c["client"], c["cause"])
        ev[k][c["change"]].add(f"{c['broker']}:{c['queue_id']}")
    return [{"ts": k[0], "cluster": k[1], "group": k[2], "topic": k[3], "client": k[4],
             "cause": k[5], "n_gained": len(v["gained"]), "n_lost": len(v["lost"])}
            for k, v in ev.items()]


def rebalance_rounds(events, gap_ms):
    rounds = []
    for rows in _parts([e for e in events if e["cause"] != "reset"], ("cluster", "group"),
                       lambda r: r["ts"]).values():
        n = 0
        for i, e in enumerate(rows):
            if i == 0 or e["ts"] - rows[i - 1]["ts"] > gap_ms:
                n += 1
                rounds.append({"cluster": e["cluster"], "group": e["group"], "start_ts": e["ts"],
                               "end_ts": e["ts"], "events": 0})
            rounds[-1]["end_ts"] = e["ts"]
            rounds[-1]["events"] += 1
    return rounds


def rebalance_storms(rounds, min_rounds, window_ms, round_max_ms=0):
    storms = []
    for (cluster, group), rs in _parts(rounds, ("cluster", "group"),
                                       lambda r: r["start_ts"]).items():
        trig = []
        for r in rs:  # rangeBetween(-window, 0) over start_ts: peers included
            frame = [x for x in rs if r["start_ts"] - window_ms <= x["start_ts"] <= r["start_ts"]]
            if len(frame) >= min_rounds:
                trig.append((min(x["start_ts"] for x in frame), r["end_ts"], "rounds"))
        if round_max_ms > 0:
            trig += [(r["start_ts"], r["end_ts"], "long-round") for r in rs
                     if r["end_ts"] - r["start_ts"] > round_max_ms]
        trig.sort()
        storm_of, n, maxe = [], 0, None
        for s, e, _rule in trig:
            if maxe is None or s > maxe:
                n += 1
            storm_of.append(n)
            maxe = e if maxe is None else max(maxe, e)
        for k in sorted(set(storm_of)):
            mine = [t for t, m in zip(trig, storm_of, strict=True) if m == k]
            s0, e0 = min(t[0] for t in mine), max(t[1] for t in mine)
            inside = [r for r in rs if s0 <= r["start_ts"] <= e0]
            storms.append({"cluster": cluster, "group": group, "start_ts": s0, "end_ts": e0,
                           "rounds": len(inside), "events": sum(r["events"] for r in inside),
                           "rule": "+".join(sorted({t[2] for t in mine}))})
    return storms


_STATUS_TO_HEALTH = {0: 0, 1: 1, 2: 2, 3: 2, 4: 2}


def group_health(groups, storms, unowned, window_ms, unowned_max):
    out = {}
    for g in groups:
        key = (g["cluster"], g["group"])
        hi, lo = g["capture_ts"], g["capture_ts"] - window_ms
        mine = [s for s in storms if (s["cluster"], s["group"]) == key]
        rec = [s for s in mine if s["end_ts"] >= lo]
        per_q = defaultdict(list)
        for u in unowned:
            if (u["cluster"], u["group"]) == key:
                a = max(u["start_ts"], lo)
                b = min(hi if u["end_ts"] is None else u["end_ts"], hi)
                now = u["start_ts"] <= hi and (u["end_ts"] is None or u["end_ts"] > hi)
                per_q[tuple(u[k] for k in GQUEUE)].append((a, b, now))
        unowned_ms, now_q = 0, set()
        for q, spans in per_q.items():
            spans.sort(key=lambda s: (s[0], s[1]))
            islands, reach = [], None
            for a, b, now in spans:
                if reach is None or a > reach:
                    islands.append([])
                islands[-1].append((a, b, now))
                reach = b if reach is None else max(reach, b)
            for isl in islands:
                unowned_ms += max(max(x[1] for x in isl) - min(x[0] for x in isl), 0)
                if any(x[2] for x in isl):
                    now_q.add(q)
        share = (min(unowned_ms / (g["queues"] * float(max(1, window_ms))), 1.0)
                 if g["queues"] > 0 else None)
        base = _STATUS_TO_HEALTH.get(g["group_status_code"])
        bad = g["online"] is not False and (share or 0.0) >= unowned_max and unowned_ms > 0
        rules = sorted({p for s in rec for p in s["rule"].split("+")})
        out[key] = {
            "storms": len(mine), "in_storm": bool(rec),
            "storm_start_ts": min((s["start_ts"] for s in rec), default=None),
            "storm_end_ts": max((s["end_ts"] for s in rec), default=None),
            "storm_rounds": sum(s["rounds"] for s in rec) if rec else None,
            "storm_events": sum(s["events"] for s in rec) if rec else None,
            "storm_rule": "+".join(rules) if rec else None, "unowned_ms": unowned_ms,
            "unowned_share": share, "unowned_now": len(now_q),
            "health_code": 2 if rec or bad else base}
    return out


def report_reference(obs, groups, *, round_gap_ms=20_000, storm_rounds=3,
                     storm_window_ms=600_000, storm_round_max_ms=60_000, unowned_max=0.1):
    """What the report's captures-only path gives per group (``stages.rebalance_history``
    without logs, then ``latest``): the health columns and ``rebalances``."""
    track = owner_track(obs)
    resets = capture_resets(obs)
    changes = changes_from_track(track)
    if resets:
        changes = mark_resets(changes, resets)
    unowned = unowned_from_track(track)
    if resets:
        unowned = drop_reset_gaps(unowned, changes)
    events = rebalance_events(changes) + resets
    rounds = rebalance_rounds(events, round_gap_ms)
    storms = rebalance_storms(rounds, storm_rounds, storm_window_ms, storm_round_max_ms)
    out = group_health(groups, storms, unowned, storm_window_ms, unowned_max)
    for (c, g), v in out.items():
        v["rebalances"] = sum(1 for e in events if (e["cluster"], e["group"]) == (c, g)
                              and e["cause"] != "reset")
    return out


def random_owner_histories(seed: int = 7, groups: int = 12):
    """Random owner histories of ``groups`` groups: clients joining, leaving and flapping,
    captures close together and far apart, owners not read, offline captures, offsets going
    back with the same owner (resets), queues left unowned. (obs rows, group rows)."""
    import random

    rng = random.Random(seed)
    obs, latest = [], []
    for gi in range(groups):
        group, cluster = f"G{gi}", rng.choice(["C", "D"])
        clients = [f"10.0.0.{k}@{k}" for k in range(rng.randint(1, 4))]
        topics = [f"T{k}" for k in range(rng.randint(1, 2))]
        queues = [(t, b, q) for t in topics for b in ("a", "b") for q in range(rng.randint(1, 3))]
        ts, offsets = 1_700_000_000_000, dict.fromkeys(queues, 100)
        churn = rng.random()
        steps = ([5_000, 10_000, 15_000] if rng.random() < 0.3  # continuous churn: long rounds
                 else [5_000, 15_000, 30_000, 30_000, 60_000, 250_000])
        last_ts, last_online = ts, None
        for _ in range(rng.randint(1, 40)):
            ts += rng.choice(steps)
            online = rng.choice([True] * 6 + [False, None])
            owners = {}
            for q in queues:
                if online is False:
                    owners[q] = None
                elif rng.random() < churn:
                    owners[q] = rng.choice([*clients, None])
                else:
                    owners[q] = clients[queues.index(q) % len(clients)]
            for q in queues:
                unknown = rng.random() < 0.05
                off = offsets[q] = (offsets[q] - rng.randint(1, 20) if rng.random() < 0.08
                                    else offsets[q] + rng.randint(0, 30))
                obs.append({"cluster": cluster, "group": group, "topic": q[0], "broker": q[1],
                            "queue_id": q[2], "capture_ts": ts,
                            "owner": None if unknown else owners[q], "owner_unknown": unknown,
                            "online": online,
                            "consumer_offset": None if rng.random() < 0.05 else off})
            last_ts, last_online = ts, online
        latest.append({"cluster": cluster, "group": group, "capture_ts": last_ts,
                       "group_status_code": rng.choice([None, 0, 0, 1, 2, 3, 4]),
                       "queues": len(queues), "online": last_online})
    return obs, latest
