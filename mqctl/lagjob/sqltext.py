"""Spark SQL text from Python values, for expressions written as SQL (``F.expr``,
``selectExpr``): one Py4J call per expression instead of one per Column object, and the same
expression tree once Spark has parsed it (docs/lag-performance.md, "Eighteenth pass")."""

from __future__ import annotations

import re

# the two characters whose meaning in a quoted literal depends on the parser's settings
_ESCAPED = re.compile(r"([\\'])")


def sql_text(v: str) -> str:
    """``v`` as a Spark SQL string expression, the same whatever the session's
    ``spark.sql.parser.escapedStringLiterals``: a backslash or a quote is never written
    inside a quoted literal (which that setting reads either as an escape or as itself;
    SQLConf ``ESCAPED_STRING_LITERALS``, ``ParserUtils.unescapeSQLString``) but as
    ``char(92)`` / ``char(39)`` between literals, ``concat``-ed (a constant: Spark folds it,
    and a constant pattern of ``RLIKE`` is compiled once). Any other character, a control
    character included, stands for itself in a quoted literal."""
    if "\\" not in v and "'" not in v:
        return "'" + v + "'"
    parts = [f"char({ord(p)})" if p in ("\\", "'") else "'" + p + "'"
             for p in _ESCAPED.split(v) if p]
    return "concat(" + ", ".join(parts) + ")"


def ident(name: str) -> str:
    """A column or field name as a quoted identifier (a backtick doubled)."""
    return "`" + name.replace("`", "``") + "`"
