"""A lenient reader for RocketMQ's fastjson bodies, and writers for both dialects.

RocketMQ serialises bodies with fastjson 1.2.x, which is *not* standard JSON in places
(see ``docs/protocol.md`` and apache/rocketmq ``RemotingSerializable``):

* ``Map<Integer|Long, V>`` is written with bare integer keys: ``{"brokerAddrs":{0:"a:1"}}``;
* ``Map<MessageQueue, V>`` is written with JSON objects as keys:
  ``{{"brokerName":"b","queueId":0,"topic":"T"}:{...}}``;
* persisted store files are tab-indented and put number-keyed entries inline;
* shared references may appear as ``{"$ref":"$.path"}``.

Some servers (or proxies using Gson) send maps with complex keys as a list of pairs
``[[{key}, value], ...]``, and the C++ variant of ``ResetOffsetBody`` is a list of objects
with an ``offset`` field. :func:`mq_map` normalises all three forms.

The codec knows no domain model (``docs/architecture.md``): a ``MessageQueue`` key is a
:class:`QueueKey` here, and :mod:`mqctl.models` builds its ``MessageQueue`` from it.

:func:`loads` is a recursive-descent parser (a tokenizer, not regex patching: regexes corrupt
string values that contain ``,5:`` and cannot handle object keys). Object keys become:
``str`` for quoted keys, ``int`` for bare integers, :class:`QueueKey` for objects with
``topic``/``brokerName``/``queueId``, and a :class:`FrozenKey` for any other value.
Bare identifiers and trailing commas, which fastjson's own parser accepts, are accepted too.

Every malformed input raises :class:`mqctl.errors.BodyError` with the position; nothing else
escapes (the fuzz suite in ``fuzz/`` checks that).
"""

from __future__ import annotations

import json
import json.scanner
import math
import re
from typing import Any

from mqctl.errors import BodyError

__all__ = ["FrozenKey", "QueueKey", "loads", "dumps", "dumps_fastjson", "mq_map", "queue_key",
           "to_plain", "MAX_DEPTH"]

MAX_DEPTH = 256


class QueueKey:
    """A ``MessageQueue`` (``org.apache.rocketmq.common.message.MessageQueue``) as the codec
    sees it: the three fields, nothing of the domain. Read-only by convention (a plain class:
    a frozen dataclass costs three times as much to build, and tables hold thousands).

    It equals, and hashes as, any queue with the same three fields (``mqctl.models.MessageQueue``
    included), so a table parsed here is looked up with the model's queues.
    """

    __slots__ = ("topic", "broker_name", "queue_id")

    def __init__(self, topic: str, broker_name: str, queue_id: int) -> None:
        self.topic = topic
        self.broker_name = broker_name
        self.queue_id = queue_id

    def __repr__(self) -> str:
        return (f"QueueKey(topic={self.topic!r}, broker_name={self.broker_name!r}, "
                f"queue_id={self.queue_id!r})")

    def __eq__(self, other: object) -> bool:
        if not _is_queue(other):
            return NotImplemented
        o: Any = other
        return (self.queue_id == o.queue_id and self.topic == o.topic
                and self.broker_name == o.broker_name)

    def __hash__(self) -> int:
        # the hash of a dataclass with these three fields (mqctl.models.MessageQueue)
        return hash((self.topic, self.broker_name, self.queue_id))

    def sort_key(self) -> tuple[str, str, int]:
        return (self.topic, self.broker_name, self.queue_id)

    def __str__(self) -> str:
        # MessageQueue.toString(): how the standard JSON writer keys a map by queue
        return (f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, "
                f"queueId={self.queue_id}]")

    def to_dict(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}


def _is_queue(value: Any) -> bool:
    """A :class:`QueueKey`, or any object with its three fields (the model's MessageQueue)."""
    return isinstance(value, QueueKey) or (
        hasattr(value, "queue_id") and hasattr(value, "broker_name") and hasattr(value, "topic"))


