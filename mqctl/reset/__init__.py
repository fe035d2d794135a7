"""Offset resets: planned first, applied per broker, verified after, reversible.

The flow (``mqctl offsets reset``):

1. **plan** (read-only, :mod:`mqctl.reset.plan`, its types in :mod:`mqctl.reset.types`): per
   queue the min/max offsets (GET_TOPIC_STATS_INFO), the committed offset
   (QUERY_CONSUMER_OFFSET), and the target: a time (SEARCH_OFFSET_BY_TIMESTAMP, boundary LOWER:
   the first message stored at or after it), earliest, latest, an offset, a shift, or an edited
   plan file. Targets outside ``[min, max]``
   are clamped, with a warning.
2. **preflight**: the route resolves, every master is reachable, the group exists, the
   consumers' state (online, orderly, pop/gRPC, broadcasting), and each broker's reset path:
   server-side (``useServerSideResetOffset=true``, the 5.2+ default; works offline; explicit
   per-queue offsets) or legacy (the broker pushes the reset to online push consumers, which
   apply one broker's push at a time, each after a 10 s pause: the first broker's about 10 s
   after the push, the second's about 20 s; offline groups need UPDATE_CONSUMER_OFFSET per
   queue). Anything
   that would not take effect is refused with the reason unless ``--force``.
3. **rollback file** with every queue's previous offset, written before the first change
   (:mod:`mqctl.reset.files`).
4. **apply** per broker, concurrently and bounded (:mod:`mqctl.reset.apply`).
5. **verify**: re-read the offsets after the wait and report per queue whether the new offset
   took; a queue that did not take is a partial failure, never a silent success.
"""

from mqctl.reset.apply import (
    BAD,
    QueueResult,
    Status,
    apply_plan,
    clock_sleep,
    summarize,
    took,
    verify,
)
from mqctl.reset.files import (
    ROLLBACK_SCHEMA,
    export_format,
    export_plan,
    free_path,
    read_plan_file,
    read_rollback,
    rollback_path,
    write_rollback,
)
from mqctl.reset.plan import (
    LEGACY_CLIENT_PAUSE_S,
    LEGACY_COMMIT_WAIT_S,
    MAX_QUEUE_ID,
    SERVER_SIDE_WAIT_S,
    compute_target,
    default_wait,
    format_queue_scope,
    make_plan,
    parse_queue_scope,
    target_from_options,
    target_time,
)
from mqctl.reset.preflight import legacy_apply_times, legacy_push_order, preflight
from mqctl.reset.types import PLAN_SCHEMA, BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, Target

__all__ = ["BAD", "LEGACY_CLIENT_PAUSE_S", "LEGACY_COMMIT_WAIT_S",
           "MAX_QUEUE_ID", "PLAN_SCHEMA", "ROLLBACK_SCHEMA", "SERVER_SIDE_WAIT_S", "BrokerPlan",
           "ConsumerState", "Path_", "Plan", "QueuePlan", "QueueResult", "Status",
           "Target", "apply_plan", "clock_sleep", "compute_target", "default_wait",
           "export_format", "export_plan", "format_queue_scope", "free_path", "legacy_apply_times",
           "legacy_push_order", "make_plan",
           "parse_queue_scope", "preflight", "read_plan_file", "read_rollback", "rollback_path",
           "summarize", "target_from_options", "target_time", "took", "verify", "write_rollback"]
