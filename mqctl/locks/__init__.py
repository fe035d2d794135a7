"""Queue locks of orderly consumer groups: who holds what, what is stuck, and the one remedy.

The parts (``mqctl locks show`` / ``mqctl locks release``):

1. **model** (pure, :mod:`mqctl.locks.model`, its types in :mod:`mqctl.locks.types`): the lock
   timing of RocketMQ, the states of a queue and their precedence (:class:`LockState`), a
   client's claim on a queue (:class:`Claim`), and :func:`classify_queue`, which turns every
   claim on one queue into its state (:class:`QueueLock`); the results (:class:`LockView`,
   :class:`ClientLocks`).
2. **store** (:mod:`mqctl.locks.store`): the state file that remembers what each client last
   reported (:class:`StoredClient`, :class:`LockStore`), and :func:`merge_state` (pure), what
   the next file keeps.
3. **view** (pure, :mod:`mqctl.locks.view`): :func:`build_view` of a group from its members'
   running info and the remembered clients, with each member's predicted share
   (:func:`predict_owners`); :func:`queue_locks`, the same classification for the other views
   that name an orderly queue's owner (``group progress``, ``diagnose``).
4. **capture** (read-only requests, :mod:`mqctl.locks.capture`): :func:`capture_locks`.
5. **release** (:mod:`mqctl.locks.release`): :func:`plan_release` decides on whose behalf
   and whether it is safe (pure); :func:`apply_release` sends UNLOCK_BATCH_MQ, the one
   mutating request; :func:`execute_release` applies a plan, records it in the state file
   and re-checks the queue.
"""

from mqctl.locks.capture import capture_locks
from mqctl.locks.model import classify_queue
from mqctl.locks.release import (
    ReleasePlan,
    ReleaseResult,
    ReleaseStatus,
    apply_release,
    apply_releases,
    execute_release,
    master_addr,
    parse_queue_spec,
    plan_release,
    prepare_release,
    prepare_releases,
    recheck,
    record_releases,
    resolve_queue,
)
from mqctl.locks.store import (
    STATE_RETENTION_MS,
    STATE_VERSION,
    LockStore,
    StoredClient,
    default_state_dir,
    merge_state,
    namesrv_hash,
)
from mqctl.locks.types import (
    BROKER_LEASE_MS,
    CHANNEL_EXPIRED_MS,
    CLIENT_TRUST_MS,
    GROUP_KINDS,
    HEARTBEAT_MS,
    PRECEDENCE,
    PROBLEM_STATES,
    RENEW_INTERVAL_MS,
    RENEW_SLACK_MS,
    Claim,
    ClientLocks,
    HungMember,
    LockState,
    LockView,
    QueueLock,
    Redelivery,
    clock_text,
)
from mqctl.locks.view import (
    build_view,
    ensure_lockable,
    group_kind,
    predict_owners,
    queue_locks,
)

__all__ = [
    "BROKER_LEASE_MS", "CHANNEL_EXPIRED_MS", "CLIENT_TRUST_MS", "GROUP_KINDS", "HEARTBEAT_MS",
    "PRECEDENCE", "PROBLEM_STATES",
    "RENEW_INTERVAL_MS", "RENEW_SLACK_MS", "STATE_RETENTION_MS", "STATE_VERSION",
    "Claim", "ClientLocks", "HungMember", "LockState", "LockStore", "LockView", "QueueLock",
    "Redelivery", "ReleasePlan",
    "ReleaseResult", "ReleaseStatus", "StoredClient", "apply_release", "apply_releases",
    "build_view", "capture_locks", "classify_queue", "clock_text",
    "default_state_dir", "ensure_lockable", "group_kind", "master_addr", "merge_state",
    "namesrv_hash", "parse_queue_spec", "plan_release", "predict_owners", "prepare_release",
    "prepare_releases", "execute_release", "queue_locks", "recheck", "record_releases",
    "resolve_queue",
]
