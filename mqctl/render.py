"""The one output path: rich tables, plain (tabulate), JSON, YAML and CSV.

Commands build a :class:`Result` (tables of rows, plus the structured ``data`` for JSON/YAML)
and hand it to :func:`emit`. Same columns in every format; data to stdout; notes to stdout
after the tables in the human formats (they are part of the answer), progress to stderr.
Broker-provided strings are never interpreted as Rich markup.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any

FORMATS = ("table", "plain", "json", "yaml", "csv")


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    header: str
    align: str = "left"  # left | right
    # The key CSV writes instead of ``key`` when the table cell is formatted for people (a
    # local clock time, "1m 5s"): CSV is for machines, so it gets ISO UTC times and seconds.
    raw: str | None = None


def cols(*spec: str | tuple[str, str] | Column) -> list[Column]:
    """``cols("topic", ("broker_name", "BROKER"), ...)``; numbers right-aligned by name hint."""
    out = []
    for s in spec:
        if isinstance(s, Column):
            out.append(s)
        elif isinstance(s, tuple):
            out.append(Column(s[0], s[1]))
        else:
            out.append(Column(s, s.upper().replace("_", " ")))
    return out


@dataclass
class Table:
    columns: list[Column]
    rows: list[dict[str, Any]]
    title: str | None = None
    name: str | None = None  # key under which the rows appear in JSON when there are several


@dataclass
class Result:
    tables: list[Table] = field(default_factory=list)
    data: Any = None  # structured form for json/yaml; defaults to the rows
    notes: list[str] = field(default_factory=list)

    def structured(self) -> Any:
        if self.data is not None:
            return self.data
        if len(self.tables) == 1:
            return self.tables[0].rows
        return {(t.name or t.title or f"table{i}"): t.rows for i, t in enumerate(self.tables)}


def default_format(stream: IO[str] | None = None) -> str:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") is not None:
        return "plain"
    try:
        return "table" if stream.isatty() else "plain"
    except (AttributeError, ValueError):
        return "plain"


def cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.2f}" if abs(v) >= 0.01 else f"{v:.4g}"
    if isinstance(v, (list, tuple, set, frozenset)):
        return ", ".join(cell(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={cell(x)}" for k, x in v.items())
    return str(v)


def _json_default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if isinstance(o, (set, frozenset)):
        return sorted(o, key=str)
    if isinstance(o, bytes):
        return o.decode("utf-8", "replace")
    return str(o)


def _clean(o: Any) -> Any:
    """JSON-safe structure: NaN/inf -> null, non-string keys -> strings, objects -> dicts."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {(k if isinstance(k, str) else str(k)): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, (set, frozenset)):
        return [_clean(v) for v in sorted(o, key=str)]
    if hasattr(o, "to_dict") and not isinstance(o, type):
        return _clean(o.to_dict())
    return o


def to_json(data: Any, *, ascii_only: bool = False) -> str:
    return json.dumps(_clean(data), indent=2, ensure_ascii=ascii_only, default=_json_default)


def to_yaml(data: Any, *, ascii_only: bool = False) -> str:
    import yaml

    return str(yaml.safe_dump(_clean(json.loads(to_json(data))), sort_keys=False,
                              allow_unicode=not ascii_only, default_flow_style=False))


def _encodable(text: str, stream: IO[str]) -> bool:
    """Whether the stream's encoding holds every character (PYTHONIOENCODING=ascii, a C locale
    or a latin-1 terminal do not hold a Chinese topic name)."""
    enc = getattr(stream, "encoding", None)
    if not enc or text.isascii():
        return True
    try:
        text.encode(enc)
    except UnicodeEncodeError:
        return False
    except LookupError:
        return True
    return True


def _fit(text: str, stream: IO[str]) -> str:
    """Text the stream can take: characters its encoding lacks become '?' (never a crash)."""
    if _encodable(text, stream):
        return text
    enc = getattr(stream, "encoding", None) or "ascii"
    return text.encode(enc, "replace").decode(enc)


def render_csv(tables: list[Table]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for i, t in enumerate(tables):
        if i:
            buf.write("\n")
        keys = [c.raw or c.key for c in t.columns]
        w.writerow(keys)
        for r in t.rows:
            w.writerow([cell(r.get(k)) for k in keys])
    return buf.getvalue()


def render_plain(tables: list[Table], notes: list[str]) -> str:
    from tabulate import tabulate

    parts = []
    for t in tables:
        if t.title:
            parts.append(f"# {t.title}")
        if t.rows:
            parts.append(tabulate([[cell(r.get(c.key)) for c in t.columns] for r in t.rows],
                                  headers=[c.header for c in t.columns], tablefmt="plain",
                                  disable_numparse=True,
                                  colalign=[("right" if c.align == "right" else "left")
                                            for c in t.columns]))
        else:
            parts.append("(none)")
        parts.append("")
    parts.extend(notes)
    return "\n".join(parts).rstrip("\n") + "\n"


def render_rich(tables: list[Table], notes: list[str], stream: IO[str]) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable
    from rich.text import Text

    tty = False
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        pass
    console = Console(file=stream, highlight=False, markup=False, emoji=False,
                      width=None if tty else 240, no_color=os.environ.get("NO_COLOR") is not None)
    def text(s: str) -> Text:
        return Text(_fit(s, stream))

    for t in tables:
        rt = RichTable(title=text(t.title) if t.title else None, title_justify="left",
                       show_edge=False, box=None, header_style="bold", pad_edge=False)
        for c in t.columns:
            rt.add_column(text(c.header), justify="right" if c.align == "right" else "left",
                          no_wrap=True)
        for r in t.rows:
            rt.add_row(*[text(cell(r.get(c.key))) for c in t.columns])
        if not t.rows:
            console.print(text((f"{t.title}: " if t.title else "") + "(none)"))
        else:
            console.print(rt)
        console.print()
    for n in notes:
        console.print(text(n))


def emit(result: Result, fmt: str | None = None, stream: IO[str] | None = None) -> None:
    stream = stream or sys.stdout
    fmt = fmt or default_format(stream)
    # JSON and YAML stay exact on a stream that cannot encode the data: \uXXXX escapes
    if fmt == "json":
        text = to_json(result.structured()) + "\n"
        stream.write(text if _encodable(text, stream)
                     else to_json(result.structured(), ascii_only=True) + "\n")
    elif fmt == "yaml":
        text = to_yaml(result.structured())
        stream.write(text if _encodable(text, stream)
                     else to_yaml(result.structured(), ascii_only=True))
    elif fmt == "csv":
        stream.write(_fit(render_csv(result.tables), stream))
    elif fmt == "plain":
        stream.write(_fit(render_plain(result.tables, result.notes), stream))
    elif fmt == "table":
        render_rich(result.tables, result.notes, stream)
    else:
        from mqctl.errors import UsageError

        raise UsageError(f"unknown output format {fmt!r}",
                         hint=f"choose one of {', '.join(FORMATS)}")
    stream.flush()
