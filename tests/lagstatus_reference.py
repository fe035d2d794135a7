"""Burrow's status rules in plain Python, one queue's samples at a time: the reference both
implementations of the lag report's status are checked against, the Spark job's
(tests/lagjob/test_transforms.py) and the one ``mqctl exporter`` runs
(:mod:`mqctl.lagstatus`, tests/test_lagstatus.py), over the same random histories."""

from __future__ import annotations

S = 1000  # one second in ms


def burrow_reference(rows, window, allowed_lag=0):
    """Burrow's rules as :func:`queue_status` documents them, in plain Python, one queue's
    samples (``rows``, in capture order, with ``lag``) at a time: status, complete,
    window_samples and the rates of every sample."""
    judged = [r for r in rows if r["lag"] is not None and r["consumer_offset"] is not None]
    out = {}
    for r in rows:
        on = False if r["consume_enable"] is False else r["online"]
        if r not in judged:
            lag = r["lag"]
            st = (None if lag is None else "OK" if lag <= allowed_lag
                  else "STOP" if on is False else None)
            out[r["capture_ts"]] = (st, None, None, None, None)
            continue
        k = judged.index(r)
        win = judged[max(0, k - window + 1):k + 1]
        offs, lags = [x["consumer_offset"] for x in win], [x["lag"] for x in win]
        bros = [x["broker_offset"] for x in win]
        n = len(win)
        same = min(offs) == max(offs)
        decs = [i for i in range(1, n) if offs[i] < offs[i - 1]]
        rewind = bool(decs) and not any(o >= offs[decs[0] - 1] for o in offs[decs[0]:])
        stopped = on is False or (on is None and n == window and n >= 2 and same
                                  and lags[-1] > lags[0]
                                  and not any(b <= r["consumer_offset"] for b in bros))
        never_fell = n >= 2 and all(lags[i] >= lags[i - 1] for i in range(1, n))
        st = ("OK" if r["lag"] <= allowed_lag else "STOP" if stopped else "REWIND" if rewind
              else "OK" if any(x <= allowed_lag for x in lags) else "STALL" if n >= 2 and same
              else "WARN" if never_fell else "OK")
        rates: list[float | None] = [None, None]
        if k:
            prev = judged[k - 1]
            dt = (r["observed_ts"] - prev["observed_ts"]) / 1000.0
            if dt > 0:
                rates = [max(r[c] - prev[c], 0) / dt for c in ("consumer_offset",
                                                               "broker_offset")]
        out[r["capture_ts"]] = (st, n / window, n, *rates)
    return out


def random_histories(seed: int = 28) -> list[dict]:
    """300 random queue histories: rewinds and recoveries, stalls, lag 0, unknown lags and
    never-committed samples, online/offline/unknown, consumeEnable=false."""
    import random

    rng = random.Random(seed)
    rows = []
    for q in range(300):
        c, b = rng.randrange(0, 50), 0
        online = rng.choice([True, False, None, "mixed"])
        enable = rng.choice([None, None, None, False, True])
        for i in range(rng.randrange(1, 10)):
            move = rng.random()
            c = (max(0, c - rng.randrange(1, 30)) if move < 0.2 else c if move < 0.45
                 else c + rng.randrange(1, 30))
            b = max(b, c + rng.choice([0, 0, 1, 2, rng.randrange(0, 40)]))
            r = {"group": f"G{q % 7}", "queue_id": q, "capture_ts": i * 60 * S,
                 "consumer_offset": c, "broker_offset": b,
                 "online": rng.choice([True, False, None]) if online == "mixed" else online,
                 "consume_enable": enable}
            hole = rng.random()
            if hole < 0.08:  # no max offset: the lag is unknown
                r["broker_offset"] = None
            elif hole < 0.14:  # never committed: no consumer offset, the lag is the queue
                r.update(consumer_offset=None, committed=False)
            rows.append(r)
    return rows
