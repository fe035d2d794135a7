"""Reads of small input files (config, plan, rollback, topology, scenario, TLS files): a regular
file of at most the cap of its kind (:data:`INPUT_CAPS`, docs/errors.md), never a FIFO or
device, and text (a compressed, UTF-16/32 or binary file is named as such); JSON and YAML with
bounded numbers, nesting and expansion."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable
from typing import IO, Any

from mqctl.errors import UsageError
from mqctl.fsutil.files import open_regular, shown_path
from mqctl.fsutil.paths import PathRule, path_error

# --------------------------------------------------------------------------------------------
# bounded reads of small input files

_MB = 1_000_000
# The most mqctl reads of each kind of input file (docs/errors.md, "Input files"). They are
# small: a config with many profiles is a few KB, a plan or rollback file of 65,536 queues on
# each of 2 brokers about 10 MB, a topology of 100,000 consumers a few MB.
INPUT_CAPS: dict[str, int] = {
    "config file": 1 * _MB,
    "credentials file": 1 * _MB,
    "scenario file": 1 * _MB,
    "TLS file": 4 * _MB,
    "topology file": 16 * _MB,
    "completion cache": 16 * _MB,
    "lock state file": 16 * _MB,
    "plan file": 64 * _MB,
    "rollback file": 64 * _MB,
    "journal file": 64 * _MB,
}


def _mb(n: int) -> str:
    return f"{n / _MB:g} MB" if n >= _MB else f"{n:,} bytes"


def input_file_error(path: str | os.PathLike[str], what: str, cap: str | None = None
                     ) -> UsageError | None:
    """Why the input file ``path`` is not read (without opening it): :func:`path_error`'s
    reasons (a name too long, a dangling link, a directory, a FIFO or device that would block
    or never end, ...), or larger than its cap (``INPUT_CAPS[cap or what]``). None when it is
    a regular file within the cap, or when it is missing or ``stat`` fails (the reader names a
    missing file or a permission error in its own words)."""
    limit = INPUT_CAPS[cap or what]
    err = path_error(str(path), PathRule(what))
    if err is not None:
        return err
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_size > limit:
        return too_large(path, what, cap, limit)
    return None


def too_large(path: str | os.PathLike[str], what: str, cap: str | None, limit: int
              ) -> UsageError:
    return UsageError(f"{what} {shown_path(path)} is larger than {_mb(limit)}, the most mqctl "
                      f"reads for a {cap or what}",
                      hint="check that it is the right file (docs/errors.md lists the size "
                           "limit of each input file)")


def read_text_capped(path: str | os.PathLike[str], what: str, *, cap: str | None = None,
                     encoding: str = "utf-8") -> str:
    """The text of a small input file, as ``Path.read_text`` gives it (universal newlines, a
    UTF-8 byte order mark dropped), read in one bounded step: what :func:`input_file_error`
    refuses (a FIFO, device or socket, a directory, a name too long, a file larger than its
    cap, ``INPUT_CAPS[cap or what]``) is a usage error (exit 2) before it is read whole, and
    so is a file that is not text in ``encoding`` (:func:`decode_text`: gzip, UTF-16, binary,
    an invalid byte). A missing file or one this user may not read stays
    ``FileNotFoundError`` / ``PermissionError``, for the caller's own message."""
    err = input_file_error(path, what, cap)
    if err is not None:
        raise err
    limit = INPUT_CAPS[cap or what]
    with open_regular(path, "rb") as fh:
        data = fh.read(limit + 1)  # a file that grew since the check, /proc: still bounded
    if len(data) > limit:
        raise too_large(path, what, cap, limit)
    return decode_text(data, f"{what} {shown_path(path)}", encoding)


