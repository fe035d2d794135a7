"""mqadmin's ``MessageTrack`` rules, kept apart from mqctl's own (:mod:`mqctl.message.track`) so
that the two can be compared on the same readings (pure).

``DefaultMQAdminExtImpl.messageTrackDetail`` (tools, 4.9.3 and 5.3.3), for each group
QUERY_TOPIC_CONSUME_BY_WHO names:

* the connection list fails: ``NOT_ONLINE`` when the answer is CONSUMER_NOT_ONLINE, else
  ``UNKNOWN`` (with the exception text);
* ``CONSUME_ACTIVELY`` (a pull consumer): ``PULL``;
* ``CONSUME_PASSIVELY``: ``consumed(msg, group)``: the group's GET_CONSUME_STATS offset of the
  message's topic and queue id, on the broker whose master address is the message's store
  host, is greater than the message's queue offset. A BROADCASTING group makes 5.x's
  ``consumed`` throw BROADCAST_CONSUMPTION: ``CONSUME_BROADCASTING`` (4.9.3 has no such type
  and reads the brokers' offsets as for any group). Consumed, and the group's subscription
  table entry for the topic has a non-empty tagsSet that holds neither the tag nor ``*``:
  ``CONSUMED_BUT_FILTERED``; consumed otherwise: ``CONSUMED``; not consumed:
  ``NOT_CONSUME_YET``.

So mqadmin never looks at ``%RETRY%`` or ``%DLQ%`` (a message sent back reads as CONSUMED,
its offset having moved on), calls a filtered message that is not yet reached NOT_CONSUME_YET,
and names no owner or wait.
"""

from __future__ import annotations

from mqctl.message.track import GroupReading
from mqctl.remoting.message import StoredMessage

CONSUMED = "CONSUMED"
CONSUMED_BUT_FILTERED = "CONSUMED_BUT_FILTERED"
PULL = "PULL"
NOT_CONSUME_YET = "NOT_CONSUME_YET"
NOT_ONLINE = "NOT_ONLINE"
CONSUME_BROADCASTING = "CONSUME_BROADCASTING"
UNKNOWN = "UNKNOWN"


def mqadmin_track(m: StoredMessage, r: GroupReading, *, v5: bool = True) -> str:
    """The ``TrackType`` mqadmin's messageTrackDetail gives group ``r`` for message ``m``."""
    if r.error is not None:
        return UNKNOWN
    if r.online is False:
        return NOT_ONLINE  # examineConsumerConnectionInfo: CONSUMER_NOT_ONLINE
    if r.online is None or r.consume_type is None:
        return UNKNOWN
    if r.consume_type == "CONSUME_ACTIVELY":
        return PULL
    if r.consume_type != "CONSUME_PASSIVELY":
        return UNKNOWN
    if v5 and r.broadcasting:
        return CONSUME_BROADCASTING
    # ConsumeStats consumerOffset: 0 where the group has no committed offset
    offset = r.consume_stats_offset if r.consume_stats_offset is not None else (
        r.committed if r.committed is not None else 0)
    if not r.queue_read or offset <= m.queue_offset:
        return NOT_CONSUME_YET
    tags = r.tags or ()
    if tags and (m.tags or "") not in tags and "*" not in tags:
        return CONSUMED_BUT_FILTERED
    return CONSUMED


# mqctl's state -> the TrackType that agrees with it, where one does
AGREES = {"consumed": {CONSUMED}, "waiting": {NOT_CONSUME_YET},
          "filtered": {CONSUMED_BUT_FILTERED, NOT_CONSUME_YET},
          "offline": {NOT_ONLINE}, "broadcast: unknown": {CONSUME_BROADCASTING},
          "unknown": {UNKNOWN}}

__all__ = ["AGREES", "CONSUMED", "CONSUMED_BUT_FILTERED", "CONSUME_BROADCASTING",
           "NOT_CONSUME_YET", "NOT_ONLINE", "PULL", "UNKNOWN", "mqadmin_track"]
