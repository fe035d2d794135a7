"""The rows and lines of what ``mqctl sim up`` started (pure: the command emits them)."""

from __future__ import annotations

from typing import Any

from mqctl.render import Result, Table, cols


def started_result(summary: dict[str, Any]) -> Result:
    """What ``sim up`` started: in the human formats the lines it always printed (the
    addresses and an ``export NAMESRV_ADDR=...`` line to paste), in JSON and YAML the
    summary (:meth:`mqctl.sim.SimCluster.summary`), in CSV one row per server."""
    ns = summary["namesrv"]
    brokers = summary["brokers"]
    lines = [f"mqctl sim: scenario {summary['scenario']} "
             f"({len({b['name'] for b in brokers})} broker(s), {summary['topics']} topic(s), "
             f"{summary['groups']} group(s)), clock {summary['clock']['mode']}",
             f"name server: {ns['address']}"]
    # the slave of broker-a is server broker-a#1 (SimCluster.start)
    servers = [("namesrv", "namesrv", ns)] + sorted(
        ((b["name"] + ("#1" if b["role"] == "slave" else ""), b["role"], b) for b in brokers),
        key=lambda s: s[0])
    lines += [f"broker {key}: {s['address']}" for key, _role, s in servers[1:]]
    lines.append(f"export NAMESRV_ADDR={ns['address']}")
    if summary["tls_certificate"]:
        lines.append(f"TLS certificate: {summary['tls_certificate']}")
    rows = [{"server": key, "role": role, "address": s["address"], "port": s["port"],
             "version": s["version"]} for key, role, s in servers]
    table = Table(cols("server", "role", "address", "port", "version"), rows, name="servers",
                  machine_only=True)
    return Result([table], data=summary, notes=lines)
