"""What a fan-out over the brokers says when brokers fail: the per-broker failure, the failure
of a fan-out in which no broker answered, the hint that fits the cause, and the topic or group
the cluster does not know."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from mqctl.errors import (
    BrokerError,
    ConnectError,
    ExitCode,
    MqctlError,
    ProtocolError,
    RequestTimeout,
    UsageError,
)
from mqctl.remoting.codes import ResponseCode

T = TypeVar("T")


class NotFoundError(UsageError):
    """A topic or group that the cluster does not know."""


@dataclass(frozen=True, slots=True)
class BrokerFailure:
    broker: str
    addr: str | None
    error: MqctlError

    @property
    def message(self) -> str:
        return self.error.message

    def to_dict(self) -> dict[str, str | None]:
        """The failure as every view's JSON lists it (``failures``)."""
        return {"broker": self.broker, "addr": self.addr, "error": self.message}


class NothingRead(MqctlError):
    """A fan-out in which NO broker answered: a failure, not a partial result.

    The exit code follows the cause: 5 when a broker answered with an error code (e.g.
    NO_PERMISSION from ACL), 4 for undecodable answers, 3 when none could be reached in time.
    ``failures`` keeps every broker's error for ``-o json`` and the lag job."""

    def __init__(self, what: str, failures: Sequence[BrokerFailure]):
        self.failures = list(failures)
        errors = [f.error for f in self.failures]
        if any(isinstance(e, BrokerError) for e in errors):
            code = ExitCode.BROKER
        elif errors and all(isinstance(e, ConnectError) for e in errors):
            code = ExitCode.CONNECTION
        elif any(isinstance(e, ProtocolError) for e in errors):
            code = ExitCode.PROTOCOL
        else:
            code = errors[0].exit_code if errors else ExitCode.CONNECTION
        names = sorted({f.broker for f in self.failures})
        # one line per distinct error: the same refusal from 8 brokers is said once
        seen: dict[str, list[str]] = {}
        for f in self.failures:
            seen.setdefault(_strip_addr(f.message, f.addr), []).append(f.broker)
        detail = "; ".join(f"{', '.join(sorted(set(bs)))}: {msg}"
                           for msg, bs in list(seen.items())[:3])
        more = f" (and {len(seen) - 3} other error(s))" if len(seen) > 3 else ""
        super().__init__(f"no broker answered {what} ({len(names)} of {len(names)} "
                         f"broker(s) failed): {detail}{more}", failure_hint(errors), code)


def _strip_addr(message: str, addr: str | None) -> str:
    return message.replace(f" from {addr}", "") if addr else message


def failure_hint(errors: Sequence[MqctlError], *, partial: bool = False) -> str:
    """A hint that fits the cause of a failed fan-out. ``partial``: other brokers answered
    (the output is printed, exit 8), so the hint speaks of the brokers that failed, never of
    "no broker"."""
    codes = {e.code for e in errors if isinstance(e, BrokerError)}
    if ResponseCode.NO_PERMISSION in codes:
        # 5.x AuthenticationPipeline / AuthorizationPipeline and 4.x PlainAccessValidator
        # (AclException) refuse a request with NO_PERMISSION and the reason as remark
        who = ("the brokers that failed refuse this account (the others accepted it)"
               if partial else "the brokers refuse this account")
        return (f"{who}: check the access key (--access-key, "
                "MQCTL_ACCESS_KEY or the profile's acl), the secret key (MQCTL_SECRET_KEY, "
                "the profile's acl or its credentials file) and the account's permissions on "
                "the group and its topics")
    if codes:
        return next((e.hint for e in errors if e.hint), None) or (
            "the brokers answered with an error: see the remark above")
    if errors and all(isinstance(e, ConnectError) for e in errors):
        timeouts = sum(isinstance(e, RequestTimeout) for e in errors)
        if partial:
            what = ("did not answer in time" if timeouts == len(errors) else
                    "could not be reached" if not timeouts else
                    "could not be reached or did not answer in time")
            who = f"the broker(s) named above {what} while the others answered: check that they"
        else:
            who = ("no broker answered in time" if timeouts == len(errors) else
                   "no broker could be reached") + ": check that the brokers"
        return (f"{who} are up and reachable from here (`mqctl cluster` lists their "
                "addresses), or raise --timeout")
    return next((e.hint for e in errors if e.hint), None) or "run with --debug for details"


def dedupe(failures: Sequence[BrokerFailure]) -> list[BrokerFailure]:
    """``failures`` without repeats: one per (broker, message), the first kept, in order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for f in failures:
        key = (f.broker, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def answered(values: dict[str, T | BrokerFailure]) -> dict[str, T]:
    """The brokers of a per-broker fan-out that answered, with their values."""
    return {b: v for b, v in values.items() if not isinstance(v, BrokerFailure)}
