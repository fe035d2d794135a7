"""The lag report's HTML page (``DIR/report.html``): one self-contained file an operator can
open offline or send to a colleague after an incident.

Two halves, so the page is tested without Spark, in modules named for what they do:

* :mod:`.collect` (Spark): :func:`collect_report_data` reduces the job's DataFrames to
  bounded lists for the worst ``HtmlLimits.groups`` groups (:mod:`.data`): the time range
  covered, each group's totals per capture, the ``lines`` queues with the highest peak lag
  (at most ``svg_points`` points each, the maximum per time bucket when there are more
  captures), owner runs of ``lanes`` queues, and at most ``marks`` of each kind of mark
  (rebalance events, storms, unowned periods, lock takeovers) per group. Two collects plus
  the overview timeline; nothing unbounded reaches the driver. :mod:`.sections` (pure) builds
  each group's section from the collected rows.
* :mod:`.page` (pure): :func:`render_html` builds the page: a header with the first and last
  capture, a legend of the statuses and columns, the status table (a colour per row: the
  group's health; the status cell coloured by status), a section per group with one inline
  SVG (lag and time lag per queue on log scales, status per capture, owners per queue over
  time, unowned periods, rebalance events by cause, offset resets, lock takeovers and storms
  on one time axis) and overview charts of every charted group, inline SVG too
  (:mod:`.charts`, drawn with the small chart library :mod:`.svg`; colours in
  :mod:`.palette`, words and tooltips in :mod:`.text`). Every bound that cut something is
  said on the page.

No JavaScript: the page was 5.4 MB with plotly.js inlined (4.8 MB of it) for three overview
charts, while the per-group timelines already drew inline SVG. SVG with ``<title>`` tooltips
draws the same charts in a few hundred kB, opens offline, can be mailed, and runs no script
over cluster data.

Broker data (group, topic, client names) is escaped everywhere; ids of page elements are
generated, never taken from names.
"""

from __future__ import annotations

from mqctl.lagjob.html.collect import ReportFrames, collect_frames, collect_report_data
from mqctl.lagjob.html.data import OWNER_UNKNOWN, HtmlLimits, ReportData
from mqctl.lagjob.html.page import render_html

__all__ = ["OWNER_UNKNOWN", "HtmlLimits", "ReportData", "ReportFrames", "collect_frames",
           "collect_report_data", "render_html"]
