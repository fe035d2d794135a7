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


def _bad(text: str, why: str = "") -> TimeParseError:
    shown = text if len(text) <= 60 else text[:57] + "..."
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
        return sign * int(round(total))
    m = _ISO_DUR.match(s)
    if m and any(m.group(i) for i in range(2, 7)):
        sign = -1 if m.group(1) == "-" else (1 if m.group(1) == "+" else default_sign)
        w, d, h, mi = (int(m.group(i) or 0) for i in range(2, 6))
        sec = float(m.group(6) or 0)
        total = (((w * 7 + d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000
        return sign * int(round(total))
    raise TimeParseError(f"cannot parse duration {text!r}",
                         hint="use a number with a unit: -2h, 30m, 1d, 1h30m, 500ms, or -PT2H")


def parse_time(text: str, *, now: int | None = None, tz: tzinfo | None = None) -> int:
    """Parse a point in time to epoch milliseconds. See the module docstring for the forms."""
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
        if v > 253_402_300_799_999:  # 9999-12-31
            raise _bad(text, "epoch milliseconds out of range")
        return v
    # relative: sign optional; unsigned means "ago"
    if _REL.match(s) or _ISO_DUR.match(s):
        try:
            return base + parse_duration_ms(s, default_sign=-1)
        except TimeParseError:
            raise _bad(text) from None
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
    return int(dt.timestamp() * 1000)


def _local_ms(dt: datetime, tz: tzinfo | None) -> int:
    if tz is not None:
        return int(dt.replace(tzinfo=tz).timestamp() * 1000)
    return int(dt.timestamp() * 1000)  # naive -> local time zone of this machine


def format_ms(ms: int | None, *, utc: bool = True) -> str:
    """ISO-8601 (UTC, millisecond precision) for JSON output; empty for 0/None."""
    if not ms:
        return ""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC if utc else None)
    if utc:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    return dt.isoformat(timespec="milliseconds")


def format_local(ms: int | None) -> str:
    if not ms:
        return ""
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


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


__all__ = ["ACCEPTED_FORMS", "parse_time", "parse_duration_ms", "format_ms", "format_local",
           "format_duration", "now_ms", "set_clock", "timedelta"]
