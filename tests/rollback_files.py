"""A rollback file as ``offsets reset --execute`` writes it, for the tests that list, complete
or restore saved rollbacks."""

from __future__ import annotations

import json
from pathlib import Path

from mqctl.reset.files import ROLLBACK_SCHEMA


def write(path: Path, ts: int | None, *, reason="shift by -10", group="G", topic="T",
          offsets=(100, 200), reset_to=(90, 190), **extra):
    doc = {"schema": ROLLBACK_SCHEMA, "group": group, "topic": topic, "namesrv": "ns:9876",
           "reason": reason, **extra,
           "queues": [{"broker": "b", "queue_id": i, "offset": o, "reset_to": r}
                      for i, (o, r) in enumerate(zip(offsets, reset_to, strict=True))]}
    if ts is not None:
        doc["created_ts"] = ts
    path.write_text(json.dumps(doc))
    return path
