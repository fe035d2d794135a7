"""The colours of the lag report's page and charts: one colour per status, health, cause and
line, the same in the tables, the badges, the timelines and the overview."""

from __future__ import annotations

STATUS_ORDER = ("OK", "WARN", "REWIND", "STALL", "STOP")
STATUS_COLOURS = {"OK": "#3a9d3a", "WARN": "#d9a400", "REWIND": "#e07b00", "STALL": "#d2502a",
                  "STOP": "#c0162c"}
# the group health (transforms/health.py): Burrow's group words
HEALTH_COLOURS = {"OK": "#3a9d3a", "WARN": "#c99700", "ERR": "#c0162c"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31"]
CAUSE_COLOURS = {"rebalance": "#1f77b4", "stop": "#555555", "crash": "#b00020",
                 "reset": "#7b3fb5"}
