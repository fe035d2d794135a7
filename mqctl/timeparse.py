"""Time parsing shared by every command.

Accepted forms (all return epoch milliseconds):

* ``now``
* epoch milliseconds: ``1717200000000`` (13 digits; 10-digit values are refused as seconds)
* ISO-8601 with or without zone: ``2024-06-01T10:00:00Z``, ``2024-06-01T18:00:00+08:00``,
  ``2024-06-01 10:00``, ``2024-06-01`` (no zone = the local time zone, like mqadmin)
* mqadmin's ``yyyy-MM-dd#HH:mm:ss:SSS`` (local time zone)
* relative to now: ``-2h``, ``30m`` (= 30 minutes ago), ``+10m``, ``1d12h``, ``-PT2H``
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo

from mqctl.errors import TimeParseError

ACCEPTED_FORMS = ("now, epoch ms (1717200000000), ISO-8601 (2024-06-01T10:00:00Z, "
                  "2024-06-01 18:00:00+08:00, 2024-06-01), mqadmin's yyyy-MM-dd#HH:mm:ss:SSS, "
                  "or relative (-2h, 30m, 1d, 1h30m, -PT2H)")

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
            "w": 604_800_000}
_REL = re.compile(r"^([+-]?)((?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+)$")
_REL_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_ISO_DUR = re.compile(r"^([+-]?)P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?"
                      r"(?:(\d+(?:\.\d+)?)S)?)?$", re.IGNORECASE)
# The instants mqctl accepts: RocketMQ's store and offset timestamps are epoch ms >= 0
# (System.currentTimeMillis(); SEARCH_OFFSET_BY_TIMESTAMP takes a long), and ISO-8601 has four
# year digits. A time outside this range is refused, never wrapped or rendered as "1-01-01".
MIN_MS = 0  # 1970-01-01T00:00:00.000Z
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MQADMIN = re.compile(r"^(\d{4})-(\d{2})-(\d{2})#(\d{2}):(\d{2}):(\d{2}):(\d{3})$")


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


_clock: Callable[[], int] = _wall_clock_ms


def now_ms() -> int:
    """The current time in epoch ms: the one clock every mqctl module reads.

    The simulated cluster's accelerated or manual clock is installed with :func:`set_clock`
    (``mqctl demo`` and tests), so lock ages and time lags agree with the simulation.
    """
    return _clock()


def set_clock(fn: Callable[[], int] | None) -> None:
    """Install a clock (``None`` restores the wall clock)."""
    global _clock
    _clock = fn or _wall_clock_ms


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _bad(text: str, why: str = "") -> TimeParseError:
    shown = _shown(text)
    return TimeParseError(f"cannot parse time {shown!r}{': ' + why if why else ''}",
                          hint=f"accepted forms: {ACCEPTED_FORMS}")


def parse_duration_ms(text: str, *, default_sign: int = 1) -> int:
    """A signed duration in ms: ``-2h``, ``30m``, ``1h30m``, ``PT2H``, ``-P1DT2H``.

    Unsigned values get ``default_sign``.
    """
    s = text.strip()
    m = _REL.match(s)
    if m:
        sign = -1 if m.group(1) == "-" else (1 if m.group(1) == "+" else default_sign)
        total = sum(float(n) * _UNIT_MS[u] for n, u in _REL_PART.findall(m.group(2)))
        return sign * _bounded_ms(total, text)
    m = _ISO_DUR.match(s)
    if m and any(m.group(i) for i in range(2, 7)):
        sign = -1 if m.group(1) == "-" else (1 if m.group(1) == "+" else default_sign)
        w, d, h, mi = (int(m.group(i) or 0) for i in range(2, 6))
        sec = float(m.group(6) or 0)
        total = (((w * 7 + d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000
        return sign * _bounded_ms(total, text)
    raise TimeParseError(f"cannot parse duration {_shown(text)!r}",
                         hint="use a number with a unit: -2h, 30m, 1d, 1h30m, 500ms, or -PT2H")


def _bounded_ms(total: float, text: str) -> int:
    """A duration in whole ms; one longer than the whole accepted time range is refused
    (``float('9' * 400)`` is inf, which ``int()`` cannot take)."""
    if not total <= MAX_MS - MIN_MS:  # also catches inf and nan
        raise TimeParseError(f"cannot parse duration {_shown(text)!r}: out of range (more than "
                             f"{(MAX_MS - MIN_MS) // 86_400_000} days)",
                             hint="use a duration within the years 1970..9999, e.g. -2h or 30d")
    return int(round(total))


def parse_time(text: str, *, now: int | None = None, tz: tzinfo | None = None) -> int:
    """Parse a point in time to epoch milliseconds. See the module docstring for the forms.

    The result lies within 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z; a time before the
    epoch (0001-01-01, -9999999999999999999h) or after 9999 is a :class:`TimeParseError`.
    """
    ms = _parse_time(text, now=now, tz=tz)
    if MIN_MS <= ms <= MAX_MS:
        return ms
    err = _bad(text, "it is before 1970-01-01T00:00:00Z; RocketMQ timestamps start at the epoch"
               if ms < MIN_MS else "it is after 9999-12-31T23:59:59.999Z")
    err.hint = ("give a time from 1970-01-01T00:00:00Z (epoch ms 0) to 9999-12-31, e.g. "
                "2024-06-01T10:00:00Z or -2h")
    raise err


def _parse_time(text: str, *, now: int | None, tz: tzinfo | None) -> int:
    if not isinstance(text, str):
        raise _bad(str(text))
    s = text.strip()
    if not s:
        raise _bad(text, "empty")
    base = now_ms() if now is None else now
    if s.lower() == "now":
        return base
    if s.isdigit():
        v = int(s)
        if len(s) <= 10:
            raise TimeParseError(
                f"cannot parse time {s!r}: it looks like epoch seconds, mqctl takes epoch "
                "milliseconds", hint=f"append 000 ({s}000), or use ISO-8601; {ACCEPTED_FORMS}")
        if v > MAX_MS:
            raise _bad(text, "epoch milliseconds out of range (after 9999-12-31)")
        return v
    # relative: sign optional; unsigned means "ago"
    if _REL.match(s) or _ISO_DUR.match(s):
        try:
            return base + parse_duration_ms(s, default_sign=-1)
        except TimeParseError as exc:
            if ": out of range" not in exc.message:
                raise _bad(text) from None
            # a duration longer than the whole range: say on which side it falls
            return MAX_MS + 1 if s.startswith("+") else MIN_MS - 1
    m = _MQADMIN.match(s)
    if m:
        y, mo, d, h, mi, sec, ms = (int(g) for g in m.groups())
        try:
            dt = datetime(y, mo, d, h, mi, sec, ms * 1000)
        except ValueError as exc:
            raise _bad(text, str(exc)) from None
        return _local_ms(dt, tz)
    iso = s.replace(" ", "T", 1) if re.match(r"^\d{4}-\d{2}-\d{2} \d", s) else s
    if iso.endswith(("Z", "z")):
        iso = iso[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        raise _bad(text) from None
    if dt.tzinfo is None:
        return _local_ms(dt, tz)
    return _aware_ms(dt)


def _aware_ms(dt: datetime) -> int:
    """Exact epoch ms of an aware datetime (no float, no time_t: year 1 works)."""
    return (dt - _EPOCH) // timedelta(milliseconds=1)


def _local_ms(dt: datetime, tz: tzinfo | None) -> int:
    if tz is not None:
        return _aware_ms(dt.replace(tzinfo=tz))
    try:
        return int(dt.timestamp() * 1000)  # naive -> local time zone of this machine
    except (OverflowError, OSError, ValueError):
        # outside what the platform's local-time functions take (e.g. year 1): the parser's
        # range check refuses it; UTC is close enough to say on which side it falls
        return _aware_ms(dt.replace(tzinfo=UTC))


def format_ms(ms: int | None, *, utc: bool = True, zero_unknown: bool = True) -> str:
    """ISO-8601 (UTC, millisecond precision, four-digit year) for output; empty for None.

    ``zero_unknown``: 0 is RocketMQ's "no timestamp" (a queue never consumed, no lock renewal)
    and renders empty too. Pass ``zero_unknown=False`` for an instant the user gave (``--to-time
    1970-01-01T00:00:00Z`` is epoch ms 0, and must render as such). A value outside the years
    1..9999 renders as its epoch ms.
    """
    if ms is None or (zero_unknown and not ms):
        return ""
    try:
        dt = _EPOCH + timedelta(milliseconds=int(ms))
        if not utc:
            dt = dt.astimezone().replace(tzinfo=None)  # local wall time, as before
    except (OverflowError, OSError, ValueError):
        return f"epoch ms {ms}"
    if utc:
        return (f"{dt.year:04d}-{dt:%m-%dT%H:%M:%S}." f"{dt.microsecond // 1000:03d}Z")
    return f"{dt.year:04d}-" + dt.isoformat(timespec="milliseconds").split("-", 1)[1]


def format_local(ms: int | None, *, zero_unknown: bool = True) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in this machine's time zone; empty for None (and 0, see
    :func:`format_ms`)."""
    if ms is None or (zero_unknown and not ms):
        return ""
    try:
        dt = (_EPOCH + timedelta(milliseconds=int(ms))).astimezone()
    except (OverflowError, OSError, ValueError):
        return f"epoch ms {ms}"
    return f"{dt.year:04d}-{dt:%m-%d %H:%M:%S}"


def format_duration(ms: int | float | None) -> str:
    """Human form of a duration: ``1h02m``, ``45s``, ``350ms``."""
    if ms is None:
        return ""
    neg = ms < 0
    ms = abs(int(ms))
    if ms < 1000:
        out = f"{ms}ms"
    elif ms < 60_000:
        out = f"{ms / 1000:.1f}s" if ms < 10_000 else f"{ms // 1000}s"
    elif ms < 3_600_000:
        out = f"{ms // 60_000}m{(ms % 60_000) // 1000:02d}s"
    elif ms < 86_400_000:
        out = f"{ms // 3_600_000}h{(ms % 3_600_000) // 60_000:02d}m"
    else:
        out = f"{ms // 86_400_000}d{(ms % 86_400_000) // 3_600_000:02d}h"
    return ("-" if neg else "") + out


__all__ = ["ACCEPTED_FORMS", "MAX_MS", "MIN_MS", "parse_time", "parse_duration_ms", "format_ms",
           "format_local", "format_duration", "now_ms", "set_clock", "timedelta"]
