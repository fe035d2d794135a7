"""The one output path: rich tables, plain (tabulate), JSON, YAML and CSV.

Commands build a :class:`Result` (tables of rows, plus the structured ``data`` for JSON/YAML)
and hand it to :func:`emit`. Same columns in every format; data to stdout; notes to stdout
after the tables in the human formats (they are part of the answer), progress to stderr.
Broker-provided strings are never interpreted as Rich markup, and never reach a terminal raw:
every cell, title and note of the human formats goes through :func:`printable` (ESC and the
other C0/C1 controls, newlines, bidi overrides and isolates are shown escaped, ``\x1b``,
``\n``, ``\u202e``), and widths are counted on the escaped text; JSON, YAML and CSV keep
the exact value (docs/output.md "Cluster text on a terminal").

Width policy (``-o table`` on a terminal, :func:`fit_table`; docs/output.md "Table width"):
every column has a kind (:data:`KINDS`). Numbers, keys (queue identity) and states are never
cut; a table too wide for the terminal first wraps long headers of those columns onto two
lines, then leaves out the columns that carry a drop rank (``Column.drop``, 1 first: the
low-value ones, in an order each command declares), then shortens ids in the middle
(``10.0.3.31@…#demo08``) and wraps text; a footer names what was left out or shortened.
``-o wide`` shows every column whole. Machine output (``csv``) is ONE table: the result's
main table or the one ``--table NAME`` picks.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass, field
from typing import IO, Any

from mqctl.context import current

FORMATS = ("table", "wide", "plain", "json", "yaml", "csv")

# Column kinds. key: part of a row's identity (topic, broker, queue); state: what the row is
# in (lock state); number: a count, offset, lag or duration in numbers; id: a long identifier
# (client id, address) that may be shortened in the middle; text: prose or a list that may
# wrap; low: a low-value column (a local clock time, a flag), the first to be left out.
KINDS = ("key", "state", "number", "id", "text", "low")
NEVER_CUT = ("key", "state", "number")
ELLIPSIS = "\u2026"


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    header: str
    align: str = "left"  # left | right
    # The key CSV writes instead of ``key`` when the table cell is formatted for people (a
    # local clock time, "1m 5s"): CSV is for machines, so it gets ISO UTC times and seconds.
    raw: str | None = None
    # One of KINDS; None: number when right-aligned, else text.
    kind: str | None = None
    # > 0: the column may be left out when the table does not fit the terminal (``-o table``);
    # 1 goes first. 0: never left out. ``-o wide`` shows every column.
    drop: int = 0
    # Human formats: a number shown with its sign (+2, -1, +0); CSV keeps the plain int.
    signed: bool = False
    # Human formats: how an unknown (None) value shows; None: "-" in a number column (what
    # mqctl cannot know, docs/output.md), empty in a text column. CSV leaves it empty.
    unknown: str | None = None

    def __post_init__(self) -> None:
        # a header may be cluster text (group config's columns are broker names): escaped once
        # here, so the widths, the wrapping and every format see the escaped one
        object.__setattr__(self, "header", printable(self.header))

    @property
    def role(self) -> str:
        if self.kind is not None:
            return self.kind
        return "number" if self.align == "right" else "text"

    @property
    def csv_key(self) -> str:
        return self.raw or self.key

    def display(self, row: dict[str, Any]) -> str:
        """The cell as people read it (table, wide, plain): escaped (:func:`printable`)."""
        v = row.get(self.key)
        if v is None:
            if self.unknown is not None:
                return self.unknown
            return "-" if self.role == "number" else ""
        if self.signed and isinstance(v, int) and not isinstance(v, bool):
            return f"{v:+d}"
        return printable(cell(v))


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
    # Only for machine output and --table (e.g. a decoded frame's fields with its body as
    # rows); the human formats show the same data in other tables and notes.
    machine_only: bool = False


@dataclass
class Result:
    tables: list[Table] = field(default_factory=list)
    data: Any = None  # structured form for json/yaml; defaults to the rows
    notes: list[str] = field(default_factory=list)
    # The table `-o csv` prints (by name); default: the first table.
    main: str | None = None

    def structured(self) -> dict[str, Any]:
        """The JSON/YAML document: always an object (docs/output.md "Machine output: one
        shape"). ``data`` when the command gives one (an object as it is; a list of rows under
        the main table's name), else each table's rows under its name (what ``--table`` takes),
        in order."""
        if isinstance(self.data, dict):
            return self.data
        if self.data is not None:
            return {table_name(main_table(self)[0], 0) if self.tables else "rows": self.data}
        return {table_name(t, i): t.rows for i, t in enumerate(self.tables)}


def default_format(stream: IO[str] | None = None) -> str:
    stream = stream or current().out
    if os.environ.get("NO_COLOR") is not None:
        return "plain"
    try:
        return "table" if stream.isatty() else "plain"
    except (AttributeError, ValueError):
        return "plain"


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str, *, backslash: bool = False) -> str:
    """``text`` as one line that cannot drive a terminal: every character that is not
    printable (``str.isprintable``: the C0 and C1 controls, ESC of ANSI and OSC sequences
    included, DEL, line and paragraph separators, and the format characters, among them the
    bidi overrides and isolates U+202A..U+202E, U+2066..U+2069) is written as an escape:
    ``\\n``/``\\r``/``\\t``, ``\\xNN``, ``\\uNNNN``, ``\\UNNNNNNNN``; a byte that was not UTF-8
    (a surrogate escape) as ``\\xNN``. ``backslash``: a backslash is doubled too, so that the
    text reads back unambiguously (message bodies, :func:`mqctl.views.message.printable`).

    The one escaping of mqctl: table, plain and note lines (:func:`emit`), warnings, hints and
    error messages (the CLI's boundary) all use it; JSON, YAML and CSV keep the raw value."""
    if text.isprintable() and not (backslash and "\\" in text):
        return text
    out: list[str] = []
    for ch in text:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\" if backslash else ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= o <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif o < 0x100:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return "".join(out)


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


def to_json(data: Any, *, ascii_only: bool = False, compact: bool = False) -> str:
    """``compact``: one line (JSON Lines), no spaces after separators."""
    if compact:
        return json.dumps(_clean(data), separators=(",", ":"), ensure_ascii=ascii_only,
                          default=_json_default)
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


def table_name(t: Table, i: int) -> str:
    """The name ``--table`` selects a table by: its JSON name, else its title, else tableN."""
    return t.name or t.title or f"table{i + 1}"


def _names(tables: list[Table]) -> list[str]:
    out: list[str] = []
    for i, t in enumerate(tables):
        n = table_name(t, i)
        if n not in out:
            out.append(n)
    return out


def main_table(result: Result) -> list[Table]:
    """The main table (``Result.main``, else the first) as a one-table list; [] if none."""
    if not result.tables:
        return []
    if result.main is not None:
        named = [t for i, t in enumerate(result.tables) if table_name(t, i) == result.main]
        if named:
            return _merged(named)
    return [result.tables[0]]


def _merged(tables: list[Table]) -> list[Table]:
    """Tables of one name with the same columns (one per frame, say) are one table."""
    first = tables[0]
    if all([c.csv_key for c in t.columns] == [c.csv_key for c in first.columns]
           for t in tables[1:]):
        rows = [r for t in tables for r in t.rows]
        return [Table(first.columns, rows, title=first.title, name=first.name,
                      machine_only=first.machine_only)]
    return tables[:1]


def select_tables(result: Result, name: str | None, fmt: str) -> list[Table]:
    """The tables a format prints: CSV one (the main one or ``name``); the human formats
    every table people read, or only ``name``."""
    if name is not None:
        picked = [t for i, t in enumerate(result.tables) if table_name(t, i) == name]
        if not picked:
            from mqctl.errors import UsageError

            names = _names(result.tables)
            main = table_name(main_table(result)[0], 0) if names else None
            import shlex

            choices = ", ".join(shlex.quote(n) + (" (default)" if n == main else "")
                                for n in names)
            raise UsageError(f"--table {name!r}: this command prints no table of that name",
                             hint=(f"choose one of: {choices}" if names
                                   else "this command prints no table"))
        return _merged(picked)
    if fmt == "csv":
        return main_table(result)
    return [t for t in result.tables if not t.machine_only]


def _csv_cell(v: Any) -> str:
    if isinstance(v, float) and math.isfinite(v) and not v.is_integer():
        return repr(v)  # every digit: CSV is for machines
    return cell(v)


def render_csv(tables: list[Table]) -> str:
    """One table: one header row, then one row per record (several tables would be several
    headers in one stream, which no CSV reader loads: pick one with :func:`select_tables`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for i, t in enumerate(tables):
        if i:
            buf.write("\n")
        keys = [c.csv_key for c in t.columns]
        w.writerow(keys)
        for r in t.rows:
            w.writerow([_csv_cell(r.get(k)) for k in keys])
    return buf.getvalue()


def render_plain(tables: list[Table], notes: list[str]) -> str:
    from tabulate import tabulate

    parts = []
    for t in tables:
        if t.title:
            parts.append(f"# {printable(t.title)}")
        if t.rows:
            parts.append(tabulate([[c.display(r) for c in t.columns] for r in t.rows],
                                  headers=[c.header for c in t.columns], tablefmt="plain",
                                  disable_numparse=True,
                                  colalign=[("right" if c.align == "right" else "left")
                                            for c in t.columns]))
        else:
            parts.append("(none)")
        parts.append("")
    parts.extend(printable(n) for n in notes)
    return "\n".join(parts).rstrip("\n") + "\n"


# ------------------------------------------------------------------------- width policy

GAP = 2  # what separates two columns: Rich's padding (0, 1) with pad_edge=False
ID_MIN = 14  # an id is never shortened below this (``10.0.3.31@…`` still names the host)
TEXT_MIN = 20  # nor is wrapping text narrowed below this


@dataclass
class Fitted:
    """A table laid out for a width: what is shown, how wide, what was left out."""

    columns: list[Column]
    widths: list[int]
    headers: list[str]  # may hold "\n" (a header wrapped onto two lines)
    cells: list[list[str]]
    dropped: list[Column]
    shortened: list[Column]

    @property
    def total(self) -> int:
        return sum(self.widths) + GAP * max(len(self.widths) - 1, 0)


def _clen(s: str) -> int:
    """Terminal cells the widest line of ``s`` takes (a CJK character takes two)."""
    if "\n" not in s and s.isascii():
        return len(s)
    from rich.cells import cell_len

    return max((cell_len(line) for line in s.split("\n")), default=0)


def _wrap_header(header: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(header, width, break_long_words=False)) or header


def _two_line_width(header: str, floor: int) -> int:
    """The narrowest width >= floor at which the header takes at most two lines."""
    w = max(floor, max((len(x) for x in header.split()), default=0))
    while w < len(header) and _wrap_header(header, w).count("\n") > 1:
        w += 1
    return max(floor, min(w, len(header)))


def shorten_middle(text: str, width: int) -> str:
    """``10.0.3.31@4301#demo08`` -> ``10.0.3.31@…#demo08``: a client id keeps its host and
    its instance name; anything else keeps its start and its end."""
    if _clen(text) <= width or width < 3:
        return text
    at = text.find("@")
    hash_ = text.rfind("#")
    if 0 < at < hash_ and "," not in text:
        head, tail = text[:at + 1], text[hash_:]
        if len(head) + 1 + len(tail) <= width:
            return head + ELLIPSIS + tail
    keep = width - 1
    h = (keep + 1) // 2
    return text[:h] + ELLIPSIS + text[len(text) - (keep - h):]


def fit_table(t: Table, width: int | None) -> Fitted:
    """Lay ``t`` out in ``width`` terminal columns (None: every column whole, ``-o wide``).

    Order, until the table fits: (1) wrap the header of a never-cut column (number, key,
    state) onto two lines where it is wider than its values, widest saving first; (2) leave
    out the columns with a drop rank, lowest rank first (each time starting again from whole
    headers, so a header wraps only when it must); (3) shorten ids in the middle and wrap text,
    down to ID_MIN / TEXT_MIN. Numbers, keys and states are never cut: a table that still does
    not fit is printed wider than the terminal (which wraps the lines) rather than hide them.
    """
    cols = list(t.columns)
    texts = {c.key + "\0" + c.header: [c.display(r) for r in t.rows] for c in cols}

    def k(c: Column) -> str:
        return c.key + "\0" + c.header

    vw = {key: max((_clen(x) for x in vals), default=0) for key, vals in texts.items()}

    def natural(c: Column) -> int:
        return max(_clen(c.header), vw[k(c)])

    def values_width(c: Column) -> int:
        return vw[k(c)]

    def layout(shown: list[Column], limit: int | None) -> tuple[list[int], list[str], bool]:
        widths = [natural(c) for c in shown]
        headers = [c.header for c in shown]

        def total() -> int:
            return sum(widths) + GAP * max(len(widths) - 1, 0)

        if limit is None or total() <= limit:
            return widths, headers, True
        savings = []
        for i, c in enumerate(shown):
            if c.role in NEVER_CUT:
                w2 = _two_line_width(c.header, values_width(c))
                if w2 < widths[i]:
                    savings.append((widths[i] - w2, i, w2))
        for _, i, w2 in sorted(savings, reverse=True):
            widths[i] = w2
            headers[i] = _wrap_header(shown[i].header, w2)
            if total() <= limit:
                return widths, headers, True
        return widths, headers, False

    # a low-value column with no rank of its own goes after the ranked ones
    droppable = sorted((c for c in cols if c.drop > 0 or c.role == "low"),
                       key=lambda c: c.drop or 99)
    dropped: list[Column] = []
    shown = cols
    widths, headers, ok = layout(shown, width)
    while not ok and droppable:
        dropped.append(droppable.pop(0))
        shown = [c for c in cols if c not in dropped]
        widths, headers, ok = layout(shown, width)
    shortened: list[Column] = []
    if not ok and width is not None:
        over = sum(widths) + GAP * max(len(widths) - 1, 0) - width
        floors = [max(min(natural(c), ID_MIN if c.role == "id" else TEXT_MIN),
                      max((len(x) for x in c.header.split()), default=0))
                  if c.role in ("id", "text", "low") else widths[i]
                  for i, c in enumerate(shown)]
        while over > 0:
            slack = [(widths[i] - floors[i], i) for i in range(len(shown))
                     if widths[i] > floors[i]]
            if not slack:
                break
            _, i = max(slack)
            widths[i] -= 1
            over -= 1
        for i, c in enumerate(shown):
            if widths[i] < natural(c):
                headers[i] = _wrap_header(c.header, widths[i])
                if c.role == "id" and any(_clen(x) > widths[i] for x in texts[k(c)]):
                    shortened.append(c)
    cells = []
    for ri in range(len(t.rows)):
        row = []
        for i, c in enumerate(shown):
            v = texts[k(c)][ri]
            row.append(shorten_middle(v, widths[i]) if c in shortened else v)
        cells.append(row)
    return Fitted(shown, widths, headers, cells, dropped, shortened)


def fit_footer(f: Fitted, width: int) -> str | None:
    """The line under a table that did not fit whole, or None."""
    parts = []
    if f.dropped:
        parts.append(f"columns not shown at {width} cols: "
                     + ", ".join(c.header for c in f.dropped))
    if f.shortened:
        parts.append(f"shortened ({ELLIPSIS}): " + ", ".join(c.header for c in f.shortened))
    if not parts:
        return None
    return "; ".join(parts) + "; -o wide shows them"


def render_rich(tables: list[Table], notes: list[str], stream: IO[str], *,
                wide: bool = False) -> None:
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
    term, height = console.size

    def text(s: str) -> Text:
        return Text(_fit(s, stream))

    def safe(s: str) -> Text:  # cluster text (a title, a note): escaped first
        return text(printable(s))

    for t in tables:
        if not t.rows:
            console.print(safe((f"{t.title}: " if t.title else "") + "(none)"))
            console.print()
            continue
        f = fit_table(t, None if wide else term)
        rt = RichTable(title=safe(t.title) if t.title else None, title_justify="left",
                       show_edge=False, box=None, header_style="bold", pad_edge=False)
        for c, w, h in zip(f.columns, f.widths, f.headers, strict=True):
            prose = c.role in ("text", "low")
            rt.add_column(text(h), justify="right" if c.align == "right" else "left",
                          no_wrap=not prose, overflow="fold", width=w, min_width=w)
        for row in f.cells:
            rt.add_row(*[text(x) for x in row])
        # never narrower than the layout: Rich must not cut what fit_table kept whole (print's
        # own width= cannot exceed the console's)
        # own width= cannot exceed the console's; size, not width: a TERM=dumb console
        # ignores a width set alone)
        console.size = (max(term, f.total), height)
        console.print(rt)
        console.size = (term, height)
        footer = fit_footer(f, term)
        if footer:
            console.print(text(footer))
        console.print()
    for n in notes:
        console.print(safe(n))


def emit(result: Result, fmt: str | None = None, stream: IO[str] | None = None, *,
         table: str | None = None, quiet: bool = False) -> None:
    """Write ``result`` in ``fmt``. ``table``: only that table (``--table NAME``; JSON/YAML
    then hold its rows); ``quiet`` (``-q``): nothing at all, only errors reach the user. The
    table name is checked even when quiet, so a typo fails the same way with and without -q.
    ``stream``: None writes to the run's context's stdout (:func:`mqctl.context.current`)."""
    stream = stream or current().out
    fmt = fmt or default_format(stream)
    if fmt not in FORMATS:
        from mqctl.errors import UsageError

        raise UsageError(f"unknown output format {fmt!r}",
                         hint=f"choose one of {', '.join(FORMATS)}")
    tables = select_tables(result, table, fmt)
    if quiet:
        return
    # JSON and YAML stay exact on a stream that cannot encode the data: \uXXXX escapes
    if fmt in ("json", "yaml"):
        data = {table: tables[0].rows} if table is not None else result.structured()
        dump = to_json if fmt == "json" else to_yaml
        text = dump(data) + ("\n" if fmt == "json" else "")
        stream.write(text if _encodable(text, stream)
                     else dump(data, ascii_only=True) + ("\n" if fmt == "json" else ""))
    elif fmt == "csv":
        stream.write(_fit(render_csv(tables), stream))
    elif fmt == "plain":
        stream.write(_fit(render_plain(tables, result.notes), stream))
    else:
        render_rich(tables, result.notes, stream, wide=fmt == "wide")
    stream.flush()
