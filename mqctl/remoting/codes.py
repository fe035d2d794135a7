"""RocketMQ request, response and language codes.

Numbers from apache/rocketmq ``remoting/.../protocol/RequestCode.java``,
``ResponseCode.java`` (which extends ``RemotingSysResponseCode``) and ``LanguageCode.java``
(develop @ 8fc57f1, cross-checked with the 4.x schema file ``RequestCode.schema``).
"""

from __future__ import annotations

from enum import IntEnum, unique


@unique
class RequestCode(IntEnum):
    SEND_MESSAGE = 10
    PULL_MESSAGE = 11
    QUERY_MESSAGE = 12
    QUERY_BROKER_OFFSET = 13
    QUERY_CONSUMER_OFFSET = 14
    UPDATE_CONSUMER_OFFSET = 15
    UPDATE_AND_CREATE_TOPIC = 17
    UPDATE_AND_CREATE_TOPIC_LIST = 18
    GET_ALL_TOPIC_CONFIG = 21
    GET_TOPIC_CONFIG_LIST = 22
    GET_TOPIC_NAME_LIST = 23
    UPDATE_BROKER_CONFIG = 25
    GET_BROKER_CONFIG = 26
    TRIGGER_DELETE_FILES = 27
    GET_BROKER_RUNTIME_INFO = 28
    SEARCH_OFFSET_BY_TIMESTAMP = 29
    GET_MAX_OFFSET = 30
    GET_MIN_OFFSET = 31
    GET_EARLIEST_MSG_STORETIME = 32
    VIEW_MESSAGE_BY_ID = 33
    HEART_BEAT = 34
    UNREGISTER_CLIENT = 35
    CONSUMER_SEND_MSG_BACK = 36
    END_TRANSACTION = 37
    GET_CONSUMER_LIST_BY_GROUP = 38
    CHECK_TRANSACTION_STATE = 39
    NOTIFY_CONSUMER_IDS_CHANGED = 40
    LOCK_BATCH_MQ = 41
    UNLOCK_BATCH_MQ = 42
    GET_ALL_CONSUMER_OFFSET = 43
    GET_ALL_DELAY_OFFSET = 45
    CHECK_CLIENT_CONFIG = 46
    GET_CLIENT_CONFIG = 47
    UPDATE_AND_CREATE_ACL_CONFIG = 50
    DELETE_ACL_CONFIG = 51
    GET_BROKER_CLUSTER_ACL_INFO = 52
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG = 53
    GET_BROKER_CLUSTER_ACL_CONFIG = 54
    GET_TIMER_CHECK_POINT = 60
    GET_TIMER_METRICS = 61
    PUT_KV_CONFIG = 100
    GET_KV_CONFIG = 101
    DELETE_KV_CONFIG = 102
    REGISTER_BROKER = 103
    UNREGISTER_BROKER = 104
    GET_ROUTEINFO_BY_TOPIC = 105
    GET_BROKER_CLUSTER_INFO = 106
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201
    GET_TOPIC_STATS_INFO = 202
    GET_CONSUMER_CONNECTION_LIST = 203
    GET_PRODUCER_CONNECTION_LIST = 204
    WIPE_WRITE_PERM_OF_BROKER = 205
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206
    DELETE_SUBSCRIPTIONGROUP = 207
    GET_CONSUME_STATS = 208
    SUSPEND_CONSUMER = 209
    RESUME_CONSUMER = 210
    RESET_CONSUMER_OFFSET_IN_CONSUMER = 211
    RESET_CONSUMER_OFFSET_IN_BROKER = 212
    ADJUST_CONSUMER_THREAD_POOL = 213
    WHO_CONSUME_THE_MESSAGE = 214
    DELETE_TOPIC_IN_BROKER = 215
    DELETE_TOPIC_IN_NAMESRV = 216
    REGISTER_TOPIC_IN_NAMESRV = 217
    GET_KVLIST_BY_NAMESPACE = 219
    RESET_CONSUMER_CLIENT_OFFSET = 220
    GET_CONSUMER_STATUS_FROM_CLIENT = 221
    INVOKE_BROKER_TO_RESET_OFFSET = 222
    INVOKE_BROKER_TO_GET_CONSUMER_STATUS = 223
    GET_TOPICS_BY_CLUSTER = 224
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST = 225
    QUERY_TOPIC_CONSUME_BY_WHO = 300
    REGISTER_FILTER_SERVER = 301
    REGISTER_MESSAGE_FILTER_CLASS = 302
    QUERY_CONSUME_TIME_SPAN = 303
    GET_SYSTEM_TOPIC_LIST_FROM_NS = 304
    GET_SYSTEM_TOPIC_LIST_FROM_BROKER = 305
    CLEAN_EXPIRED_CONSUMEQUEUE = 306
    GET_CONSUMER_RUNNING_INFO = 307
    QUERY_CORRECTION_OFFSET = 308
    CONSUME_MESSAGE_DIRECTLY = 309
    SEND_MESSAGE_V2 = 310
    GET_UNIT_TOPIC_LIST = 311
    GET_HAS_UNIT_SUB_TOPIC_LIST = 312
    GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313
    CLONE_GROUP_OFFSET = 314
    VIEW_BROKER_STATS_DATA = 315
    CLEAN_UNUSED_TOPIC = 316
    GET_BROKER_CONSUME_STATS = 317
    UPDATE_NAMESRV_CONFIG = 318
    GET_NAMESRV_CONFIG = 319
    SEND_BATCH_MESSAGE = 320
    QUERY_CONSUME_QUEUE = 321
    QUERY_DATA_VERSION = 322
    RESUME_CHECK_HALF_MESSAGE = 323
    SEND_REPLY_MESSAGE = 324
    SEND_REPLY_MESSAGE_V2 = 325
    PUSH_REPLY_MESSAGE_TO_CLIENT = 326
    ADD_WRITE_PERM_OF_BROKER = 327
    GET_ALL_PRODUCER_INFO = 328
    DELETE_EXPIRED_COMMITLOG = 329
    QUERY_TOPICS_BY_CONSUMER = 343
    QUERY_SUBSCRIPTION_BY_CONSUMER = 345
    GET_TOPIC_CONFIG = 351
    GET_SUBSCRIPTIONGROUP_CONFIG = 352
    UPDATE_AND_GET_GROUP_FORBIDDEN = 353
    EXPORT_ROCKSDB_CONFIG_TO_JSON = 355
    LITE_PULL_MESSAGE = 361
    RECALL_MESSAGE = 370
    QUERY_ASSIGNMENT = 400
    SET_MESSAGE_REQUEST_MODE = 401
    GET_ALL_MESSAGE_REQUEST_MODE = 402
    POP_MESSAGE = 200050
    ACK_MESSAGE = 200051
    PEEK_MESSAGE = 200052
    CHANGE_MESSAGE_INVISIBLETIME = 200053
    NOTIFICATION = 200054
    POLLING_INFO = 200055


