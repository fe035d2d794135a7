"""Every option and argument of the CLI, declared once: its flags, help, metavar, bounds and
path rule (:class:`Flag`), and the typed parameters the commands reuse (``TopicOpt``,
``TopicReq``, ...). A command's signature only names them (``topic: TopicOpt = None``).

One meaning, one declaration: a flag has one help text wherever it appears (``mqctl --help``
and every command's), so ``--topic`` reads the same in ``group progress`` and ``offsets
reset``; what a command does with it is its own help's business. A flag that means two
unrelated things (``--queues``: a count per broker for ``allocate``, a set of queue ids for
``offsets reset``) is declared once per meaning and listed in :data:`DISTINCT` with the reason.
The lag report's options are declared in :mod:`mqctl.lagoptions` (the same way: one spec per
option) and derived from there by :mod:`mqctl.cli.lag`.

``tests/cli/test_options_declared_once.py`` walks the Typer app (every parameter of every command)
and fails
on a flag with two help texts that :data:`DISTINCT` does not name, and on an option or argument
declared anywhere in ``mqctl/cli`` but here (the lag report's derivation apart).

Light: Typer and the path rules only (``mqctl --help`` imports this module).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from mqctl.cli.common import (
    DEFAULT_WATCH,
    MAX_THRESHOLD_S,
    MAX_VERIFY_WAIT_S,
    MAX_WATCH_S,
    OutputFormat,
    in_dir,
    in_file,
    out_dir,
    out_file,
)
from mqctl.views.sort import GroupSort, SortKey


class Flag:
    """One option meaning: its flags (``--topic``, ``-t``), help and the rest of what Typer
    takes (metavar, bounds, ``parser=``). :meth:`option` gives Typer's declaration; a use may
    add only what varies with the parameter's type (``show_default``, a path rule's
    direction), never another help text."""

    def __init__(self, *decls: str, help: str, **kw: Any) -> None:
        self.decls = decls
        self.help = help
        self.kw = kw

    def option(self, **variant: Any) -> Any:
        assert "help" not in variant, "a Flag's help is declared once"
        return typer.Option(*self.decls, help=self.help, **{**self.kw, **variant})

    def argument(self, **variant: Any) -> Any:
        assert "help" not in variant and not self.decls
        return typer.Argument(help=self.help, **{**self.kw, **variant})


# Flags that mean two unrelated things, each declared once (the walk of the app allows their
# texts to differ): flag -> why.
DISTINCT: dict[str, str] = {
    "--queues": "allocate's shorthand queues (a count per broker) and offsets reset's scope "
                "(queue ids per broker)",
    "--queue": "locks release's BROKER:QUEUE_ID and message show's queue id (with --broker)",
    "-q": "the root's --quiet and message show's --queue (kept as it was)",
    "-s": "allocate's --strategy and sim up's --scenario (kept as they were)",
    # mqctl.lagoptions declares the lag report's own (another meaning than the CLI's)
    "--tz": "the display zone (root) and the lag report's zone of its inputs",
    "--out": "where a command writes (snapshot, demo) or what lag prune prunes, and the lag "
             "report's output directory (mqctl.lagoptions)",
    "--interval": "the demo's simulated time between snapshots and the exporter's time "
                  "between rounds",
    "--force": "a change's refusals and an output that is not mqctl's, and the lag report's "
               "own (mqctl.lagoptions)",
    "--limit": "how many messages message find / track show, how many dead letters group "
               "dlq resend sends, and how many groups the lag report shows (mqctl.lagoptions)",
    "--since": "group dlq resend's store-time bound and the lag report's (mqctl.lagoptions)",
    "--until": "group dlq resend's store-time bound and the lag report's (mqctl.lagoptions)",
    "--to": "offsets clone's group whose offsets are replaced and group dlq resend's "
            "destination (retry or original)",
}

NO_DEFAULT = {"show_default": False}

# ---------------------------------------------------------------------------- global

NAMESRV = Flag("--namesrv", "-n", help="Name server address(es), 'host:port;host:port', no "
               "http:// (env NAMESRV_ADDR; default 127.0.0.1:9876).", **NO_DEFAULT)
OUTPUT = Flag("--output", "-o", help="Output format: table, wide (every column whole), plain, "
              "json, yaml or csv (one table: see --table) (default: table on a terminal, plain "
              "otherwise).", **NO_DEFAULT)
PROFILE = Flag("--profile", help="Profile from the config file (env MQCTL_PROFILE).",
               **NO_DEFAULT)
CONFIG = Flag("--config", parser=in_file("config file"), help="Config file (env MQCTL_CONFIG; "
              "default ~/.config/mqctl/config.yaml).", **NO_DEFAULT)
TIMEOUT = Flag("--timeout", help="Per-request timeout in seconds, 0.1 to 3600 (env "
               "MQCTL_TIMEOUT; default 3). Also accepted after the command.", **NO_DEFAULT)
TZ = Flag("--tz", help="Time zone of every human-readable time and of times given without a "
          "zone: an IANA name (Asia/Shanghai), UTC, an offset (+08:00) or local (env MQCTL_TZ, "
          "profile key tz; default this machine's). JSON, YAML and CSV stay UTC. Also accepted "
          "after the command.", **NO_DEFAULT)
TABLE = Flag("--table", metavar="NAME", help="Print only this table (-o csv prints the main "
             "one otherwise); before or after the command. Tables: group progress: queues "
             "(main), topics; locks show: queues (main), summary, clients; consumers: clients "
             "(main), findings; diagnose: findings (main), checks; allocate what-if: moves "
             "(main), counts, queues (--by-queue), brokers and differences (live); wire "
             "decode: frames (main) and messages of a capture, frame (main) of one frame, body "
             "(main) or messages of a bare body. docs/output.md lists every command's.",
             **NO_DEFAULT)
TLS = Flag("--tls", help="Connect with TLS.")
TLS_CA = Flag("--tls-ca", parser=in_file("TLS CA file"), help="CA file to verify the server "
              "certificate (implies --tls).", **NO_DEFAULT)
TLS_INSECURE = Flag("--tls-insecure", help="Accept any server certificate, as the Java client "
                    "does (implies --tls).")
ACCESS_KEY = Flag("--access-key", help="ACL access key; the secret comes from the profile, a "
                  "credentials file or MQCTL_SECRET_KEY, never from a flag.", **NO_DEFAULT)
DEBUG = Flag("--debug", help="Show tracebacks (also after the command).")
QUIET = Flag("--quiet", "-q", help="Nothing but errors: no result tables or notes on stdout, "
             "no progress on stderr (also after the command).")
VERSION = Flag("--version", is_eager=True, help="Show the version and exit.")

NamesrvOpt = Annotated[str | None, NAMESRV.option()]
OutputOpt = Annotated[OutputFormat | None, OUTPUT.option()]
ProfileOpt = Annotated[str | None, PROFILE.option()]
ConfigOpt = Annotated[str | None, CONFIG.option()]
TimeoutOpt = Annotated[float | None, TIMEOUT.option()]
TzOpt = Annotated[str | None, TZ.option()]
TableOpt = Annotated[str | None, TABLE.option()]
TlsOpt = Annotated[bool, TLS.option()]
TlsCaOpt = Annotated[str | None, TLS_CA.option()]
TlsInsecureOpt = Annotated[bool, TLS_INSECURE.option()]
AccessKeyOpt = Annotated[str | None, ACCESS_KEY.option()]
DebugOpt = Annotated[bool, DEBUG.option()]
QuietOpt = Annotated[bool, QUIET.option()]


# ---------------------------------------------------------------------------- what to read

GROUP = Flag("--group", "-g", help="Consumer group (a command of one group also takes it as "
             "the first argument).", **NO_DEFAULT)
GROUP_ARG = Flag(help="Consumer group (or -g/--group).", **NO_DEFAULT)
TOPIC = Flag("--topic", "-t", help="Topic (where it is optional: only this topic; default "
             "every topic the group consumes).", **NO_DEFAULT)
TOPIC_ARG = Flag(help="Topic name.")
CONCURRENCY = Flag("--concurrency", min=1, help="Requests in flight at once during fan-out "
                   "(default 16).", **NO_DEFAULT)
WATCH = Flag("--watch", "-w", metavar="[SECONDS]", min=0.1, max=MAX_WATCH_S,
             help=f"Refresh every SECONDS (default {DEFAULT_WATCH:g}, at most a day) until "
                  "Ctrl-C.", **NO_DEFAULT)
COUNT = Flag("--count", min=1, help="With --watch: stop after N refreshes.", **NO_DEFAULT)
INCLUDE_SYSTEM = Flag("--include-system", help="Also RocketMQ's own groups (TOOLS_CONSUMER, "
                      "SELF_TEST_C_GROUP, CID_ONSAPI_*, CID_RMQ_SYS_*, ...).")
MATCH = Flag("--match", help="Only names that contain this (case-insensitive; a glob with * ? "
             "[).", **NO_DEFAULT)
ONLY_LAGGING = Flag("--only-lagging", help="Only the rows with lag > 0.")
SORT = Flag("--sort", help="Row order (numbers: largest first, unknown last).")
NO_CLIENTS = Flag("--no-clients", help="Do not ask the clients for their running info "
                  "(GET_CONSUMER_RUNNING_INFO; heavy with hundreds of clients): faster; what "
                  "only they report (strategy, orderly, owners, client caches, consumed TPS, "
                  "pop inflight) unknown.")
STATE_DIR = Flag("--state-dir", help="Where `mqctl locks show` keeps what it saw (default "
                 "~/.cache/mqctl/locks, or $XDG_CACHE_HOME/mqctl/locks); group progress and "
                 "diagnose only read it.", **NO_DEFAULT)
NO_STATE = Flag("--no-state", help="Neither read nor write the state file: clients that do not "
                "answer lose their last known claims.")

GroupOpt = Annotated[str, GROUP.option()]  # required
GroupOption = Annotated[str | None, GROUP.option()]
GroupsOpt = Annotated[list[str] | None, GROUP.option()]  # repeatable
GroupArg = Annotated[str | None, GROUP_ARG.argument()]
TopicOpt = Annotated[str | None, TOPIC.option()]
TopicReq = Annotated[str, TOPIC.option()]
TopicArg = Annotated[str, TOPIC_ARG.argument()]
ConcurrencyOpt = Annotated[int | None, CONCURRENCY.option()]
WatchOpt = Annotated[float | None, WATCH.option()]
CountOpt = Annotated[int | None, COUNT.option()]
IncludeSystemOpt = Annotated[bool, INCLUDE_SYSTEM.option()]
MatchOpt = Annotated[str | None, MATCH.option()]
OnlyLaggingOpt = Annotated[bool, ONLY_LAGGING.option()]
NoClientsOpt = Annotated[bool, NO_CLIENTS.option()]
StateDirOpt = Annotated[str | None, STATE_DIR.option(parser=out_dir("lock state directory"))]
StateDirReadOpt = Annotated[str | None, STATE_DIR.option(parser=in_dir("lock state directory"))]
NoStateOpt = Annotated[bool, NO_STATE.option()]


# ``--sort`` over each command's own row orders
GroupSortOpt = Annotated[GroupSort, SORT.option()]
QueueSortOpt = Annotated[SortKey, SORT.option()]


# ---------------------------------------------------------------------------- changes

EXECUTE = Flag("--execute", help="Make the change (without it: show the plan, change "
               "nothing).")
FORCE = Flag("--force", help="Go ahead where mqctl refuses unless --force: a refusal of the "
             "change that says so, or an output (--out, --export) that holds files mqctl did "
             "not write.")
MAX_REPLAY = Flag("--max-replay", min=0, help="Refuse an --execute that would replay (move "
                  "back) more than N messages in total (profile max_replay; queues without a "
                  "committed offset count with the most they could move).", **NO_DEFAULT)
MAX_SKIP = Flag("--max-skip", min=0, help="Refuse an --execute that would skip (move forward) "
                "more than N messages in total (profile max_skip).", **NO_DEFAULT)
YES = Flag("--yes", "-y", help="Do not ask before the change (on a terminal an offsets "
           "--execute moving more than confirm_above messages, default 10000, asks first; a "
           "group pause/resume/config --execute always asks, and without a terminal needs "
           "--yes).")
VERIFY_WAIT = Flag("--verify-wait", min=0, max=MAX_VERIFY_WAIT_S, help="Seconds to wait, "
                   "polling, before judging the result, at most 3600 (default: 10 per broker "
                   "+ 5 on the legacy path with online consumers, 10 after a forced write of an "
                   "online group, server-side with online consumers 1, or 15 when a client is "
                   "older than 5.2.0, else 0).", **NO_DEFAULT)

ExecuteOpt = Annotated[bool, EXECUTE.option()]
ForceOpt = Annotated[bool, FORCE.option()]
MaxReplayOpt = Annotated[int | None, MAX_REPLAY.option()]
MaxSkipOpt = Annotated[int | None, MAX_SKIP.option()]
YesOpt = Annotated[bool, YES.option()]
VerifyWaitOpt = Annotated[float | None, VERIFY_WAIT.option()]

# ---------------------------------------------------------------------------- offsets

TO_TIME = Flag("--to-time", help="First message stored at or after this time (any form "
               "`mqctl time` accepts).", **NO_DEFAULT)
BY_DURATION = Flag("--by-duration", help="Relative to now, with a sign: -2h is 2 hours ago "
                   "(an unsigned 2h is read as -2h, with a warning).", **NO_DEFAULT)
TO_EARLIEST = Flag("--to-earliest", help="The min offset.")
TO_LATEST = Flag("--to-latest", help="The max offset (skip the backlog).")
TO_OFFSET = Flag("--to-offset", help="This offset on every queue in scope.", **NO_DEFAULT)
SHIFT_BY = Flag("--shift-by", help="Move each queue by N (negative = replay).", **NO_DEFAULT)
FROM_FILE = Flag("--from-file", parser=in_file("plan file"), help="Apply an edited plan (CSV or "
                 "JSON from --export); a stale plan (CURRENT moved more than the change) is "
                 "refused unless --force.", **NO_DEFAULT)
RESET_QUEUES = Flag("--queues", help="Scope (repeatable): broker:qid[,qid]..., e.g. "
                    "broker-a:0,1,broker-b:3 or broker-a:0-3 (ids 0-65535).", **NO_DEFAULT)
EXPORT = Flag("--export", parser=out_file("plan file"), help="Write the plan to FILE (.csv or "
              ".json).", **NO_DEFAULT)
ROLLBACK_FILE = Flag("--rollback-file", parser=out_file("rollback file"), help="Where to write "
                     "the previous offsets (default under ~/.local/state/mqctl/rollback).",
                     **NO_DEFAULT)
SHOW_MESSAGES = Flag("--show-messages", help="Show the store time and keys of the message at "
                     "each target (one read-only pull per queue, as `mqctl message show`).")
ROLLBACK_DIR = Flag("--dir", parser=in_dir("rollback directory"), help="Directory to list "
                    "(default: ~/.local/state/mqctl/rollback, or $XDG_STATE_HOME/mqctl/"
                    "rollback).", **NO_DEFAULT)
CHECK = Flag("--check", help="Also read each group's committed offsets (GET_CONSUME_STATS, "
             "read-only) and say whether they are at the saved offsets or the reset's.")


def rollback_name(value: str) -> bool:
    """``offsets rollback NAME`` names a file of the default rollback directory (as
    :func:`mqctl.reset.files.find_rollback` reads it), not a path."""
    import os

    return "/" not in value and not os.path.lexists(value)


ROLLBACK_ARG = Flag(parser=in_file("rollback file", name=rollback_name), help="Rollback file "
                    "written by `offsets reset --execute`, or a NAME from `offsets rollbacks` "
                    "(in the default directory).")

BROKERS = Flag("--brokers", metavar="BROKER[,BROKER]", help="Only these brokers (names as "
               "`mqctl cluster` lists them, comma-separated; default: every master).",
               **NO_DEFAULT)
CREATE = Flag("--create", help="Create the group on a broker that does not have it (with "
              "SubscriptionGroupConfig's defaults and the fields given).")
UNDO_FILE = Flag("--undo-file", parser=out_file("undo file"), help="Where to write the configs "
                 "before the change (default under ~/.local/state/mqctl/levers/undo).",
                 **NO_DEFAULT)
UNDO_ARG = Flag(parser=in_file("undo file"), help="Undo file written by `group pause/resume` "
                "or `group config set --execute`.")
ASSIGNMENTS = Flag(help="KEY=VALUE: a SubscriptionGroupConfig field (retryMaxTimes=3, "
                   "consumeBroadcastEnable=false, groupRetryPolicy='{\"type\":\"EXPONENTIAL\"}' "
                   "on 5.x).", metavar="KEY=VALUE...")
FROM_GROUP = Flag("--from", help="The group whose offsets are copied.")
TO_GROUP = Flag("--to", help="The group whose offsets are replaced.")
OFFLINE = Flag("--offline", help="Copy even when the source group is online without "
               "subscribing the topic (CLONE_GROUP_OFFSET's offline flag, mqadmin -o).")
BrokersOpt = Annotated[str | None, BROKERS.option()]
CreateOpt = Annotated[bool, CREATE.option()]
UndoFileOpt = Annotated[str | None, UNDO_FILE.option()]
UndoArg = Annotated[str, UNDO_ARG.argument()]
AssignmentsArg = Annotated[list[str] | None, ASSIGNMENTS.argument()]
FromGroupOpt = Annotated[str, FROM_GROUP.option()]
ToGroupOpt = Annotated[str, TO_GROUP.option()]
OfflineOpt = Annotated[bool, OFFLINE.option()]

ToTimeOpt = Annotated[str | None, TO_TIME.option()]
ByDurationOpt = Annotated[str | None, BY_DURATION.option()]
ToEarliestOpt = Annotated[bool, TO_EARLIEST.option()]
ToLatestOpt = Annotated[bool, TO_LATEST.option()]
ToOffsetOpt = Annotated[int | None, TO_OFFSET.option()]
ShiftByOpt = Annotated[int | None, SHIFT_BY.option()]
FromFileOpt = Annotated[str | None, FROM_FILE.option()]
ResetQueuesOpt = Annotated[list[str] | None, RESET_QUEUES.option()]
ExportOpt = Annotated[str | None, EXPORT.option()]
RollbackFileOpt = Annotated[str | None, ROLLBACK_FILE.option()]
ShowMessagesOpt = Annotated[bool, SHOW_MESSAGES.option()]
RollbackDirOpt = Annotated[str | None, ROLLBACK_DIR.option()]
CheckOpt = Annotated[bool, CHECK.option()]
RollbackArg = Annotated[str, ROLLBACK_ARG.argument()]

# ---------------------------------------------------------------------------- locks

RELEASE_QUEUE = Flag("--queue", metavar="BROKER:QUEUE_ID", help="The queue as "
                     "BROKER:QUEUE_ID, e.g. broker-a:3 (repeat for several queues).")
CLIENT = Flag("--client", help="Release on behalf of this client id (default: the recorded "
              "holder).", **NO_DEFAULT)
INCLUDE_RETRY = Flag("--include-retry", help="Also show the group's %RETRY% topic queues.")

ReleaseQueueOpt = Annotated[list[str], RELEASE_QUEUE.option()]
ClientOpt = Annotated[str | None, CLIENT.option()]
IncludeRetryOpt = Annotated[bool, INCLUDE_RETRY.option()]

# ---------------------------------------------------------------------------- group views

NO_RETRY = Flag("--no-retry", help="Leave out the retry and dead-letter section (%RETRY%/%DLQ% "
                "queues; saves the DLQ requests).")
NO_TIME_LAG = Flag("--no-time-lag", help="Do not ask the time spans of lagging queues "
                   "(QUERY_CONSUME_TIME_SPAN, one per lagging group, broker and topic): faster "
                   "on big clusters; MAX TIME LAG unknown, LAGGING judged on the lag alone.")
LAG_THRESHOLD = Flag("--lag-threshold", min=1, help="LAGGING from this many messages behind.")
TIME_LAG_THRESHOLD = Flag("--time-lag-threshold", min=0.001, max=MAX_THRESHOLD_S,
                          metavar="SECONDS", help="LAGGING from this time lag.")
SAMPLE = Flag("--sample", min=1, max=3600, metavar="SECONDS", help="Read twice, SECONDS apart, "
              "and use the change: lag and retry/DLQ growth, committed offsets that do not move "
              "while the clients consume, rebalances.", **NO_DEFAULT)


class TopicKind(StrEnum):
    all = "all"
    normal = "normal"
    retry = "retry"
    dlq = "dlq"
    system = "system"


KIND = Flag("--kind", help="Which topics to list.")

NoRetryOpt = Annotated[bool, NO_RETRY.option()]
NoTimeLagOpt = Annotated[bool, NO_TIME_LAG.option()]
LagThresholdOpt = Annotated[int, LAG_THRESHOLD.option()]
TimeLagThresholdOpt = Annotated[float, TIME_LAG_THRESHOLD.option()]
SampleOpt = Annotated[float | None, SAMPLE.option()]
TopicKindOpt = Annotated[TopicKind, KIND.option()]

# ---------------------------------------------------------------------------- message show

BROKER = Flag("--broker", "-b", help="Broker name (as `mqctl route TOPIC` lists it).")
QUEUE_ID = Flag("--queue", "-q", "--queue-id", min=0, help="Queue id.")
OFFSET = Flag("--offset", min=0, help="Queue offset (no short form: -o is the output format "
              "everywhere).")
BODY_BYTES = Flag("--body-bytes", min=0, help="How many bytes of the body to show.")

BrokerOpt = Annotated[str, BROKER.option()]
QueueIdOpt = Annotated[int, QUEUE_ID.option()]
OffsetOpt = Annotated[int, OFFSET.option()]
BodyBytesOpt = Annotated[int, BODY_BYTES.option()]

# ---------------------------------------------------------------------------- message find

KEY = Flag("--key", help="A key the producer set (KEYS): the brokers' index.", **NO_DEFAULT)
UNIQUE_KEY = Flag("--unique-key", help="The producer's message id (UNIQ_KEY, SendResult "
                  "msgId): the brokers' index.", **NO_DEFAULT)
MSG_ID = Flag("--msg-id", help="The offset message id (store host + commit-log offset, as "
              "mqadmin queryMsgById takes).", **NO_DEFAULT)
TIME_RANGE = Flag("--time", metavar="FROM..TO", help="Store time range FROM..TO (TO may be "
                  "left out: now): the window of a key search, or with -b/-q the range of "
                  "one queue to read.", **NO_DEFAULT)
LIMIT = Flag("--limit", min=1, max=10000, help="Messages shown at most (the newest); the "
             "output says when it stopped there.")
BODY_FILE = Flag("--body", parser=out_file("body file"), help="Write the body of the newest "
                 "message found to FILE, as the producer sent it (zlib bodies uncompressed); "
                 "an existing file is not replaced.", **NO_DEFAULT)
LAST = Flag("--last", min=1, max=1000, help="How many of the newest dead letters to read.")

RESEND_LIMIT = Flag("--limit", min=1, max=10000, help="Dead letters selected at most (oldest "
                   "first per queue); the output says when it stopped there.")
SINCE = Flag("--since", help="Dead letters stored at or after this time (any form `mqctl time` "
             "accepts).", **NO_DEFAULT)
UNTIL = Flag("--until", help="Dead letters stored at or before this time.", **NO_DEFAULT)
ALL_LETTERS = Flag("--all", help="Every dead letter of the group (up to --limit).")
RESEND_TO = Flag("--to", help="retry: %RETRY%GROUP (only this group receives it again, under "
                 "its original topic); original: the original topic (every group subscribing "
                 "it receives it).")
RATE = Flag("--rate", metavar="N[/s]", help="Messages sent per second at most (default: as "
            "fast as the broker answers).", **NO_DEFAULT)
JOURNAL = Flag("--journal", metavar="FILE", parser=out_file("journal file"),
               help="Where to write the journal (default under "
                    "~/.local/state/mqctl/levers/resend).", **NO_DEFAULT)
RESUME = Flag("--resume", metavar="JOURNAL", parser=in_file("journal file"),
              help="Continue the resend a journal records: what it says was sent is not "
                   "sent again.", **NO_DEFAULT)
MsgIdsOpt = Annotated[list[str] | None, MSG_ID.option()]
ResendLimitOpt = Annotated[int, RESEND_LIMIT.option()]
SinceOpt = Annotated[str | None, SINCE.option()]
UntilOpt = Annotated[str | None, UNTIL.option()]
AllLettersOpt = Annotated[bool, ALL_LETTERS.option()]
ResendToOpt = Annotated[str, RESEND_TO.option()]
RateOpt = Annotated[str | None, RATE.option()]
JournalOpt = Annotated[str | None, JOURNAL.option()]
ResumeOpt = Annotated[str | None, RESUME.option()]
KeyOpt = Annotated[str | None, KEY.option()]
UniqueKeyOpt = Annotated[str | None, UNIQUE_KEY.option()]
MsgIdOpt = Annotated[str | None, MSG_ID.option()]
TimeRangeOpt = Annotated[str | None, TIME_RANGE.option()]
LimitOpt = Annotated[int, LIMIT.option()]
LastOpt = Annotated[int, LAST.option()]
BodyFileOpt = Annotated[str | None, BODY_FILE.option()]
BrokerOption = Annotated[str | None, BROKER.option(show_default=False)]
QueueIdOption = Annotated[int | None, QUEUE_ID.option(show_default=False)]

# ---------------------------------------------------------------------------- snapshot


class Compression(StrEnum):
    gzip = "gzip"
    none = "none"


SNAPSHOT_OUT = Flag("--out", parser=out_dir("to the output directory"), help="Output "
                    "directory (snapshot: files go to OUT/YYYY-MM-DD/; demo: default "
                    "mqctl-out/demo-<UTC time>; lag prune: the report directory to prune, the "
                    "--out of lag report).")
ALL_GROUPS = Flag("--all-groups", help="Capture every group the cluster knows.")
COMPRESS = Flag("--compress", help="File format: 'gzip' writes .jsonl.gz (the lag report reads "
                "it as it is; 1% to 3% of the plain size), 'none' plain .jsonl.")
KEEP = Flag("--keep", help="Keep this much history (e.g. 7d): older capture files (and, for lag "
            "prune, date partitions) are deleted, never a cluster's or a dataset's newest; the "
            "output says which.", **NO_DEFAULT)

SnapshotOutOpt = Annotated[str, SNAPSHOT_OUT.option()]
AllGroupsOpt = Annotated[bool, ALL_GROUPS.option()]
CompressOpt = Annotated[Compression, COMPRESS.option()]
KeepOpt = Annotated[str | None, KEEP.option()]
KeepReq = Annotated[str, KEEP.option()]
DemoOutOpt = Annotated[str | None, SNAPSHOT_OUT.option(parser=out_dir("the demo directory"),
                                                       show_default=False)]
PruneOutOpt = Annotated[str | None, SNAPSHOT_OUT.option(
    parser=in_dir("report directory", remote=True), show_default=False)]
SNAPSHOTS = Flag("--snapshots", parser=in_dir("snapshot directory", remote=True),
                 help="Snapshot directory (the --out of mqctl snapshot): capture files older "
                      "than --keep.", **NO_DEFAULT)
SnapshotsOpt = Annotated[str | None, SNAPSHOTS.option()]

# ---------------------------------------------------------------------------- allocate

STRATEGY = Flag("--strategy", "-s", help="avg, avg-by-circle, consistent-hash, config, "
                "machine-room, machine-room-nearby or a plugin; RocketMQ names (AVG_BY_CIRCLE) "
                "work. Default: the clients' strategy live, avg offline.", **NO_DEFAULT)
TOPOLOGY = Flag("--topology", parser=in_file("topology file", stdin=True), help="YAML/JSON "
                "file: {group, queues: [{topic, brokerName, queueId}], consumers: [ids]}.",
                **NO_DEFAULT)
ALLOCATE_QUEUES = Flag("--queues", help="Shorthand queues: broker-a:8,broker-b:8 (count per "
                       "broker).", **NO_DEFAULT)
CONSUMERS = Flag("--consumers", help="Client ids c1,c2 or a count (generates 10.0.0.1@1, ...).",
                 **NO_DEFAULT)
VIRTUAL_NODES = Flag("--virtual-nodes", help="consistent-hash: virtual nodes per consumer "
                     "(default 10, as RocketMQ; at most 10,000).", **NO_DEFAULT)
QUEUE_CONFIG = Flag("--queue-config", parser=in_file("queue config file", stdin=True),
                    help="config: YAML/JSON {clientId: [queues]} (or a previous -o json).",
                    **NO_DEFAULT)
ROOMS = Flag("--rooms", help="machine-room: the consumers' rooms, e.g. hz,sh (brokers "
             "'room@name').", **NO_DEFAULT)
INNER = Flag("--inner", help="machine-room-nearby: the strategy inside each room (default "
             "avg).", **NO_DEFAULT)
BROKER_ROOM_REGEX = Flag("--broker-room-regex", help="machine-room-nearby: group 1 matched at "
                         "the start of a broker name is its room (default '([^-]*)').",
                         **NO_DEFAULT)
CONSUMER_ROOM_REGEX = Flag("--consumer-room-regex", help="machine-room-nearby: group 1 matched "
                           "at the start of a client id is its room (default '([^-]*)').",
                           **NO_DEFAULT)
PREVIOUS = Flag("--previous", parser=in_file("previous allocation file", stdin=True),
                help="Strategies that keep queues in place (sticky): the current allocation, a "
                     "previous -o json output.", **NO_DEFAULT)
ADD_CONSUMER = Flag("--add-consumer", help="What-if: a consumer joins (repeatable).",
                    **NO_DEFAULT)
REMOVE_CONSUMER = Flag("--remove-consumer", help="What-if: a consumer leaves (repeatable).",
                       **NO_DEFAULT)
COMPARE = Flag("--compare", help="What-if: the same group under another strategy.",
               **NO_DEFAULT)
AGAINST_LIVE = Flag("--against-live", help="Live only: compare the prediction with the queues "
                    "each client reports owning (GET_CONSUMER_RUNNING_INFO).")
BY_QUEUE = Flag("--by-queue", help="One row per queue instead of per consumer.")
LIST_STRATEGIES = Flag("--list-strategies", help="List the strategies (built-in and plugins) "
                       "and exit.")

StrategyOpt = Annotated[str | None, STRATEGY.option()]
TopologyOpt = Annotated[str | None, TOPOLOGY.option()]
AllocateQueuesOpt = Annotated[str | None, ALLOCATE_QUEUES.option()]
ConsumersOpt = Annotated[str | None, CONSUMERS.option()]
VirtualNodesOpt = Annotated[int | None, VIRTUAL_NODES.option()]
QueueConfigOpt = Annotated[str | None, QUEUE_CONFIG.option()]
RoomsOpt = Annotated[str | None, ROOMS.option()]
InnerOpt = Annotated[str | None, INNER.option()]
BrokerRoomRegexOpt = Annotated[str | None, BROKER_ROOM_REGEX.option()]
ConsumerRoomRegexOpt = Annotated[str | None, CONSUMER_ROOM_REGEX.option()]
PreviousOpt = Annotated[str | None, PREVIOUS.option()]
AddConsumerOpt = Annotated[list[str] | None, ADD_CONSUMER.option()]
RemoveConsumerOpt = Annotated[list[str] | None, REMOVE_CONSUMER.option()]
CompareOpt = Annotated[str | None, COMPARE.option()]
AgainstLiveOpt = Annotated[bool, AGAINST_LIVE.option()]
ByQueueOpt = Annotated[bool, BY_QUEUE.option()]
ListStrategiesOpt = Annotated[bool, LIST_STRATEGIES.option()]

# ---------------------------------------------------------------------------- demo and sim

HOURS = Flag("--hours", min=0.01, help="Simulated hours to run.")
INTERVAL = Flag("--interval", help="Simulated time between snapshots (like a cron schedule).")
DEMO_FORCE = FORCE


def _lag_spec(name: str) -> Any:
    from mqctl.lagoptions import flag_specs

    return next(s for s in flag_specs() if s.name == name)


# the demo runs the lag report: its --master and --window are the report's (mqctl.lagoptions)
MASTER = Flag("--master", help=_lag_spec("master").help)
WINDOW = Flag("--window", min=1, help=_lag_spec("window").help)


def scenario_is_name(value: str) -> bool:
    """``sim up --scenario demo`` names a bundled scenario, not a file (as
    :func:`mqctl.sim.scenario.load_scenario` tells them apart)."""
    import os

    return ("/" not in value and not value.endswith((".yaml", ".yml"))
            and not os.path.lexists(value))


SCENARIO = Flag("--scenario", "-s", parser=in_file("scenario file", name=scenario_is_name),
                help="Bundled scenario name or a YAML file (docs/scenario.md).")
PORT = Flag("--port", min=0, max=65535, help="Name server port; brokers listen on the "
            "following ports (0 = ephemeral).")
HOST = Flag("--host", help="Address to listen on.")
CLOCK = Flag("--clock", help="real, accelerated or manual (default: the scenario's).",
             **NO_DEFAULT)
SPEED = Flag("--speed", min=0.001, help="Accelerated clock factor.", **NO_DEFAULT)
LOG_DIR = Flag("--log-dir", parser=out_dir("log directory (--log-dir)"), help="Write client and "
               "broker logs (rocketmq_client.log, lock.log) here.", **NO_DEFAULT)

HoursOpt = Annotated[float, HOURS.option()]
IntervalOpt = Annotated[str, INTERVAL.option()]
MasterOpt = Annotated[str, MASTER.option()]
WindowOpt = Annotated[int, WINDOW.option()]
ScenarioOpt = Annotated[str, SCENARIO.option()]
PortOpt = Annotated[int, PORT.option()]
HostOpt = Annotated[str, HOST.option()]
ClockOpt = Annotated[str | None, CLOCK.option()]
SpeedOpt = Annotated[float | None, SPEED.option()]
LogDirOpt = Annotated[str | None, LOG_DIR.option()]

# ---------------------------------------------------------------------------- offline tools

TIME_TEXT = Flag(help="Time strings: now, epoch ms, ISO-8601, yyyy-MM-dd#HH:mm:ss:SSS, or "
                 "relative with a sign: -2h (2 hours ago), +10m (10 minutes from now).")
CAPTURE_FILE = Flag(parser=in_file("capture file", stdin=True, stream=True), help="Capture "
                    "file: tcpdump text (-x, -xx, -X, -XX as tcpdump prints it), a pcap file, a "
                    "hex dump of one frame (xxd or bare hex), raw frame bytes, or a bare body; "
                    "'-' = stdin.")
WIRE_AS = Flag("--as", help="Input kind: auto, tcpdump, pcap, hex, frame or body.")


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


SHELL = Flag(help="bash, zsh or fish.")
LAG_INPUTS_HELP = ("Inputs: files, directories (read recursively), globs or Spark URIs, any mix "
                   "of snapshots, consumerOffset.json/topics.json/subscriptionGroup.json, "
                   "mqadmin consumerProgress/brokerConsumeStats/topicStatus captures, "
                   "rocketmq_client.log and lock.log. Prefix KIND= to force a kind (e.g. "
                   "topic-status=ts.txt).")

TimeTextArg = Annotated[list[str], TIME_TEXT.argument()]
CaptureFileArg = Annotated[str, CAPTURE_FILE.argument()]
WireAsOpt = Annotated[str, WIRE_AS.option()]
ShellArg = Annotated[Shell, SHELL.argument()]

# ---------------------------------------------------------------------------- exporter

LISTEN = Flag("--listen", metavar="HOST:PORT", help="Where to serve /metrics, /healthz and "
              "/-/ready: HOST:PORT (:PORT = every address).")
ROUND_INTERVAL = Flag("--interval", help="Time between the starts of two rounds (a round "
                      "reads the cluster once; scrapes serve the last finished one).")
ALLOWED_LAG = Flag("--allowed-lag", min=0, help=_lag_spec("allowed_lag").help)
ALLOWED_LAG_SECONDS = Flag("--allowed-lag-seconds", min=0.0, metavar="SECONDS", max=MAX_THRESHOLD_S,
                           help=_lag_spec("allowed_lag_seconds").help)

# the exporter's selection: the groups it serves (the views' --match semantics, named for what
# it selects; the exporter has no --match: one flag for one meaning)
GROUPS_PATTERN = Flag("--groups", metavar="PATTERN", help="Only the groups whose names contain "
                      "this (case-insensitive; a glob with * ? [, as --match of the views); "
                      "default: every group.", **NO_DEFAULT)

ListenOpt = Annotated[str, LISTEN.option()]
GroupsPatternOpt = Annotated[str | None, GROUPS_PATTERN.option()]
RoundIntervalOpt = Annotated[str, ROUND_INTERVAL.option()]
AllowedLagOpt = Annotated[int, ALLOWED_LAG.option()]
AllowedLagSecondsOpt = Annotated[float, ALLOWED_LAG_SECONDS.option()]
