"""``mqctl exporter``: a long-running HTTP server that reads the cluster on its own schedule
and serves ``/metrics`` in the Prometheus text format with the lag report's series (names,
labels, units: :mod:`mqctl.lagmetrics`), the status by the lag report's rules over a window
of rounds (:mod:`mqctl.lagstatus`), ``/healthz`` and ``/-/ready`` (docs/exporter.md).

Library use::

    from mqctl.exporter import Config, ExporterOptions, Service
    service = Service(lambda: Config(ExporterOptions(interval_s=30), connect, "127.0.0.1:9876"),
                      ("127.0.0.1", 9877))
    asyncio.run(service.run())
"""

from __future__ import annotations

from mqctl.exporter.rounds import Exporter, ExporterOptions, Round
from mqctl.exporter.service import Config, Service, loader, log_line, parse_listen, serve

__all__ = ["Config", "Exporter", "ExporterOptions", "Round", "Service", "loader", "log_line",
           "parse_listen", "serve"]
