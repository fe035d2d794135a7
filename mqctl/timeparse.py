"""Time parsing shared by every command.

Accepted forms (all return epoch milliseconds):

* ``now``
* epoch milliseconds: ``1717200000000`` (13 digits; 10-digit values are refused as seconds)
* ISO-8601 with or without zone: ``2024-06-01T10:00:00Z``, ``2024-06-01T18:00:00+08:00``,
  ``2024-06-01 10:00``, ``2024-06-01`` (no zone = the local time zone, like mqadmin)
* mqadmin's ``yyyy-MM-dd#HH:mm:ss:SSS`` (local time zone)
* relative to now: ``-2h`` (2 hours ago), ``+10m`` (10 minutes from now), ``-1d12h``,
  ``-PT2H``. An unsigned ``30m`` is still read as 30 minutes ago, with a warning that names
  the sign it was given (write ``-30m``).

"Local" is the display zone: ``--tz`` / profile key ``tz`` / ``MQCTL_TZ`` when given (an IANA
name such as ``Asia/Shanghai``, ``UTC`` or an offset such as ``+08:00``), else this machine's
zone. A zone-less local time that does not exist (a DST gap) or exists twice (a DST overlap)
is refused with both candidate instants when ``strict`` (reset targets), else read as Java
reads it (an overlap as the earlier instant, a gap as the later) with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from mqctl.context import current, enter, wall_clock_ms
from mqctl.errors import TimeParseError

ACCEPTED_FORMS = ("now, epoch ms (1717200000000), ISO-8601 (2024-06-01T10:00:00Z, "
                  "2024-06-01 18:00:00+08:00, 2024-06-01), mqadmin's yyyy-MM-dd#HH:mm:ss:SSS, "
                  "or relative (-2h = 2 hours ago, +10m = in 10 minutes, -1h30m, -PT2H)")

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
            "w": 604_800_000}
# (ASCII digits only, as every number mqctl reads: \d and int() take any Unicode digit)
_REL = re.compile(r"^([+-]?)((?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h|d|w))+)$")
_REL_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d|w)")
_ISO_DUR = re.compile(r"^([+-]?)P(?:([0-9]+)W)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?"
                      r"(?:([0-9]+(?:\.[0-9]+)?)S)?)?$", re.IGNORECASE)
# The instants mqctl accepts: RocketMQ's store and offset timestamps are epoch ms >= 0
# (System.currentTimeMillis(); SEARCH_OFFSET_BY_TIMESTAMP takes a long), and ISO-8601 has four
# year digits. A time outside this range is refused, never wrapped or rendered as "1-01-01".
MIN_MS = 0  # 1970-01-01T00:00:00.000Z
MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MQADMIN = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})#([0-9]{2}):([0-9]{2}):([0-9]{2}):"
                      r"([0-9]{3})$")


_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])([0-9]{1,2})(?::?([0-9]{2}))?$", re.IGNORECASE)
_DATE8 = re.compile(r"^(19|20)[0-9]{2}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])$")

def resolve_tz(text: str | None) -> tzinfo | None:
    """A time zone from ``--tz``/``tz:``/``MQCTL_TZ``: ``local`` (None: this machine's),
    ``UTC``, an offset (``+08:00``, ``-0530``, ``UTC+8``) or an IANA name (``Asia/Shanghai``)."""
    s = (text or "").strip()
    if not s or s.lower() == "local":
        return None
    if s.upper() in ("UTC", "Z", "GMT", "ETC/UTC"):
        return UTC
    m = _OFFSET.match(s)
    if m:
        h, mi = int(m.group(2)), int(m.group(3) or 0)
        if h <= 18 and mi <= 59:
            off = timedelta(hours=h, minutes=mi)
            return timezone(-off if m.group(1) == "-" else off)
    else:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(s)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise TimeParseError(f"unknown time zone {_shown(s)!r}",
                         hint="give an IANA name (Asia/Shanghai, America/New_York), UTC, "
                              "local (this machine's zone) or an offset (+08:00)")


def set_display_tz(tz: tzinfo | None) -> None:
    """The display zone for the rest of this run (:func:`mqctl.context.enter`); None = this
    machine's zone. A caller that can wrap its run uses ``mqctl.context.use`` instead."""
    enter(current().with_(zone=tz))


def display_tz() -> tzinfo | None:
    """The display zone (``--tz``) of the current run's context: every human-readable time is
    rendered in it and zone-less input is read in it. None = this machine's zone (the TZ
    environment variable / /etc/localtime)."""
    return current().zone


def set_warning_sink(fn: Callable[[str], None] | None) -> None:
    """Where parse warnings go for the rest of this run (an unsigned relative time, a
    DST-ambiguous local time): the context's ``warn`` (the CLI's ``mqctl: warning:`` writer);
    without one they are dropped."""
    enter(current().with_(warn=fn))


def _warn(msg: str) -> None:
    current().warning(msg)


def zone_name(tz: tzinfo | None = None) -> str:
    """A readable name of a zone (the display zone by default), for messages."""
    tz = tz if tz is not None else display_tz()
    if tz is None:
        import os

        return os.environ.get("TZ") or "this machine's time zone"
    return str(getattr(tz, "key", None) or tz)


def now_ms() -> int:
    """The current time in epoch ms: the one clock every mqctl module reads, the current
    run's context's (:mod:`mqctl.context`).

    The simulated cluster's accelerated or manual clock comes in through the context
    (``mqctl demo`` and tests), so lock ages and time lags agree with the simulation.
    """
    return current().clock()


def clock() -> Callable[[], int]:
    """The current run's clock (to hand on, or to put back later)."""
    return current().clock


def set_clock(fn: Callable[[], int] | None) -> None:
    """The clock for the rest of this run (:func:`mqctl.context.enter`; ``None``: the wall
    clock). A caller that can wrap its run uses ``mqctl.context.use`` instead."""
    enter(current().with_(clock=fn or wall_clock_ms))


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _bad(text: str, why: str = "") -> TimeParseError:
    shown = _shown(text)
    return TimeParseError(f"cannot parse time {shown!r}{': ' + why if why else ''}",
                          hint=f"accepted forms: {ACCEPTED_FORMS}")


# ------------------------------------------------------------------ numbers and durations

# Every number mqctl reads from text (a flag, a queue list, a plan file, a duration) is written
# in ASCII digits: Python's int(), float(), str.isdigit() and a regex's \d also take every
# other Unicode digit ('-٣m' would be -3m, 'broker-a:٣' queue 3), which no RocketMQ tool
# does (Java's Long.parseLong takes them too, but the brokers' and mqadmin's text never holds
# them). The longest integer read is MAX_DIGITS (an offset has at most 19 digits).
MAX_DIGITS = 40
_INT = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def is_digits(text: str) -> bool:
    """``text`` is one or more ASCII digits (``str.isdigit`` also takes ``'٣'``, ``'³'``)."""
    return bool(text) and text.isascii() and text.isdigit()


def _non_ascii_digit(text: str) -> bool:
    return any(c.isdigit() and not c.isascii() for c in text)


def parse_int(text: str, what: str, *, lo: int | None = None, hi: int | None = None,
              hint: str | None = None) -> int:
    """A whole number written in ASCII digits (an optional sign, spaces around it), of at
    most :data:`MAX_DIGITS` digits and within ``lo``..``hi``; else a usage error naming
    ``what`` (``--queues``, ``plan file p.csv: row 1: target``)."""
    from mqctl.errors import UsageError

    s = str(text).strip()
    if not _INT.fullmatch(s):
        why = " (only ASCII digits 0-9 are read)" if _non_ascii_digit(s) else ""
        raise UsageError(f"{what}: {_shown(s)!r} is not a whole number{why}", hint=hint)
    digits = len(s.lstrip("+-"))
    if digits > MAX_DIGITS:
        raise UsageError(f"{what}: a number of {digits:,} digits: at most {MAX_DIGITS} are read",
                         hint=hint)
    n = int(s)
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        span = (f"{lo} to {hi}" if lo is not None and hi is not None else
                f"at least {lo}" if lo is not None else f"at most {hi}")
        raise UsageError(f"{what}: {n} is out of range ({span})", hint=hint)
    return n


def parse_number(text: str, what: str, *, lo: float | None = None, hi: float | None = None,
                 hint: str | None = None) -> float:
    """A finite decimal number in ASCII digits (``1.5``, ``2e3``; never ``inf``, ``nan`` or a
    Unicode digit, which ``float()`` takes), within ``lo``..``hi``."""
    import math

    from mqctl.errors import UsageError

    s = str(text).strip()
    if not _NUMBER.fullmatch(s):
        why = " (only ASCII digits 0-9 are read)" if _non_ascii_digit(s) else ""
        raise UsageError(f"{what}: {_shown(s)!r} is not a number{why}", hint=hint)
    v = float(s)
    if not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
        span = (f"{lo:g} to {hi:g}" if lo is not None and hi is not None else
                f"at least {lo:g}" if lo is not None else f"at most {hi:g}" if hi is not None
                else "a finite number")
        raise UsageError(f"{what}: {_shown(s)} is out of range ({span})", hint=hint)
    return v


def parse_duration_option(text: str, flag: str, *, lo_ms: int | None = None,
                          hi_ms: int = MAX_MS - MIN_MS, bare_seconds: bool = True,
                          signed: bool = False) -> int:
    """The one parser of a duration option (``--keep 7d``, ``--align 10s``, ``--interval
    2m``, ``--max-skew PT5M``), in ms, within ``lo_ms``..``hi_ms`` (each option's own bounds):
    a number with a unit, ISO-8601 (``PT2M``), or with ``bare_seconds`` a bare number of
    seconds (``0`` turns a feature off); ASCII digits only; never ``inf`` or ``nan``; a sign
    only when ``signed`` (then ``lo_ms`` defaults to ``-hi_ms``, else to 0). A usage error
    names the flag."""
    from mqctl.errors import UsageError

    s = text.strip()
    hint = "give a duration such as 10s, 5m or 1h30m"
    if _non_ascii_digit(s):
        raise UsageError(f"{flag} {_shown(text)!r}: only ASCII digits 0-9 are read", hint=hint)
    if _NUMBER.fullmatch(s) and not s.startswith(("+", "-")) and "e" not in s.lower():
        if not bare_seconds:
            raise UsageError(f"{flag} {_shown(text)!r} has no unit", hint=hint)
        ms = _bounded_ms(float(s) * 1000, text)
    else:
        if s.startswith(("+", "-")) and not signed:
            raise UsageError(f"{flag} {_shown(text)!r} must not be negative"
                             if s.startswith("-") else f"{flag} {_shown(text)!r} must be a "
                             "plain duration", hint=hint)
        ms = parse_duration_ms(s)
    lo = lo_ms if lo_ms is not None else (-hi_ms if signed else 0)
    if not lo <= ms <= hi_ms:
        raise UsageError(f"{flag} {_shown(text)!r} is out of range ({format_duration(lo) or 0}"
                         f" to {format_duration(hi_ms)})", hint=hint)
    return ms


def parse_offset_from_now_ms(text: str) -> int:
    """A signed offset from now (``--by-duration -2h``): an unsigned value is the past, with
    the same warning as an unsigned relative time."""
    ms = parse_duration_ms(text, default_sign=-1)
    s = text.strip()
    if s and s[0] not in "+-":
        _warn(f"duration {_shown(s)!r} has no sign: read as -{_shown(s)} (in the past); "
              f"write -{_shown(s)} for the past or +{_shown(s)} for the future")
    return ms


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
    why = ": only ASCII digits 0-9 are read" if _non_ascii_digit(s) else ""
    raise TimeParseError(f"cannot parse duration {_shown(text)!r}{why}",
                         hint="use a number with a unit: -2h, 30m, 1d, 1h30m, 500ms, or -PT2H")


def _bounded_ms(total: float, text: str) -> int:
    """A duration in whole ms; one longer than the whole accepted time range is refused
    (``float('9' * 400)`` is inf, which ``int()`` cannot take)."""
    if not total <= MAX_MS - MIN_MS:  # also catches inf and nan
        raise TimeParseError(f"cannot parse duration {_shown(text)!r}: out of range (more than "
                             f"{(MAX_MS - MIN_MS) // 86_400_000} days)",
                             hint="use a duration within the years 1970..9999, e.g. -2h or 30d")
    return int(round(total))


def parse_time(text: str, *, now: int | None = None, tz: tzinfo | None = None,
               strict: bool = True) -> int:
    """Parse a point in time to epoch milliseconds. See the module docstring for the forms.

    The result lies within 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z; a time before the
    epoch (0001-01-01, -9999999999999999999h) or after 9999 is a :class:`TimeParseError`.
    Zone-less forms are read in ``tz``, else the display zone (``--tz``), else this machine's.
    ``strict``: a zone-less local time in a DST gap or overlap is a :class:`TimeParseError`
    naming both candidate instants (what a reset target needs); otherwise it is read as Java
    reads it and a warning goes to the warning sink.
    """
    ms = _parse_time(text, now=now, tz=tz if tz is not None else display_tz(), strict=strict)
    if MIN_MS <= ms <= MAX_MS:
        return ms
    err = _bad(text, "it is before 1970-01-01T00:00:00Z; RocketMQ timestamps start at the epoch"
               if ms < MIN_MS else "it is after 9999-12-31T23:59:59.999Z")
    err.hint = ("give a time from 1970-01-01T00:00:00Z (epoch ms 0) to 9999-12-31, e.g. "
                "2024-06-01T10:00:00Z or -2h")
    raise err


def _parse_time(text: str, *, now: int | None, tz: tzinfo | None, strict: bool) -> int:
    if not isinstance(text, str):
        raise _bad(str(text))
    s = text.strip()
    if not s:
        raise _bad(text, "empty")
    base = now_ms() if now is None else now
    if s.lower() == "now":
        return base
    if not s.isascii():  # (a Unicode digit: fromisoformat, int() and \\d would take it)
        raise _bad(text, "only ASCII digits are read (0-9)")
    if is_digits(s):
        if len(s) > MAX_DIGITS:
            raise _bad(text, "epoch milliseconds out of range (after 9999-12-31)")
        v = int(s)
        if len(s) <= 10:
            raise _bare_number(s)
        if v > MAX_MS:
            raise _bad(text, "epoch milliseconds out of range (after 9999-12-31)")
        return v
    # relative: an unsigned value means "ago", said in a warning (the sign is explicit in help
    # and output: -30m is the past, +30m the future)
    if _REL.match(s) or _ISO_DUR.match(s):
        try:
            ms = base + parse_duration_ms(s, default_sign=-1)
            if s[0] not in "+-":
                _warn(f"time {_shown(s)!r} has no sign: read as -{_shown(s)} (in the past); "
                      f"write -{_shown(s)} for the past or +{_shown(s)} for the future")
            return ms
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
        return _local_ms(dt, tz, text=s, strict=strict)
    iso = s.replace(" ", "T", 1) if re.match(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]", s) else s
    if iso.endswith(("Z", "z")):
        iso = iso[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        raise _bad(text) from None
    if dt.tzinfo is None:
        return _local_ms(dt, tz, text=s, strict=strict)
    return _aware_ms(dt)


def _bare_number(s: str) -> TimeParseError:
    """A number of up to 10 digits: epoch seconds only when it plausibly is one (10 digits,
    2001..2286); a date written without dashes or a small number gets its own hint."""
    if _DATE8.match(s):
        return TimeParseError(f"cannot parse time {s!r}: it looks like a date without dashes",
                              hint=f"write {s[:4]}-{s[4:6]}-{s[6:]} (midnight, local time) or "
                                   f"{s[:4]}-{s[4:6]}-{s[6:]}T00:00:00Z")
    if len(s) == 10:
        return TimeParseError(f"cannot parse time {s!r}: it looks like epoch seconds, mqctl "
                              "takes epoch milliseconds",
                              hint=f"append 000 ({s}000), or use ISO-8601; {ACCEPTED_FORMS}")
    rel = (f"for a relative time give a sign and a unit (-{int(s)}m = {int(s)} minutes ago, "
           f"-{int(s)}s); " if int(s) else "")
    return TimeParseError(f"cannot parse time {s!r}: a bare number is neither epoch "
                          "milliseconds (13 digits) nor a duration",
                          hint=f"{rel}for the epoch write 1970-01-01T00:00:00Z; {ACCEPTED_FORMS}")


def _aware_ms(dt: datetime) -> int:
    """Exact epoch ms of an aware datetime (no float, no time_t: year 1 works)."""
    return (dt - _EPOCH) // timedelta(milliseconds=1)


def _local_candidates(dt: datetime, tz: tzinfo | None) -> tuple[int, int, bool]:
    """The instants a zone-less wall time can mean: (fold 0, fold 1, exists). Equal outside
    DST transitions; different in an overlap (the wall time happens twice, exists) and in a
    gap (it never happens, not exists: the clocks jump over it)."""
    if tz is not None:
        a = _aware_ms(dt.replace(tzinfo=tz, fold=0))
        b = _aware_ms(dt.replace(tzinfo=tz, fold=1))
        back = (_EPOCH + timedelta(milliseconds=a)).astimezone(tz).replace(tzinfo=None)
    else:  # naive -> this machine's zone (datetime.timestamp honours fold)
        a = int(dt.replace(fold=0).timestamp() * 1000)
        b = int(dt.replace(fold=1).timestamp() * 1000)
        back = datetime.fromtimestamp(a / 1000)
    return a, b, back.replace(fold=0) == dt.replace(fold=0)


def _local_ms(dt: datetime, tz: tzinfo | None, *, text: str = "", strict: bool = False) -> int:
    try:
        a, b, exists = _local_candidates(dt, tz)
    except (OverflowError, OSError, ValueError):
        # outside what the platform's local-time functions take (e.g. year 1): the parser's
        # range check refuses it; UTC is close enough to say on which side it falls
        return _aware_ms(dt.replace(tzinfo=UTC))
    if a == b:
        return a
    first, second = min(a, b), max(a, b)
    wall = _aware_ms(dt.replace(tzinfo=UTC))

    def spelled(ms: int) -> str:
        off = (wall - ms) // 60_000
        sign = "-" if off < 0 else "+"
        iso = dt.replace(microsecond=(dt.microsecond // 1000) * 1000).isoformat(
            timespec="seconds" if not dt.microsecond else "milliseconds")
        return (f"{iso}{sign}{abs(off) // 60:02d}:{abs(off) % 60:02d} "
                f"(= {format_ms(ms, zero_unknown=False)})")

    what = ("exists twice in {zone} (clocks are set back: DST ends)" if exists else
            "does not exist in {zone} (clocks jump over it: DST starts)").format(
                zone=zone_name(tz))
    both = f"{spelled(first)} or {spelled(second)}"
    if strict:
        raise TimeParseError(f"local time {_shown(text)!r} {what}",
                             hint=f"give the offset to say which instant you mean: {both}")
    # as java.time does (ZonedDateTime.ofLocal): an overlap takes the earlier offset (the
    # earlier instant), a gap moves the wall time later by the gap's length (the later one)
    chosen, other = (first, second) if exists else (second, first)
    _warn(f"local time {_shown(text)!r} {what}: read as {spelled(chosen)}, as Java does; the "
          f"other candidate is {spelled(other)}")
    return chosen


def format_ms(ms: int | None, *, utc: bool = True, zero_unknown: bool = True) -> str:
    """ISO-8601 (UTC, millisecond precision, four-digit year) for output; empty for None.

    ``zero_unknown``: 0 is RocketMQ's "no timestamp" (a queue never consumed, no lock renewal)
    and renders empty too. Pass ``zero_unknown=False`` for an instant the user gave (``--to-time
    1970-01-01T00:00:00Z`` is epoch ms 0, and must render as such). A value outside the years
    1..9999 renders as its epoch ms. ``utc=False``: ISO-8601 in the display zone, with its
    offset (``2024-06-01T18:00:00.000+08:00``).
    """
    if ms is None or (zero_unknown and not ms):
        return ""
    try:
        dt = _EPOCH + timedelta(milliseconds=int(ms))
        if not utc:
            dt = dt.astimezone(display_tz())
    except (OverflowError, OSError, ValueError):
        return f"epoch ms {ms}"
    if utc:
        return (f"{dt.year:04d}-{dt:%m-%dT%H:%M:%S}." f"{dt.microsecond // 1000:03d}Z")
    return f"{dt.year:04d}-" + dt.isoformat(timespec="milliseconds").split("-", 1)[1]


def _zone_suffix(dt: datetime) -> str:
    """``UTC`` for a zero offset, else the offset (``+08:00``, ``-04:00``): always the zone of
    that instant, so a DST change within a table cannot mislead."""
    off = dt.utcoffset() or timedelta(0)
    if not off:
        return "UTC"
    mins = int(off.total_seconds()) // 60
    sign = "-" if mins < 0 else "+"
    return f"{sign}{abs(mins) // 60:02d}:{abs(mins) % 60:02d}"


def _in_display(ms: int) -> datetime:
    return (_EPOCH + timedelta(milliseconds=int(ms))).astimezone(display_tz())


def format_local(ms: int | None, *, zero_unknown: bool = True) -> str:
    """``YYYY-MM-DD HH:MM:SS +08:00`` in the display zone (``--tz``, else this machine's),
    with the zone of that instant (``UTC`` for a zero offset); empty for None (and 0, see
    :func:`format_ms`)."""
    if ms is None or (zero_unknown and not ms):
        return ""
    try:
        dt = _in_display(ms)
    except (OverflowError, OSError, ValueError):
        return f"epoch ms {ms}"
    return f"{dt.year:04d}-{dt:%m-%d %H:%M:%S} {_zone_suffix(dt)}"


_ISO_UTC_RE = re.compile(r"\b([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
                         r"(?:\.([0-9]{1,3}))?Z")


def localize_iso(text: str) -> str:
    """Every ISO-8601 UTC instant in a text for people (``>= 2024-06-01T10:00:00.000Z``, as
    plans and plan files keep them) shown in the display zone instead (``>= 2024-06-01
    18:00:00 +08:00``): tables follow ``--tz`` while files and machine formats stay UTC."""
    def one(m: re.Match[str]) -> str:
        y, mo, d, h, mi, sec, frac = m.groups()
        try:
            dt = datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec),
                          int((frac or "0").ljust(3, "0")) * 1000, tzinfo=UTC)
        except ValueError:
            return m.group(0)
        return format_local(int((dt - _EPOCH) / timedelta(milliseconds=1)), zero_unknown=False)

    return _ISO_UTC_RE.sub(one, text)


def format_clock(ms: int | None, now: int | None = None) -> str:
    """A short local time for tables: ``19:21:32 +08:00`` when it falls on the same day as
    ``now`` in the display zone, else the full :func:`format_local`; empty for None/0."""
    if not ms:
        return ""
    try:
        dt = _in_display(ms)
        today = _in_display(now_ms() if now is None else now).date()
    except (OverflowError, OSError, ValueError):
        return f"epoch ms {ms}"
    if dt.date() != today:
        return format_local(ms)
    return f"{dt:%H:%M:%S} {_zone_suffix(dt)}"


def format_duration(ms: int | float | None) -> str:
    """Human form of a duration, two units at most: ``3h 2m``, ``1m 5s``, ``9.5s``, ``45s``,
    ``350ms``, ``2d 4h`` (negative: ``-1m 1s``)."""
    if ms is None:
        return ""
    neg = ms < 0
    ms = abs(int(ms))
    if ms < 1000:
        out = f"{ms}ms"
    elif ms < 60_000:
        out = f"{ms / 1000:.1f}s" if ms < 10_000 else f"{ms // 1000}s"
    elif ms < 3_600_000:
        out = f"{ms // 60_000}m {(ms % 60_000) // 1000}s"
    elif ms < 86_400_000:
        out = f"{ms // 3_600_000}h {(ms % 3_600_000) // 60_000}m"
    else:
        out = f"{ms // 86_400_000}d {(ms % 86_400_000) // 3_600_000}h"
    return ("-" if neg else "") + out


__all__ = ["ACCEPTED_FORMS", "MAX_DIGITS", "MAX_MS", "MIN_MS", "is_digits", "parse_int",
           "parse_number", "parse_duration_option", "parse_time", "parse_duration_ms",
           "parse_offset_from_now_ms", "format_ms",
           "format_local", "format_clock", "format_duration", "now_ms", "set_clock",
           "resolve_tz", "set_display_tz", "display_tz", "set_warning_sink", "zone_name",
           "timedelta"]


def conversion_rows(texts: list[str], now: int | None = None) -> list[dict[str, object]]:
    """``mqctl time``'s rows: each text as epoch ms, UTC, the display zone's local time and
    the signed distance from ``now``. Parsed leniently (a warning, where a reset target is
    refused)."""
    now = now_ms() if now is None else now
    rows: list[dict[str, object]] = []
    for t in texts:
        ms = parse_time(t, now=now, strict=False)
        delta = ms - now
        rows.append({"input": t, "epoch_ms": ms, "utc": format_ms(ms, zero_unknown=False),
                     "local": format_local(ms, zero_unknown=False),
                     "offset_from_now_s": round(delta / 1000, 3),
                     "from_now": "0s" if not delta else
                     ("+" if delta > 0 else "") + format_duration(delta)})
    return rows
