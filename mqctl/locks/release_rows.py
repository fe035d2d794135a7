"""The output of ``mqctl locks release`` (pure): the plan as it is printed before the releases
are sent, and the outcome (:class:`mqctl.locks.release.ReleaseOutcome`) as the command prints
it, through the rows of :func:`mqctl.locks.rows.release_result`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.locks.rows import release_result

if TYPE_CHECKING:
    from mqctl.locks.release import ReleaseOutcome, ReleaseRun
    from mqctl.render import Result


def ready_result(run: ReleaseRun) -> Result:
    """The plan as it is printed before the releases are sent (text formats)."""
    first = release_result(list(run.plans), run.before, None, False, extra_notes=list(run.notes))
    first.notes[:] = [n for n in first.notes if not n.startswith("dry run:")]
    first.notes.append(f"releasing {len(run.plans)} lock(s) now (Ctrl-C stops and says what "
                       "was released)")
    return first


def outcome_result(o: ReleaseOutcome, *, plan_shown: bool = False) -> Result:
    """As ``locks release`` prints it (``plan_shown``: the plan was printed at ``ready``:
    only what came after it), with what an interrupt left."""
    shown = plan_shown and o.ready
    extra = [] if shown else list(o.notes)
    if o.interruption is not None:
        extra += o.interruption.notes
    out = release_result(list(o.plans), o.before, o.after, o.execute or o.interruption is not None,
                         list(o.results) if o.results is not None else None,
                         extra_notes=extra, plan_shown=shown)
    if o.interruption is not None:
        out.data["interrupted"] = dict(o.interruption.data)
    return out
