"""Reset guards: limits on how many messages an ``--execute`` may replay or
skip, and when a terminal asks before a large change. Pure: the CLI reads the answer.

* ``--max-replay N`` / ``--max-skip N`` (profile keys ``max_replay`` / ``max_skip``): an
  ``--execute`` whose plan would replay (move back) or skip (move forward) more than N messages
  in total is refused (exit 6), with the numbers. Without ``--execute`` the plan says so.
* A queue the group has no committed offset on has no known change (where its consumers would
  start depends on their consumeFromWhere): it is never counted as 0. Under a guard it counts
  with the most it could be, ``max - target`` replayed or ``target - min`` skipped (a consumer
  position is always within ``[min, max]``), so a guard passes only when even that fits.
* ``require_guards: true`` in a profile: ``--execute`` needs both limits (flag or profile);
  without them it is a usage error before any network I/O (exit 2).
* ``confirm_above`` (default :data:`DEFAULT_CONFIRM_ABOVE`): on a terminal (stdin and stderr),
  without ``--yes``, an ``--execute`` that moves more messages than this (replayed + skipped,
  counting the most for queues without an offset) asks first, showing the totals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqctl.config import DEFAULT_CONFIRM_ABOVE
from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.config import Settings
    from mqctl.reset.types import Plan


@dataclass(frozen=True, slots=True)
class Guards:
    max_replay: int | None = None
    max_skip: int | None = None
    require: bool = False
    confirm_above: int = DEFAULT_CONFIRM_ABOVE
    replay_source: str = ""  # "flag" or "profile prod max_replay"
    skip_source: str = ""

    @property
    def active(self) -> bool:
        return self.max_replay is not None or self.max_skip is not None

    def to_dict(self) -> dict[str, Any]:
        return {"max_replay": self.max_replay, "max_skip": self.max_skip,
                "require_guards": self.require, "confirm_above": self.confirm_above}


@dataclass(frozen=True, slots=True)
class Totals:
    """What a plan moves, over the queues whose target differs from the committed offset."""

    queues: int  # queues that change (known change, or no committed offset)
    replay: int  # counted: queues with a committed offset
    skip: int
    unknown: int  # queues without a committed offset: their change is not known
    replay_most: int  # replay + the most the unknown queues could replay (max - target)
    skip_most: int  # skip + the most they could skip (target - min)

    @property
    def moved_most(self) -> int:
        return self.replay_most + self.skip_most

    def describe(self) -> str:
        text = (f"{self.queues} queue(s): {self.replay} message(s) replayed, {self.skip} "
                "skipped")
        if self.unknown:
            text += (f"; {self.unknown} queue(s) without a committed offset: up to "
                     f"{self.replay_most - self.replay} more replayed or "
                     f"{self.skip_most - self.skip} more skipped")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"queues": self.queues, "replay": self.replay, "skip": self.skip,
                "unknown_queues": self.unknown, "replay_at_most": self.replay_most,
                "skip_at_most": self.skip_most}


def resolve_guards(settings: Settings, *, max_replay: int | None, max_skip: int | None,
                   execute: bool) -> Guards:
    """Flags over profile defaults. ``require_guards`` without both limits refuses an
    ``--execute`` here, before any network I/O."""
    prof = f"profile {settings.profile}" if settings.profile else "profile"
    for flag, v in (("--max-replay", max_replay), ("--max-skip", max_skip)):
        if v is not None and v < 0:
            raise UsageError(f"{flag} must be >= 0 (a number of messages), not {v}",
                             hint=f"e.g. {flag} 100000")
    g = Guards(
        max_replay=max_replay if max_replay is not None else settings.max_replay,
        max_skip=max_skip if max_skip is not None else settings.max_skip,
        require=settings.require_guards,
        confirm_above=(settings.confirm_above if settings.confirm_above is not None
                       else DEFAULT_CONFIRM_ABOVE),
        replay_source="flag" if max_replay is not None else f"{prof} max_replay",
        skip_source="flag" if max_skip is not None else f"{prof} max_skip")
    if execute and g.require and (g.max_replay is None or g.max_skip is None):
        missing = [f for f, v in (("--max-replay", g.max_replay), ("--max-skip", g.max_skip))
                   if v is None]
        raise UsageError(f"{prof} requires reset guards (require_guards: true): give "
                         f"{' and '.join(missing)} with --execute",
                         hint="e.g. --max-replay 100000 --max-skip 0 (the plan without "
                              "--execute shows what it replays and skips), or set max_replay "
                              "and max_skip in the profile")
    return g


def plan_totals(plan: Plan) -> Totals:
    """Pure: the messages the plan replays and skips; a queue without a committed offset is
    counted apart, with the most it could move."""
    queues = replay = skip = unknown = replay_most = skip_most = 0
    for q in plan.queues:
        if q.current is None:
            queues += 1
            unknown += 1
            replay_most += max(0, q.max_offset - q.target)
            skip_most += max(0, q.target - q.min_offset)
            continue
        if q.current == q.target:
            continue
        queues += 1
        replay += q.replay
        skip += q.skip
    return Totals(queues, replay, skip, unknown, replay + replay_most, skip + skip_most)


def check_guards(t: Totals, g: Guards) -> list[str]:
    """Pure: one message per limit the plan goes beyond (empty: within the guards)."""
    out: list[str] = []
    for what, limit, src, counted, most in (
            ("replay", g.max_replay, g.replay_source, t.replay, t.replay_most),
            ("skip", g.max_skip, g.skip_source, t.skip, t.skip_most)):
        if limit is None or most <= limit:
            continue
        if counted > limit:
            out.append(f"guard {'--max-' + what} {limit} ({src}): the plan would {what} "
                       f"{counted} message(s), more than {limit}"
                       + (f" (and up to {most - counted} more on {t.unknown} queue(s) without "
                          "a committed offset)" if most > counted else ""))
        else:
            out.append(f"guard {'--max-' + what} {limit} ({src}): the plan would {what} "
                       f"{counted} counted message(s), but {t.unknown} queue(s) have no "
                       f"committed offset, so it could {what} up to {most}, more than "
                       f"{limit} (where their consumers would start is not known, and an "
                       "unknown is never counted as 0)")
    return out


GUARD_HINT = ("nothing was changed; narrow the plan (--queues, a later --to-time, a smaller "
              "--shift-by) or, if this much is intended, give a larger --max-replay/--max-skip "
              "(--force does not override a guard)")


def needs_confirmation(t: Totals, g: Guards) -> bool:
    """Pure: a change large enough to ask about on a terminal."""
    return t.moved_most > g.confirm_above


def confirm_question(plan: Plan, t: Totals, g: Guards) -> str:
    what = "restore" if plan.target.kind == "rollback" else "reset"
    return (f"About to {what} {plan.group} / {plan.topic}: {t.describe()} (more than "
            f"confirm_above {g.confirm_above}). Proceed? [y/N] ")


def confirmed(answer: str | None) -> bool:
    return (answer or "").strip().lower() in ("y", "yes")
