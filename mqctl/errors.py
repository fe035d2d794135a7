"""The one error tree of mqctl.

Every error the library raises is an :class:`MqctlError` (or a subclass). Each carries a
one-line ``message``, an optional ``hint`` and the process ``exit_code`` the CLI uses. The CLI
has exactly one error boundary (:func:`mqctl.cli.main`) that prints ``mqctl: error: ...`` and
``hint: ...`` to stderr and exits with the code; ``--debug`` shows the traceback instead.

Exit codes (documented in ``docs/errors.md``; the README names the ones scripts act on):

====  ==========================================================================
code  meaning
====  ==========================================================================
0     success
1     unexpected internal error (a bug: please report it with ``--debug``)
2     usage / bad input (flags, files, times, topologies, ...)
3     connection or timeout (name server or broker unreachable)
4     protocol error (a frame or body that cannot be decoded)
5     broker error (the broker answered with a non-success response code)
6     refused: a precondition does not hold (e.g. reset of an online group)
7     plugin error
8     partial failure (some brokers/queues failed, the rest succeeded)
9     threshold breached (``lag report --fail-on``), for cron alerting
129   hung up (SIGHUP: the terminal went away) in a command that changes nothing
130   interrupted (Ctrl-C, SIGTERM; any of these during a change: what changed is reported)
141   stdout's reader went away (``mqctl ... | head``): the rest of the output was dropped
====  ==========================================================================
"""

from __future__ import annotations

from enum import IntEnum, unique


@unique
class ExitCode(IntEnum):
    OK = 0
    INTERNAL = 1
    USAGE = 2
    CONNECTION = 3
    PROTOCOL = 4
    BROKER = 5
    REFUSED = 6
    PLUGIN = 7
    PARTIAL = 8
    THRESHOLD = 9
    HANGUP = 129
    INTERRUPTED = 130
    BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool SIGPIPE ended


class MqctlError(Exception):
    """Base of every error mqctl raises on purpose."""

    exit_code: ExitCode = ExitCode.INTERNAL
    default_hint: str | None = None

    def __init__(self, message: str, hint: str | None = None, exit_code: ExitCode | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class UsageError(MqctlError):
    """Bad input from the user: a flag, a file, a time string, a topology."""

    exit_code = ExitCode.USAGE


class ConfigError(UsageError):
    """A configuration or profile file that cannot be used."""


class TimeParseError(UsageError):
    """A time or duration string that none of the accepted forms matches."""


class ConnectError(MqctlError):
    """A name server or broker cannot be reached (refused, reset, DNS, TLS)."""

    exit_code = ExitCode.CONNECTION

    def __init__(self, message: str, addr: str | None = None, hint: str | None = None):
        super().__init__(message, hint)
        self.addr = addr


class RequestTimeout(ConnectError):
    """No response within the per-request timeout."""

    def __init__(self, message: str, addr: str | None = None, code: int | None = None,
                 hint: str | None = None):
        super().__init__(message, addr, hint)
        self.code = code


class ProtocolError(MqctlError):
    """Bytes that are not a valid RocketMQ frame, header or body."""

    exit_code = ExitCode.PROTOCOL


class FrameError(ProtocolError):
    """A malformed frame: bad length, header length or serialize type."""


class HeaderError(ProtocolError):
    """A header that cannot be decoded (JSON or ROCKETMQ binary)."""


class BodyError(ProtocolError):
    """A body that the lenient fastjson parser cannot read."""

    def __init__(self, message: str, pos: int | None = None, hint: str | None = None):
        super().__init__(message, hint)
        self.pos = pos


class PeerProtocolError(ProtocolError, ConnectError):
    """A peer sent bytes that are not RocketMQ remoting (a 2 GB frame length, an undecodable
    header, a TLS record, HTTP): the connection is dropped, so callers that rotate name servers
    or count unreachable brokers still see a :class:`ConnectError`, but the exit code is 4."""

    exit_code = ExitCode.PROTOCOL


class BrokerError(MqctlError):
    """The broker (or name server) answered with a non-success response code."""

    exit_code = ExitCode.BROKER

    def __init__(self, code: int, remark: str | None, addr: str | None = None,
                 request_code: int | None = None, hint: str | None = None):
        from mqctl.remoting.codes import request_name, response_name

        where = f" from {addr}" if addr else ""
        req = f" to {request_name(request_code)}" if request_code is not None else ""
        text = (remark or "").strip().splitlines()[0] if remark and remark.strip() else "no remark"
        super().__init__(
            f"broker answered {response_name(code)} ({code}){req}{where}: {text}", hint)
        self.code = code
        self.remark = remark
        self.addr = addr
        self.request_code = request_code


class WrongServerError(BrokerError):
    """The address answered like a broker where a name server was expected (``-n`` pointing
    at a broker port): a usage error, with the broker's code kept."""

    exit_code = ExitCode.USAGE

    def __init__(self, code: int, remark: str | None, addr: str | None = None,
                 request_code: int | None = None, hint: str | None = None):
        from mqctl.remoting.codes import request_name, response_name

        super().__init__(code, remark, addr, request_code, hint)
        self.message = (f"{addr} looks like a broker, not a name server: it answered "
                        f"{response_name(code)} ({code}) to {request_name(request_code)}, "
                        "which every name server serves")
        self.args = (self.message,)


class RefusedError(MqctlError):
    """mqctl refuses an action because a precondition does not hold."""

    exit_code = ExitCode.REFUSED


class PluginError(MqctlError):
    exit_code = ExitCode.PLUGIN


class PartialFailure(MqctlError):
    """Some parts failed while the rest succeeded; the result is still printed."""

    exit_code = ExitCode.PARTIAL

    def __init__(self, message: str, failures: list[tuple[str, str]] | None = None,
                 hint: str | None = None):
        super().__init__(message, hint)
        self.failures = failures or []


class ThresholdBreached(MqctlError):
    exit_code = ExitCode.THRESHOLD