def queue_key(d: Any) -> QueueKey | None:
    """The queue an object ``{topic, brokerName, queueId}`` names (other fields ignored; a
    numeric string queue id is read as a number), or None when it names none."""
    if not isinstance(d, dict):
        return None
    topic, broker, qid = d.get("topic"), d.get("brokerName"), d.get("queueId")
    if not isinstance(topic, str) or not isinstance(broker, str):
        return None
    if isinstance(qid, bool) or not isinstance(qid, int):
        if isinstance(qid, str) and _digits(qid.lstrip("-")) and len(qid) <= 20:
            qid = int(qid)
        else:
            return None
    return QueueKey(topic, broker, qid)


class FrozenKey(tuple):  # type: ignore[type-arg]
    """A hashable stand-in for a non-string, non-queue object or array used as a key."""

    __slots__ = ()

    def to_plain(self) -> Any:
        return _thaw(self)


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return FrozenKey(("{}",) + tuple(sorted(((str(k), _freeze(v)) for k, v in value.items()),
                                                key=lambda kv: kv[0])))
    if isinstance(value, list):
        return FrozenKey(("[]",) + tuple(_freeze(v) for v in value))
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, FrozenKey):
        if value and value[0] == "{}":
            return {k: _thaw(v) for k, v in value[1:]}
        return [_thaw(v) for v in value[1:]]
    return value


def _key_of(value: Any) -> Any:
    """Convert a parsed non-string key into a hashable canonical key."""
    if isinstance(value, dict):
        mq = queue_key(value)
        if mq is not None:
            return mq
    if isinstance(value, (dict, list)):
        return _freeze(value)
    if isinstance(value, float):
        return value
    return value


_WS = " \t\n\r\f\v\ufeff"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t", "'": "'"}
_IDENT_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$")
# a number's digits are ASCII, as fastjson reads them (str.isdigit also takes '٣')
_DIGITS = frozenset("0123456789")


def _digits(text: str) -> bool:
    return bool(text) and all(c in _DIGITS for c in text)
_IDENT_CHARS = _IDENT_START | set("0123456789")
_NUM_RE = re.compile(r"[0-9+\-.eE]*")
_WS_RE = re.compile(r"[ \t\n\r\f\v\ufeff]*")


# The C scanner of the standard library reads the entries of a map keyed by objects (a
# ``MessageQueue`` key and its offset wrapper: the bulk of consume stats and offset tables) many
# times faster than the recursive descent below (``_Parser.std_value``). It is not tried
# everywhere: a failed attempt costs a pass over the text before it (the error's line number).
_DECODER: Any = json.JSONDecoder(parse_constant=lambda name: _reject_constant(name))
_scan = json.scanner.make_scanner(_DECODER)
_SURROGATE_RE = re.compile(r"\\u[dD][89a-fA-F]")


