"""The snapshot checks' two forms: with the reasons (the text pass, whose bad lines reach the
quarantine) and without (the job's fast paths, which only ask which files have a bad line and
read each such file again as text). Both must flag the same lines, or a file with a bad line
would be ingested whole, or a good file read twice."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from .builders import T0, snap_row, write

# values put in place of a field: wrong types, numbers beyond a long or an int, negative and
# implausible numbers, names with whitespace, control and format characters, quotes and
# backslashes, other schemas, lists and objects where a scalar goes
VALUES = ['"abc"', "1.5", "true", "false", "[]", "[1,2]", "{}", '{"a":1}', "null",
          "9223372036854775808", "-1", "-9223372036854775809", "99999999999", "70000",
          '"' + "x" * 80 + '"', '"a b"', '"a\\u0001b"', '"o\'b\\\\r"', '""', '" "', "0",
          "1262303999999", "4102444800000", '"mqctl.snapshot/2"', '"mqctl.snapshot/1.3"',
          '"BROADCASTING"', '"CLUSTERING"', '"a\\nb"', '"\\u65e5\\u00a0"', '"\\u200b"',
          '["a","b"]', "12345678901234567890123"]
FIELDS = ["schema", "capture_ts", "cluster", "group", "topic", "broker", "queue_id",
          "broker_offset", "min_offset", "consumer_offset", "pull_offset", "last_timestamp",
          "delay_ms", "owner", "owners", "members", "online", "orderly", "committed",
          "owner_unknown", "message_model", "members_unanswered", "consume_type"]


def hostile_lines(n: int, seed: int) -> list[str]:
    """Good rows, each followed by mutants: one or two fields replaced by a value above, or
    removed; then lines that are not an object at all."""
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        good = snap_row(T0 + i * 1000, f"G{i % 3}", "T", i % 8, 1000 + i, 990, owner="a@1")
        good["committed"] = i % 5 != 0
        lines.append(json.dumps(good))
        for _ in range(12):
            fields = {k: json.dumps(v) for k, v in good.items()}
            for _ in range(1 + (rnd.random() < 0.3)):
                k = rnd.choice(FIELDS)
                if rnd.random() < 0.15:
                    fields.pop(k, None)
                else:
                    fields[k] = rnd.choice(VALUES)
            lines.append("{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in fields.items())
                         + "}")
    return lines + ["not json", "[1,2]", "{}", '{"schema":"mqctl.snapshot/1"}', "{", '"x"',
                    "null", '{"capture_ts": 1}']


@pytest.mark.spark
@pytest.mark.parametrize("run_ms", [None, T0 + 60_000])
def test_the_fast_paths_flag_exactly_the_lines_the_reasons_name(spark, tmp_path: Path,
                                                                 run_ms):
    from mqctl.lagjob import readers
    from mqctl.lagjob.transforms import snapshot as S

    lines = hostile_lines(160, seed=7)
    path = write(tmp_path / "in" / "mqctl-snapshot-c1-x.jsonl", "\n".join(lines) + "\n")
    rows = readers.read_snapshot_json(spark, [str(path)])
    named = S.check_snapshot_records(rows, run_ms).collect()
    flagged = S.check_snapshot_records(rows, run_ms, reasons=False).collect()

    def key(r) -> tuple:  # every column but the reason's words and the detail
        d = r.asDict(recursive=True)
        return tuple(repr(d[c]) for c in sorted(d) if c not in ("reason", "detail"))

    assert len(named) == len(flagged) >= len(lines) - 8
    by_key: dict[tuple, list[bool]] = {}
    for r in named:
        by_key.setdefault(key(r), []).append(r["reason"] is not None)
    for r in flagged:
        assert r["reason"] in (None, S.FLAGGED) and r["detail"] is None
        marks = by_key.get(key(r))
        assert marks, r
        marks.remove(r["reason"] is not None)  # the same row, flagged as the reasons say
    # the corpus reaches every reason the checks name (or the comparison proves little)
    reasons = {r["reason"] for r in named}
    assert {"malformed JSON", "wrong type", "value out of range", "unsupported schema",
            "missing field", "bad name", "negative value", None} <= reasons, reasons
    assert any("beyond 2^63-1" in (r["detail"] or "") for r in named)
    good = sum(r["reason"] is None for r in named)
    assert 160 <= good < len(lines) / 2, good
