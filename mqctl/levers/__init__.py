"""Incident levers with the offset reset's discipline: ``group pause``/``resume`` (the group's
consumeEnable on every master), ``group config set``/``rollback`` (SubscriptionGroupConfig
fields, validated by type and release) and ``offsets clone`` (CLONE_GROUP_OFFSET).

Each is planned first (read-only), changes only with ``--execute``, holds the group's one
change lock (:func:`mqctl.interrupt.change_lock`, shared with ``offsets reset``), writes its
undo file before the first request, applies per master, verifies by reading back, and reports
an interrupt or a partial application per broker with the commands that finish or undo it
(:mod:`mqctl.levers.workflow`; the clone: :mod:`mqctl.levers.clone`).
"""

from mqctl.levers.apply import BrokerResult, Status
from mqctl.levers.fields import FIELDS, parse_assignments
from mqctl.levers.plan import LEVERS, BrokerChange, LeverPlan, LeverRequest, make_plan
from mqctl.levers.undo import pause_record, read_undo
from mqctl.levers.workflow import LeverOutcome, confirmation_rule, run_lever

__all__ = ["FIELDS", "LEVERS", "BrokerChange", "BrokerResult", "LeverOutcome", "LeverPlan",
           "LeverRequest", "Status", "confirmation_rule", "make_plan", "parse_assignments",
           "pause_record", "read_undo", "run_lever"]