class _Parser:
    __slots__ = ("s", "n", "i", "depth")

    def __init__(self, s: str):
        self.s = s
        self.n = len(s)
        self.i = 0
        self.depth = 0

    def error(self, msg: str, pos: int | None = None) -> BodyError:
        p = self.i if pos is None else pos
        line = self.s.count("\n", 0, p) + 1
        col = p - (self.s.rfind("\n", 0, p) + 1) + 1
        near = self.s[p:p + 20].replace("\n", "\\n").replace("\t", "\\t")
        return BodyError(f"cannot parse body: {msg} at line {line} column {col} (offset {p})"
                         + (f" near {near!r}" if near else " at end of input"), pos=p)

    def ws(self) -> None:
        s, n = self.s, self.n
        if self.i < n and s[self.i] not in _WS and s[self.i] != "/":
            return  # nothing to skip (most calls: compact bodies), without the regex
        i = _WS_RE.match(s, self.i).end()  # type: ignore[union-attr]
        if i >= n or s[i] != "/":
            self.i = i
            return
        while i < n:
            c = s[i]
            if c in _WS:
                i += 1
            elif c == "/" and i + 1 < n and s[i + 1] == "/":
                j = s.find("\n", i)
                i = n if j < 0 else j + 1
            elif c == "/" and i + 1 < n and s[i + 1] == "*":
                j = s.find("*/", i + 2)
                if j < 0:
                    self.i = i
                    raise self.error("unterminated comment")
                i = j + 2
            else:
                break
        self.i = i

    def parse(self) -> Any:
        self.ws()
        if self.i >= self.n:
            raise self.error("empty body")
        v = self.value()
        self.ws()
        if self.i != self.n:
            raise self.error("unexpected trailing data")
        return v

    def value(self) -> Any:
        if self.i >= self.n:
            raise self.error("unexpected end of input")
        c = self.s[self.i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"' or c == "'":
            return self.string()
        if c == "-" or c == "+" or c in _DIGITS or c == ".":
            return self.number()
        if c in _IDENT_START:
            word = self.ident()
            if word == "true":
                return True
            if word == "false":
                return False
            if word == "null" or word == "undefined":
                return None
            if word == "NaN":
                return math.nan
            if word == "Infinity":
                return math.inf
            raise self.error(f"unexpected word {word!r}", self.i - len(word))
        raise self.error(f"unexpected character {c!r}")

    def std_value(self) -> Any:
        """A value where standard JSON is all but certain (the keys and values of a map keyed by
        objects: ``MessageQueue`` keys, offset wrappers): the C scanner first, our rules where
        it fails. A value with more brackets than the depth left, or with a lone UTF-16
        surrogate escape, is read by our rules too (MAX_DEPTH holds; U+FFFD as ours makes it)."""
        s, i = self.s, self.i
        try:
            v, end = _scan(s, i)
        except (StopIteration, ValueError, RecursionError):
            return self.value()
        if (s.count("{", i, end) + s.count("[", i, end) > MAX_DEPTH - self.depth
                or _SURROGATE_RE.search(s, i, end) is not None):
            return self.value()
        self.i = end
        return v

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"nesting deeper than {MAX_DEPTH}")

    def obj(self) -> dict[Any, Any]:
        self.enter()
        self.i += 1
        out: dict[Any, Any] = {}
        std = False  # keyed by objects: a Java Map<MessageQueue, V>, its entries standard JSON
        self.ws()
        if self.i < self.n and self.s[self.i] == "}":
            self.i += 1
            self.depth -= 1
            return out
        while True:
            self.ws()
            if self.i >= self.n:
                raise self.error("unterminated object")
            c = self.s[self.i]
            if c == "}":  # trailing comma, as fastjson's parser tolerates
                self.i += 1
                break
            key: Any
            if c == '"' or c == "'":
                key = self.string()
            elif c == "{" or c == "[":
                key = _key_of(self.std_value())
                std = True
            elif c == "-" or c in _DIGITS:
                key = self.number()
                if isinstance(key, float):
                    raise self.error("a fractional number cannot be a map key")
            elif c in _IDENT_START:
                key = self.ident()
            else:
                raise self.error(f"expected a key, found {c!r}")
            self.ws()
            if self.i >= self.n or self.s[self.i] != ":":
                raise self.error("expected ':' after key")
            self.i += 1
            self.ws()
            out[key] = self.std_value() if std else self.value()
            self.ws()
            if self.i >= self.n:
                raise self.error("unterminated object")
            c = self.s[self.i]
            if c == ",":
                self.i += 1
                continue
            if c == "}":
                self.i += 1
                break
            raise self.error("expected ',' or '}' in object")
        self.depth -= 1
        return out

    def arr(self) -> list[Any]:
        self.enter()
        self.i += 1
        out: list[Any] = []
        self.ws()
        if self.i < self.n and self.s[self.i] == "]":
            self.i += 1
            self.depth -= 1
            return out
        while True:
            self.ws()
            if self.i < self.n and self.s[self.i] == "]":  # trailing comma
                self.i += 1
                break
            out.append(self.value())
            self.ws()
            if self.i >= self.n:
                raise self.error("unterminated array")
            c = self.s[self.i]
            if c == ",":
                self.i += 1
                continue
            if c == "]":
                self.i += 1
                break
            raise self.error("expected ',' or ']' in array")
        self.depth -= 1
        return out

    def ident(self) -> str:
        s, n, i = self.s, self.n, self.i
        j = i
        while j < n and s[j] in _IDENT_CHARS:
            j += 1
        self.i = j
        return s[i:j]

    def string(self) -> str:
        s, n = self.s, self.n
        quote = s[self.i]
        i = self.i + 1
        j = s.find(quote, i)
        if j >= 0 and s.find("\\", i, j) < 0:  # the common case: no escapes
            self.i = j + 1
            return s[i:j]
        parts: list[str] = []
        start = i
        while True:
            if i >= n:
                raise self.error("unterminated string", self.i)
            c = s[i]
            if c == quote:
                parts.append(s[start:i])
                self.i = i + 1
                return "".join(parts)
            if c == "\\":
                parts.append(s[start:i])
                if i + 1 >= n:
                    raise self.error("unterminated escape", i)
                e = s[i + 1]
                if e == "u":
                    hexd = s[i + 2:i + 6]
                    if len(hexd) != 4 or any(h not in "0123456789abcdefABCDEF" for h in hexd):
                        raise self.error("bad \\u escape", i)
                    cp = int(hexd, 16)
                    i += 6
                    # join surrogate pairs as Java/JSON encoders write them
                    if 0xD800 <= cp < 0xDC00 and s[i:i + 2] == "\\u":
                        low = s[i + 2:i + 6]
                        if len(low) == 4 and all(h in "0123456789abcdefABCDEF" for h in low):
                            lo = int(low, 16)
                            if 0xDC00 <= lo < 0xE000:
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                                i += 6
                    parts.append(chr(cp) if not (0xD800 <= cp < 0xE000) else "\ufffd")
                elif e == "x":
                    hexd = s[i + 2:i + 4]
                    if len(hexd) != 2 or any(h not in "0123456789abcdefABCDEF" for h in hexd):
                        raise self.error("bad \\x escape", i)
                    parts.append(chr(int(hexd, 16)))
                    i += 4
                elif e in _ESCAPES:
                    parts.append(_ESCAPES[e])
                    i += 2
                else:
                    raise self.error(f"bad escape \\{e}", i)
                start = i
                continue
            i += 1

    def number(self) -> int | float:
        s, i = self.s, self.i
        j = _NUM_RE.match(s, i).end()  # type: ignore[union-attr]
        text = s[i:j]
        self.i = j
        try:
            if any(c in text for c in ".eE"):
                return float(text)
            return int(text)
        except ValueError:
            raise self.error(f"bad number {text!r}", i) from None


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """Parse a fastjson (or standard JSON, or Gson) body. Raises :class:`BodyError`."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BodyError(f"body is not UTF-8 text (invalid byte at offset {exc.start})",
                            pos=exc.start) from None
    elif isinstance(data, str):
        text = data
    else:
        raise BodyError(f"cannot parse a {type(data).__name__} as a body")
    # Most bodies are standard JSON (routes from 4.9.4+ name servers, connections, time
    # spans): the C parser takes those; fastjson's extensions fall through to ours.
    if "{{" not in text and "[[" not in text:
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            pass
    try:
        return _Parser(text).parse()
    except RecursionError:
        raise BodyError(f"cannot parse body: nesting deeper than {MAX_DEPTH}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # leave NaN/Infinity to the lenient parser's own rules


def mq_map(value: Any, value_key: str = "offset") -> dict[Any, Any]:
    """Normalise a ``Map<MessageQueue, V>`` in any of the three wire forms, keyed by queue.

    * fastjson: ``{MessageQueue: v}`` (already keyed by :class:`QueueKey` after loads);
    * Gson pair list: ``[[{topic, brokerName, queueId}, v], ...]``;
    * ForC list: ``[{topic, brokerName, queueId, <value_key>: v}, ...]``.

    Keys are :class:`QueueKey`, or the caller's own queues when the map was keyed by them
    already; :func:`mqctl.models.queue_map` gives the model's ``MessageQueue`` keys.
    """
    if value is None:
        return {}
    out: dict[Any, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            if _is_queue(k):
                out[k] = v
            elif isinstance(k, FrozenKey):
                mq = queue_key(k.to_plain())
                if mq is None:
                    raise BodyError(f"map key is not a MessageQueue: {k.to_plain()!r}")
                out[mq] = v
            else:
                raise BodyError(f"map key is not a MessageQueue: {k!r}")
        return out
    if isinstance(value, list):
        for item in value:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], dict):
                mq = queue_key(item[0])
                if mq is None:
                    raise BodyError(f"pair key is not a MessageQueue: {item[0]!r}")
                out[mq] = item[1]
            elif isinstance(item, dict):
                mq = queue_key({k: item.get(k) for k in ("topic", "brokerName", "queueId")})
                if mq is None:
                    raise BodyError(f"list entry is not a MessageQueue: {item!r}")
                out[mq] = item.get(value_key)
            else:
                raise BodyError(f"unexpected MessageQueue map entry: {item!r}")
        return out
    raise BodyError(f"expected a MessageQueue map, found {type(value).__name__}")


# ---------------------------------------------------------------------------------------------
# Writers


def _plain(value: Any) -> Any:
    """Convert to JSON-compatible values for the standard writer."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, FrozenKey):
                k = json.dumps(k.to_plain(), sort_keys=True, separators=(",", ":"))
            elif not isinstance(k, str):
                # a queue key: standard JSON cannot key by object, MessageQueue.toString() does
                k = str(k)
            out[k] = _plain(v)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_plain(v) for v in value]
        if isinstance(value, (set, frozenset)):
            try:
                items.sort(key=lambda x: json.dumps(x, sort_keys=True))
            except TypeError:
                pass
        return items
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "to_dict"):
        return _plain(value.to_dict())
    return value


