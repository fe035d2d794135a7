"""Spark SQL text from Python values, for expressions written as SQL (``F.expr``,
``selectExpr``): one Py4J call per expression instead of one per Column object, and the same
expression tree once Spark has parsed it (docs/lag-performance.md, "Eighteenth pass")."""

from __future__ import annotations


def sql_text(v: str) -> str:
    """``v`` as a Spark SQL string literal: the backslash and the quote escaped (Spark's
    parser unescapes both, ``ParserUtils.unescapeSQLString``; any other character, a control
    character included, stands for itself in a quoted literal)."""
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ident(name: str) -> str:
    """A column or field name as a quoted identifier (a backtick doubled)."""
    return "`" + name.replace("`", "``") + "`"
