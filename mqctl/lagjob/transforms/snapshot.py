"""Reading the canonical snapshot: its JSON records parsed and checked in Spark (no text
pass), and the bad records' line numbers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from mqctl.lagjob.parsers.common import (
    FUTURE_SLACK_MS,
    MIN_CAPTURE_MS,
    QUEUE_ID_MAX,
    SNAPSHOT_NON_NEGATIVE,
)
from mqctl.lagjob.sqltext import ident, sql_text

SNAPSHOT_OBS = ["observed_ts", "cluster", "group", "topic", "broker", "queue_id",
                "broker_offset", "min_offset", "consumer_offset", "pull_offset",
                "last_timestamp", "delay_ms", "owner", "owners", "members", "online", "orderly",
                "source_kind", "source", "committed", "owner_unknown", "members_unanswered",
                "consume_type", "message_model"]
# their types (an empty frame of observations)
SNAPSHOT_OBS_DDL = ("observed_ts long, cluster string, group string, topic string, "
                    "broker string, queue_id int, broker_offset long, min_offset long, "
                    "consumer_offset long, pull_offset long, last_timestamp long, "
                    "delay_ms long, owner string, owners array<string>, members int, "
                    "online boolean, orderly boolean, source_kind string, source string, "
                    "committed boolean, owner_unknown boolean, "
                    "members_unanswered array<string>, consume_type string, "
                    "message_model string")
SNAPSHOT_BAD = ["source", "source_kind", "block", "rid", "reason", "detail", "content",
                "observed_ts"]

# after a field's quoted name: the colon and its value's JSON token (a string with its quotes
# and escapes, a number, a literal, or the first character of an array or object)
_TOKEN = (r'\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null|\[|\{'
          r'|[^\s,}\]]+)')
_DIGITS = r"^-?[0-9]+$"
# the tokens each kind of field takes
_RIGHT_TOKEN = {"number": _DIGITS, "boolean": r"^(true|false)$", "array": r"^\[$"}
_EXPECTED = {"number": "a whole number", "boolean": "true or false", "array": "a list"}
_SHOWN_MAX = 60
# whitespace or a control character: never in a RocketMQ name (below)
_BAD_NAME_CHARS = r"[\s\p{Cc}\p{Cf}\p{Z}]"
_SCHEMA_RE = r"^mqctl\.snapshot/1(\.[0-9]+)?$"
# the reason of a bad row when ``check_snapshot_records(reasons=False)`` does not name it
FLAGGED = "bad line (its reason named when the file is read as text)"


def _shown(tok: str) -> str:
    """SQL text: a JSON token (SQL text ``tok``) as the detail shows it (at most 60
    characters; an array or object as ``[...]`` / ``{...}``)."""
    return (f"CASE WHEN {tok} = '[' THEN '[...]' WHEN {tok} = '{{' THEN '{{...}}' "
            f"WHEN length({tok}) > {_SHOWN_MAX} "
            f"THEN concat(substring({tok}, 1, {_SHOWN_MAX}), '...') ELSE {tok} END")


def _shown_text(c: str) -> str:
    """SQL text: a text value (SQL text ``c``) as a JSON string (quoted, a newline as
    ``\\n``), at most 60 characters."""
    return _shown("regexp_extract(to_json(named_struct('v', " + c + ")), "
                  + sql_text(r'^\{"v":(.*)\}$') + ", 1)")


def _first(checks: list[tuple[str, str]]) -> str:
    """SQL text: the text of the first check whose condition holds, else null."""
    return ("CASE " + " ".join(f"WHEN {cond} THEN {text}" for cond, text in checks)
            + " ELSE CAST(NULL AS STRING) END")


def parse_snapshot_records(lines: DataFrame, schema: object,
                           run_ms: int | None = None) -> DataFrame:
    """JSON Lines (``source, block, rid, mtime_ms, value``) -> one row per non-blank line with
    the observation columns (``SNAPSHOT_OBS``) and, for a bad line, ``reason``, ``detail``,
    ``content`` and its position (``block``, ``rid``). Parse once, split with
    :func:`split_snapshot_records`.

    A line is bad when it is not a JSON object, a field has the wrong type (``wrong type``,
    the field and its value named: ``broker_offset: "abc" (expected a whole number)``), the
    ``schema`` is not ``mqctl.snapshot/1``, a required field is missing or empty (``cluster``
    included: an empty one would be a series of its own), a name (cluster, group, topic,
    broker) holds whitespace or a control character (``bad name``; RocketMQ allows neither,
    TopicValidator), or a value is outside the plausible range of :mod:`mqctl.lagjob.parsers`
    (``value out of range``: a capture time before 2010 or more than a day after ``run_ms``, a
    number beyond 2^63-1, a queue id above 65535; ``negative value``: a negative queue id,
    offset or store time). The detail names the field and its value. Blank lines are skipped
    (not errors). Every row that passes keeps the kernel's arithmetic within a long (lag and
    time lag: :mod:`mqctl.lagjob.kernel`).
    """
    parsed = (lines.filter(F.trim(F.col("value")) != "")
              .withColumn("j", F.from_json(F.col("value"), schema,  # type: ignore[arg-type]
                                           {"mode": "PERMISSIVE",
                                            "columnNameOfCorruptRecord": "_corrupt"})))
    return check_snapshot_records(parsed, run_ms)


def check_snapshot_records(parsed: DataFrame, run_ms: int | None = None, *,
                           reasons: bool = True) -> DataFrame:
    """The checks and columns of :func:`parse_snapshot_records` over rows already parsed into
    the struct ``j`` (``schemas.SNAPSHOT_JSON``), with ``value`` (the line, or at least the
    corrupt record text when ``j._corrupt`` is set), ``source``, ``block`` and ``rid``.
    :func:`mqctl.lagjob.readers.read_snapshot_json` gives such rows straight from Spark's
    JSON reader (no text pass, no ``from_json``).

    ``reasons=False``: the same rows are bad, but a bad row's ``reason`` is :data:`FLAGGED`
    and its ``detail`` null. For the job's fast paths, which only ask which files have a bad
    line and read every such file again as text (with the reasons): the checks that name a
    wrong type or a number beyond its type look for the field's token in the text of a
    corrupt line, and a corrupt line is bad whatever they find, so that half of the checks'
    text (46 of 59 KB of SQL, analysed on every run) is left out."""
    c = _value_checks(run_ms)
    if not reasons:
        # bad exactly when a reason below is named: the wrong-type and too-big checks need a
        # corrupt line, and each check's text is non-null when its condition holds (a null
        # condition is not taken, in a CASE as in ``_first``)
        conds = [_CORRUPT, c.schema_bad, *c.missing_when, *c.bad_name_when,
                 *c.out_of_range_when, *c.negative_when]
        flagged = ("CASE " + " ".join(f"WHEN {w} THEN {sql_text(FLAGGED)}" for w in conds)
                   + " END")
        return _checked_columns(parsed.withColumns(
            {"_ts_bad": F.expr(c.ts_bad), "reason": F.expr(flagged)}), _jf, c.ts, c.never,
            "CAST(NULL AS STRING)")
    too_big, wrong_type = _corrupt_checks()
    # each check once, as a column of its own: the reason and the detail read the columns
    # (the expressions written into both made a plan twice the size, analysed on every run)
    checked = parsed.withColumns({name: F.expr(text) for name, text in (
        ("_too_big", too_big), ("_wrong_type", wrong_type), ("_missing", c.missing),
        ("_bad_name", c.bad_name), ("_out_of_range", c.out_of_range),
        ("_negative", c.negative), ("_ts_bad", c.ts_bad))})
    reason, detail = _reason_and_detail(c.schema_bad)
    tagged = checked.withColumn("reason", F.expr(reason))
    return _checked_columns(tagged, _jf, c.ts, c.never, detail)


# Written as SQL text (one ``F.expr`` per column, not a Column object per operator and
# literal: 1,550 Py4J calls for the demo's report, 0.6-0.8 s of building before Spark had
# planned anything). ``j.`f``` is the parsed field ``f``; ``value`` the line's text.
def _jf(c: str) -> str:
    return "j." + ident(c)


_CORRUPT = "(j IS NULL OR j._corrupt IS NOT NULL)"


def _token(c: str) -> str:
    """The field's value as written in the line (a JSON token; an array or object: its first
    character), "" when the line has no such field. Only read on corrupt lines."""
    return f"regexp_extract(value, {sql_text(chr(34) + c + chr(34) + _TOKEN)}, 1)"


@dataclass(frozen=True, slots=True)
class _ValueChecks:
    """The SQL text of the checks of a parsed line's values (each ``*_when`` the conditions,
    the others the text naming what is wrong, null when nothing is)."""

    ts: str
    ts_bad: str
    never: str
    out_of_range: str
    out_of_range_when: list[str]
    negative: str
    negative_when: list[str]
    missing: str
    missing_when: list[str]
    bad_name: str
    bad_name_when: list[str]
    schema_bad: str


def _value_checks(run_ms: int | None) -> _ValueChecks:
    """The checks of the parsed values: the capture time and queue id in range, the counts
    not negative, the required fields present, the names clean, the schema known."""
    from mqctl.lagjob.schemas import SNAPSHOT_NAMES, SNAPSHOT_REQUIRED

    jf = _jf
    hi = (run_ms if run_ms is not None else 0) + FUTURE_SLACK_MS
    ts = jf("capture_ts")
    ts_bad = (f"({ts} < {MIN_CAPTURE_MS} OR ({'true' if run_ms is not None else 'false'} "
              f"AND {ts} > {int(hi)}))")
    out_of_range_checks = [
        (ts_bad, f"concat('capture_ts=', CAST({ts} AS STRING), "
                 "': before 2010-01-01 or more than a day after the run')"),
        (f"{jf('queue_id')} > {QUEUE_ID_MAX}",
         f"concat('queue_id=', CAST({jf('queue_id')} AS STRING), ': above {QUEUE_ID_MAX}')")]
    negative_checks = [(f"{jf(c)} < 0", f"concat({sql_text(c + '=')}, "
                                        f"CAST({jf(c)} AS STRING), ': must be >= 0')")
                       for c in SNAPSHOT_NON_NEGATIVE]
    # a queue the group never committed (``committed: false``) may have no consumer offset
    # (snapshot 1.1 writes null there: "none", not the broker's 0 placeholder)
    never = f"({jf('committed')} <=> false)"
    # nor has a BROADCASTING group's (snapshot 1.2): its clients keep their offsets
    no_offset = f"({never} OR {jf('message_model')} <=> 'BROADCASTING')"

    def absent(c: str) -> str:
        blank = f"trim({jf(c)}) = ''" if c in SNAPSHOT_NAMES else "false"
        return f"({jf(c)} IS NULL OR {blank})"

    missing_when = [f"{absent(c)} AND {'NOT ' + no_offset if c == 'consumer_offset' else 'true'}"
                    for c in SNAPSHOT_REQUIRED]
    missing = "concat_ws(', ', " + ", ".join(
        f"CASE WHEN {w} THEN {sql_text(c)} END"
        for c, w in zip(SNAPSHOT_REQUIRED, missing_when, strict=True)) + ")"
    # whitespace or a control character (a newline splits a Prometheus line and a table row;
    # "G" and "G " would be two groups): never in a RocketMQ name (TopicValidator
    # .isTopicOrGroupIllegal allows ^[%|a-zA-Z0-9_-]+$ only)
    bad_name_when = [f"{jf(c)} RLIKE {sql_text(_BAD_NAME_CHARS)}" for c in SNAPSHOT_NAMES]
    bad_name = _first([
        (w, f"concat({sql_text(c + ': ')}, {_shown_text(jf(c))}, "
            "' (whitespace or a control character: never in a RocketMQ name)')")
        for c, w in zip(SNAPSHOT_NAMES, bad_name_when, strict=True)])
    schema_bad = f"{jf('schema')} IS NULL OR NOT ({jf('schema')} RLIKE {sql_text(_SCHEMA_RE)})"
    return _ValueChecks(
        ts=ts, ts_bad=ts_bad, never=never, out_of_range=_first(out_of_range_checks),
        out_of_range_when=[c for c, _ in out_of_range_checks],
        negative=_first(negative_checks), negative_when=[c for c, _ in negative_checks],
        missing=missing, missing_when=missing_when, bad_name=bad_name,
        bad_name_when=bad_name_when, schema_bad=schema_bad)


def _corrupt_checks() -> tuple[str, str]:
    """What made a corrupt line corrupt, by the field's token in its text: a number beyond
    its type, and a value of the wrong type (null when neither)."""
    from mqctl.lagjob.schemas import SNAPSHOT_NUMBERS, SNAPSHOT_TYPED

    # a number that did not fit its type (a long beyond 2^63-1, an int queue id) makes the
    # whole line unparsable; name it instead of a generic "wrong type"
    too_big = _first([
        (f"{_CORRUPT} AND {_token(c)} RLIKE {sql_text(_DIGITS)} "
         f"AND (j IS NULL OR {_jf(c)} IS NULL)",
         f"concat({sql_text(c + '=')}, {_token(c)}, "
         f"{sql_text(': beyond 2^63-1' if t == 'long' else ': not a queue id')})")
        for c, t in SNAPSHOT_NUMBERS])
    # a value of the wrong type (a string, a fraction or a boolean where a whole number goes,
    # ``"yes"`` for a boolean, a string for a list) makes the line corrupt too: named
    wrong_type = _first([
        (f"{_CORRUPT} AND {_token(c)} != '' AND {_token(c)} != 'null' "
         f"AND NOT ({_token(c)} RLIKE {sql_text(_RIGHT_TOKEN[kind])})",
         f"concat({sql_text(c + ': ')}, {_shown(_token(c))}, "
         f"{sql_text(f' (expected {_EXPECTED[kind]})')})")
        for c, kind in SNAPSHOT_TYPED])
    return too_big, wrong_type


def _reason_and_detail(schema_bad: str) -> tuple[str, str]:
    """The SQL text of a bad line's ``reason`` (the first check that fails, in this order)
    and ``detail``, over the check columns of :func:`check_snapshot_records`."""
    reason = (
        "CASE WHEN _too_big IS NOT NULL THEN 'value out of range' "
        "WHEN _wrong_type IS NOT NULL THEN 'wrong type' "
        f"WHEN {_CORRUPT} THEN 'malformed JSON' "
        f"WHEN {schema_bad} THEN 'unsupported schema' "
        "WHEN _missing != '' THEN 'missing field' "
        "WHEN _bad_name IS NOT NULL THEN 'bad name' "
        "WHEN _out_of_range IS NOT NULL THEN 'value out of range' "
        "WHEN _negative IS NOT NULL THEN 'negative value' END")
    detail = (
        "CASE WHEN _too_big IS NOT NULL THEN _too_big "
        "WHEN reason = 'wrong type' THEN _wrong_type "
        "WHEN reason = 'bad name' THEN _bad_name "
        "WHEN reason = 'malformed JSON' "
        "THEN 'not a JSON object, or a field has the wrong type' "
        "WHEN reason = 'unsupported schema' "
        f"THEN concat('schema=', coalesce({_jf('schema')}, '(none)')) "
        "WHEN reason = 'missing field' THEN _missing "
        "WHEN reason = 'value out of range' THEN _out_of_range "
        "ELSE _negative END")
    return reason, detail


def _checked_columns(tagged: DataFrame, jf: Callable[[str], str], ts: str, never: str,
                     detail: str) -> DataFrame:
    """The output of :func:`check_snapshot_records` from the rows with ``reason`` and
    ``_ts_bad`` (SQL text: ``jf`` a field of ``j``, ``ts`` the capture time, ``never`` the
    never-committed test, ``detail`` a bad row's detail)."""
    plain = ("group", "topic", "broker", "queue_id", "broker_offset", "min_offset")
    plain2 = ("pull_offset", "last_timestamp", "delay_ms", "owner", "owners")
    return tagged.selectExpr(
        # an implausible time must not date the quarantine row (its file's capture does)
        f"CASE WHEN _ts_bad THEN NULL ELSE {ts} END AS observed_ts",
        f"coalesce({jf('cluster')}, '') AS cluster",
        *[f"{jf(c)} AS {ident(c)}" for c in plain],
        # never committed: no consumer offset ("none"; a 1.0 row carries the broker's 0)
        f"CASE WHEN {never} THEN CAST(NULL AS BIGINT) ELSE {jf('consumer_offset')} END "
        "AS consumer_offset",
        *[f"{jf(c)} AS {ident(c)}" for c in plain2],
        f"CAST(CASE WHEN size({jf('members')}) >= 0 THEN size({jf('members')}) END AS INT) "
        "AS members",
        f"{jf('online')} AS online", f"{jf('orderly')} AS orderly",
        "'snapshot' AS source_kind", "source", f"{jf('committed')} AS committed",
        # a 1.0 row has no marker: the owner was read (false)
        f"coalesce({jf('owner_unknown')}, false) AS owner_unknown",
        *[f"{jf(c)} AS {ident(c)}" for c in ("members_unanswered", "consume_type",
                                             "message_model")],
        "CASE WHEN reason IS NOT NULL THEN block END AS block",
        "CASE WHEN reason IS NOT NULL THEN rid END AS rid", "reason",
        f"CASE WHEN reason IS NOT NULL THEN {detail} END AS detail",
        "CASE WHEN reason IS NOT NULL THEN substring(value, 1, 500) END AS content")


def split_snapshot_records(records: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines) of :func:`parse_snapshot_records`."""
    obs = records.filter(F.col("reason").isNull()).select(*SNAPSHOT_OBS)
    bad = records.filter(F.col("reason").isNotNull()).select(*SNAPSHOT_BAD)
    return obs, bad


def parse_snapshot_lines(lines: DataFrame, schema: object) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines) of snapshot JSON Lines (see :func:`parse_snapshot_records`)."""
    return split_snapshot_records(parse_snapshot_records(lines, schema))


def line_numbers(bad: DataFrame, lines: DataFrame) -> DataFrame:
    """Replace ``block, rid`` of bad lines by their 1-based line number in the file.

    ``lines`` is the full read (``source, block, rid``) with ``rid`` from
    ``monotonically_increasing_id()`` taken right after the scan: rows of one file split
    (``_metadata.file_block_start``) are consecutive ids, so line = lines in earlier splits of
    the file + position inside the split. Only per-split counts are aggregated.
    """
    stats = lines.groupBy("source", "block").agg(F.count(F.lit(1)).alias("n"),
                                                   F.min("rid").alias("rid0"))
    w = Window.partitionBy("source").orderBy("block").rowsBetween(Window.unboundedPreceding, -1)
    stats = stats.withColumn("base", F.coalesce(F.sum("n").over(w), F.lit(0)))
    out = (bad.join(stats, on=["source", "block"], how="left")
           .withColumn("line", (F.col("base") + F.col("rid") - F.col("rid0") + 1).cast("long")))
    return out.drop("block", "rid", "n", "rid0", "base")
