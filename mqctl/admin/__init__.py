"""High-level, read-only admin operations over the remoting client.

The package's face: import from here (``from mqctl.admin import Admin, BrokerFailure``).

* :mod:`mqctl.admin.client`: the :class:`Admin` client, one method per request (name server
  calls try every configured address in turn; broker calls go to each broker's master);
* :mod:`mqctl.admin.fanout`: the per-broker fan-out, concurrent and bounded;
* :mod:`mqctl.admin.failures`: a broker's failure next to the others' answers
  (``BrokerFailure``), a fan-out in which no broker answered (``NothingRead``), the hint that
  fits the cause, and the topic or group the cluster does not know (``NotFoundError``);
* :mod:`mqctl.admin.decode`: reading an answer's JSON body and numeric header fields;
* :mod:`mqctl.admin.pull`: the header of a PULL_MESSAGE that moves no group's offset.

Nothing here sends a request that changes cluster state; state-changing requests live in the
modules of the commands that need them (``mqctl.reset``, ``mqctl.locks``).
"""

from mqctl.admin.client import RUNNING_INFO_MIN_TIMEOUT, Admin
from mqctl.admin.failures import (
    BrokerFailure,
    NotFoundError,
    NothingRead,
    answered,
    dedupe,
    failure_hint,
)
from mqctl.admin.fanout import broker_addr, require_addr

__all__ = ["Admin", "BrokerFailure", "NotFoundError", "NothingRead", "RUNNING_INFO_MIN_TIMEOUT",
           "answered", "broker_addr", "dedupe", "failure_hint", "require_addr"]
