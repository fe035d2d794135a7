"""``mqctl exporter``: serve the lag report's Prometheus series live on ``/metrics``."""

from __future__ import annotations

import sys

import typer

from mqctl.cli.common import state
from mqctl.cli.options import (
    AllowedLagOpt,
    AllowedLagSecondsOpt,
    ConcurrencyOpt,
    GroupsPatternOpt,
    IncludeSystemOpt,
    ListenOpt,
    NamesrvOpt,
    RoundIntervalOpt,
    WindowOpt,
)


def exporter(
    ctx: typer.Context,
    listen: ListenOpt = "127.0.0.1:9877",
    interval: RoundIntervalOpt = "30s",
    groups: GroupsPatternOpt = None,
    include_system: IncludeSystemOpt = False,
    window: WindowOpt = 10,
    allowed_lag: AllowedLagOpt = 0,
    allowed_lag_seconds: AllowedLagSecondsOpt = 10.0,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Serve /metrics for Prometheus: the lag report's series (same names, labels and units as
    its textfile, so the shipped rules, alerts and dashboard work unchanged), read from the
    cluster every --interval (not per scrape), with the status over the last --window rounds
    by the lag report's rules, and its rebalance storms, unowned time and group health over
    the rounds held. /healthz: the rounds are running; /-/ready: a round finished.
    Read-only (the requests of `mqctl snapshot --all-groups`). What a round could not read is
    NaN, never its last value. SIGTERM or Ctrl-C stops it (exit 0), SIGHUP re-reads the config
    file (profile, name servers, credentials, TLS). One line per event on stderr.

    Example: mqctl exporter --listen 127.0.0.1:9877 --interval 30s --groups 'GID_*'
    """
    from mqctl.api import AsyncCluster
    from mqctl.exporter import ExporterOptions, loader, serve

    st = state(ctx)
    options = ExporterOptions.parse(interval, groups=groups, include_system=include_system,
                                    window=window, allowed_lag=allowed_lag,
                                    allowed_lag_seconds=allowed_lag_seconds)
    flags = {**st.flags, **({"namesrv": namesrv} if namesrv else {})}
    load = loader(options, lambda s: AsyncCluster(settings=s, concurrency=concurrency),
                  config_file=st.config_file, profile=st.profile, flags=flags)
    serve(load, listen, write=_write)


def _write(line: str) -> None:
    """The service's log line on stderr (a stderr gone, a closed terminal: it goes on)."""
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def register(app: typer.Typer) -> None:
    app.command("exporter")(exporter)


__all__ = ["exporter", "register"]