def to_plain(value: Any) -> Any:
    """JSON-compatible copy: queue keys become their Java ``toString()``."""
    return _plain(value)


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Standard JSON (what mqctl sends as request bodies; brokers' fastjson parses it)."""
    return json.dumps(_plain(value), ensure_ascii=False, indent=indent,
                      separators=(",", ":") if indent is None else None)


def _java_double(v: float) -> str:
    if not math.isfinite(v):
        return "null"
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        if "." not in mant:
            mant += ".0"
        return f"{mant}E{int(exp)}"
    return r


_quote = json.encoder.encode_basestring  # C-accelerated, keeps non-ASCII raw as fastjson does


def dumps_fastjson(value: Any, *, sort_keys: bool = True) -> str:
    """Write a body the way a RocketMQ broker's fastjson does.

    Bean-like dicts have their string keys sorted (fastjson's ``SortField``), integer keys are
    bare, queue keys are objects, nulls inside objects are omitted.
    """
    out: list[str] = []
    _fj(value, out, sort_keys)
    return "".join(out)


def _fj(value: Any, out: list[str], sort_keys: bool) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(_java_double(value))
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, dict):
        out.append("{")
        items = [(k, v) for k, v in value.items() if v is not None]
        if sort_keys and items:
            # strings: fastjson SortField; ints: HashMap order of small ints; queues: sorted for
            # determinism (HashMap order is unspecified in Java), by their own sort_key()
            for kind in (str, int):
                if all(isinstance(k, kind) and not isinstance(k, bool) for k, _ in items):
                    items.sort(key=lambda kv: kv[0])
                    break
            else:
                if all(_is_queue(k) for k, _ in items):
                    items.sort(key=lambda kv: kv[0].sort_key())
        first = True
        for k, v in items:
            if not first:
                out.append(",")
            first = False
            if isinstance(k, str):
                out.append(_quote(k))
            elif isinstance(k, bool):
                out.append(json.dumps(str(k).lower()))
            elif isinstance(k, int):
                out.append(str(k))
            elif _is_queue(k):
                _fj(k.to_dict(), out, True)
            elif isinstance(k, FrozenKey):
                _fj(k.to_plain(), out, True)
            else:
                out.append(json.dumps(str(k), ensure_ascii=False))
            out.append(":")
            _fj(v, out, sort_keys)
        out.append("}")
    elif isinstance(value, (list, tuple, set, frozenset)):
        out.append("[")
        for idx, v in enumerate(value):
            if idx:
                out.append(",")
            _fj(v, out, sort_keys)
        out.append("]")
    elif hasattr(value, "to_dict"):
        _fj(value.to_dict(), out, sort_keys)
    else:
        out.append(json.dumps(str(value), ensure_ascii=False))