# Requests every name server serves (4.9.3 namesrv DefaultRequestProcessor; 5.3.3
# DefaultRequestProcessor and ClientRequestProcessor for GET_ROUTEINFO_BY_TOPIC) and no broker
# does: the broker's default processor, AdminBrokerProcessor (4.9.3 and 5.3.3), answers them
# from getUnknownCmdResponse with REQUEST_CODE_NOT_SUPPORTED " request type N not supported".
# That answer to one of these is the tell that ``-n`` points at a broker.
NAMESRV_ONLY_REQUESTS = frozenset({105, 106, 206})


@unique
class ResponseCode(IntEnum):
    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    TRANSACTION_FAILED = 4
    FLUSH_DISK_TIMEOUT = 10
    SLAVE_NOT_AVAILABLE = 11
    FLUSH_SLAVE_TIMEOUT = 12
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    VERSION_NOT_SUPPORTED = 15
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    TOPIC_EXIST_ALREADY = 18
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    QUERY_NOT_FOUND = 22
    SUBSCRIPTION_PARSE_FAILED = 23
    SUBSCRIPTION_NOT_EXIST = 24
    SUBSCRIPTION_NOT_LATEST = 25
    SUBSCRIPTION_GROUP_NOT_EXIST = 26
    FILTER_DATA_NOT_EXIST = 27
    FILTER_DATA_NOT_LATEST = 28
    INVALID_PARAMETER = 29
    TRANSACTION_SHOULD_COMMIT = 200
    TRANSACTION_SHOULD_ROLLBACK = 201
    TRANSACTION_STATE_UNKNOW = 202
    TRANSACTION_STATE_GROUP_WRONG = 203
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205
    CONSUMER_NOT_ONLINE = 206
    CONSUME_MSG_TIMEOUT = 207
    NO_MESSAGE = 208
    POLLING_FULL = 209
    POLLING_TIMEOUT = 210
    BROKER_NOT_EXIST = 211
    BROKER_DISPATCH_NOT_COMPLETE = 212
    BROADCAST_CONSUMPTION = 213
    FLOW_CONTROL = 215
    NOT_LEADER_FOR_QUEUE = 501
    ILLEGAL_OPERATION = 604
    GO_AWAY = 1500
    USER_NOT_EXIST = 3001
    POLICY_NOT_EXIST = 3002