# what the first bytes of a file that is not text say it is (magic numbers: RFC 1952 gzip,
# bzip2, xz, zstd, zip; the byte order marks of UTF-32 before UTF-16, whose BOM they start with)
_NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip, or zcat FILE > FILE.txt)"),
    (b"BZh", "bzip2-compressed", "decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it first (unzstd)"),
    (b"PK\x03\x04", "a zip archive", "extract the file from it first (unzip)"),
    (b"\xff\xfe\x00\x00", "UTF-32 text (little-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-32 -t UTF-8 FILE)"),
    (b"\x00\x00\xfe\xff", "UTF-32 text (big-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-32 -t UTF-8 FILE)"),
    (b"\xff\xfe", "UTF-16 text (little-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE)"),
    (b"\xfe\xff", "UTF-16 text (big-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE)"),
)


def decode_text(data: bytes, name: str, encoding: str = "utf-8") -> str:
    """``data`` (the bytes of the input file ``name``, e.g. ``scenario file x.yaml``) as text:
    decoded as a text-mode ``open`` would (universal newlines), a UTF-8 byte order mark
    dropped. What is not text is a usage error naming what it is (exit 2): a gzip, bzip2, xz,
    zstd or zip file, UTF-16 or UTF-32 text (with a byte order mark, or UTF-16 without one:
    every other byte NUL), a binary file (a NUL byte), or a byte that is not ``encoding``
    (where: line and column)."""
    for magic, kind, fix in _NOT_TEXT:
        if data.startswith(magic):
            raise UsageError(f"{name} is {kind}, not {_enc(encoding)} text", hint=fix)
    nul = data.find(b"\x00")
    if nul >= 0:
        head = data[:64]
        if len(head) >= 4 and (head[1::2].count(0) >= len(head) // 4
                               or head[0::2].count(0) >= len(head) // 4):
            raise UsageError(f"{name} looks like UTF-16 text without a byte order mark (every "
                             f"other byte is NUL), not {_enc(encoding)} text",
                             hint="save it as UTF-8 (iconv -f UTF-16LE -t UTF-8 FILE)")
        raise UsageError(f"{name} is a binary file, not text (a NUL byte at offset {nul:,})",
                         hint="check that it is the right file")
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        encoding = "utf-8-sig"
    try:
        return read_stream_text(data, encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(f"{name} is not {_enc(encoding)} text: byte 0x{data[exc.start]:02x} at "
                         f"line {line} column {col} is not valid {_enc(encoding)}",
                         hint="save it as UTF-8 (iconv -f LATIN1 -t UTF-8 FILE, for a Latin-1 "
                              "file)") from None


def _enc(encoding: str) -> str:
    e = encoding.lower().replace("_", "-")
    return "UTF-8" if e in ("utf-8", "utf8", "utf-8-sig") else encoding


# the longest integer mqctl reads from an input file (an offset is at most 19 digits,
# Long.MAX_VALUE): a longer one is refused naming where, never parsed (Python refuses more
# than 4,300 digits with "use sys.set_int_max_str_digits()", and a long one is slow)
MAX_INT_DIGITS = 40


def _digits_error(name: str, text: str, ndigits: int) -> UsageError:
    m = re.search(f"[0-9]{{{MAX_INT_DIGITS + 1},}}", text)
    where = ""
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        where = f" at line {line} column {col}"
    return UsageError(f"{name}: a number of {ndigits:,} digits{where}: mqctl reads integers of "
                      f"at most {MAX_INT_DIGITS} digits", hint="check that it is the right file, "
                      "and the number (an offset has at most 19 digits)")


def load_json(text: str, name: str, *, pairs: Callable[[list[tuple[str, Any]]], Any] | None
              = None) -> Any:
    """``json.loads`` of an input file's text with every failure a usage error (exit 2)
    naming ``name``: a syntax error, a nesting too deep for the parser (100k ``[``), an
    integer longer than :data:`MAX_INT_DIGITS`; ``pairs`` is the ``object_pairs_hook`` (a
    key given twice: the plan and rollback files refuse it). A :class:`UsageError` from
    ``pairs`` is raised with ``name`` before its message."""
    def bounded_int(digits: str) -> int:
        n = len(digits.lstrip("-"))
        if n > MAX_INT_DIGITS:
            raise _digits_error(name, text, n)
        return int(digits)

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_int=bounded_int)
    except UsageError as exc:
        if exc.message.startswith(name):
            raise
        raise UsageError(f"{name}: {exc.message}", hint=exc.hint) from None
    except RecursionError:
        raise UsageError(f"{name}: JSON nested too deeply") from None
    except ValueError as exc:
        raise UsageError(f"{name} is not valid JSON: {exc}") from None


def read_stream_capped(stream: IO[str], what: str, *, cap: str) -> str:
    """At most ``INPUT_CAPS[cap]`` characters from a text stream (stdin given as ``-``);
    more is refused (exit 2) without reading the rest."""
    limit = INPUT_CAPS[cap]
    raw = getattr(stream, "buffer", None)
    if raw is not None:  # the bytes, named as a file's are when they are not text
        data = raw.read(limit + 1)
        if len(data) > limit:
            raise too_large("(stdin)", what, cap, limit)
        return decode_text(data, f"{what} (stdin)")
    text = stream.read(limit + 1)
    if len(text) > limit:
        raise too_large("(stdin)", what, cap, limit)
    return text


def read_stream_text(data: bytes, encoding: str) -> str:
    """``data`` decoded as a text-mode ``open`` would (universal newlines)."""
    with io.TextIOWrapper(io.BytesIO(data), encoding=encoding) as t:
        return t.read()


def load_yaml(text: str, name: str, hint: str) -> Any:
    """``yaml.safe_load`` of a small input file's text; every failure is a usage error (exit
    2) naming ``name`` (``config file x.yaml``): a syntax error with its line and column, a
    nesting too deep for the parser (10,000 ``[``: RecursionError), and aliases that expand
    to more values than the text could hold without them (:func:`_expands_within`: a
    "billion laughs" of 600 bytes is 10^9 values to whatever walks it, e.g. an error message
    that shows the value)."""
    import yaml

    try:
        doc = yaml.load(text, Loader=_bounded_loader(name))  # (a safe loader)
    except UsageError:
        raise
    except RecursionError:
        raise UsageError(f"{name}: YAML nested too deeply", hint=hint) from None
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's limit
            raise UsageError(f"{name}: YAML nested too deeply", hint=hint) from None
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise UsageError(f"{name} is not valid YAML{where}: {problem}", hint=hint) from None
    limit = YAML_EXPANSION * len(text) + 1000
    if not _expands_within(doc, limit):
        raise UsageError(f"{name}: its YAML aliases (*name) expand to more than {limit:,} "
                         "values", hint="write the values out, or use fewer aliases")
    return doc


def _bounded_loader(name: str) -> Any:
    """A safe YAML loader (libyaml's parser where PyYAML has it: 3-4x faster on a 16 MB
    topology) whose integers are at most :data:`MAX_INT_DIGITS` digits (a longer one is a
    usage error naming its line and column)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def bounded_int(loader: Any, node: Any) -> Any:
        digits = sum(c.isascii() and c.isdigit() for c in str(node.value))
        if digits > MAX_INT_DIGITS:
            mark = node.start_mark
            raise UsageError(f"{name}: a number of {digits:,} digits at line {mark.line + 1} "
                             f"column {mark.column + 1}: mqctl reads integers of at most "
                             f"{MAX_INT_DIGITS} digits", hint="check that it is the right file")
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    loader: Any = type("BoundedLoader", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:int", bounded_int)
    return loader


# how many values a YAML text may expand to through its aliases, per character of the text
# (a value takes at least one character written out; a profile reused a few times by alias
# stays far below)
YAML_EXPANSION = 10


def _expands_within(doc: Any, limit: int) -> bool:
    """Whether walking ``doc`` as a tree (an alias counted each time it is used) meets at
    most ``limit`` values; stops as soon as it meets more."""
    todo, n = [doc], 0
    while todo:
        v = todo.pop()
        n += 1
        if n > limit:
            return False
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return True