@unique
class LanguageCode(IntEnum):
    """``LanguageCode`` name -> byte used in the ROCKETMQ binary header."""

    JAVA = 0
    CPP = 1
    DOTNET = 2
    PYTHON = 3
    DELPHI = 4
    ERLANG = 5
    RUBY = 6
    OTHER = 7
    HTTP = 8
    GO = 9
    PHP = 10
    OMS = 11
    RUST = 12
    NODE_JS = 13


# Request codes that change cluster state. Read-only commands must never send them; the
# simulated cluster's request log is checked against this set in tests.
MUTATING_REQUESTS: frozenset[int] = frozenset({
    RequestCode.SEND_MESSAGE,
    RequestCode.SEND_MESSAGE_V2,
    RequestCode.SEND_BATCH_MESSAGE,
    RequestCode.CONSUMER_SEND_MSG_BACK,
    RequestCode.HEART_BEAT,
    RequestCode.UNREGISTER_CLIENT,
    RequestCode.LOCK_BATCH_MQ,
    RequestCode.UNLOCK_BATCH_MQ,
    RequestCode.UPDATE_CONSUMER_OFFSET,
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
    RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
    RequestCode.SET_MESSAGE_REQUEST_MODE,
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    RequestCode.DELETE_SUBSCRIPTIONGROUP,
    RequestCode.CLONE_GROUP_OFFSET,
})


# PullSysFlag (common/sysflag/PullSysFlag.java, 4.9.3 and 5.3.3): bit 0 asks the broker to store
# the request's commitOffset as the group's consumer offset (PullMessageProcessor: only when
# hasCommitOffsetFlag && brokerAllowSuspend, on a master); bit 1 lets it hold the request
# (long polling); bit 2 carries the subscription expression in the request.
PULL_FLAG_COMMIT_OFFSET = 0x1
PULL_FLAG_SUSPEND = 0x1 << 1
PULL_FLAG_SUBSCRIPTION = 0x1 << 2


def is_mutating(code: int | None, ext_fields: dict[str, str] | None = None) -> bool:
    """Whether a request changes cluster state: the codes of MUTATING_REQUESTS, and a
    PULL_MESSAGE / LITE_PULL_MESSAGE that carries the commit flag (or a sysFlag that cannot be
    read, which a broker would not take either). A pull without it reads messages and commits
    nothing (``mqctl message show``, as mqadmin queryMsgByOffset)."""
    if code in MUTATING_REQUESTS:
        return True
    if code in (RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE):
        try:
            flag = int((ext_fields or {}).get("sysFlag", ""))
        except ValueError:
            return True
        return bool(flag & PULL_FLAG_COMMIT_OFFSET)
    return False


def request_name(code: int | None) -> str:
    if code is None:
        return "?"
    try:
        return RequestCode(code).name
    except ValueError:
        return f"UNKNOWN_REQUEST_{code}"


def response_name(code: int) -> str:
    try:
        return ResponseCode(code).name
    except ValueError:
        return f"UNKNOWN_RESPONSE_{code}"


def language_from_byte(b: int) -> str:
    try:
        return LanguageCode(b).name
    except ValueError:
        return f"UNKNOWN_{b}"


def language_to_byte(name: str) -> int:
    try:
        return int(LanguageCode[name])
    except KeyError:
        if name.startswith("UNKNOWN_") and name[8:].isascii() and name[8:].isdigit():
            return int(name[8:]) & 0xFF
        return int(LanguageCode.OTHER)
