"""Gold rules: how one item's annotations become its gold label, per task type.

Each task type names its default rule (``TaskType.gold_rule``, the table in DESIGN.md) and :func:`rule_for`
finds it; ``ALTERNATIVE_RULES`` lists what a project may choose instead through
``project.options["gold_rule"]``. Rules are pure functions of the item's annotation payloads, so the release
builder, the adjudication page and the tests share them. Dawid–Skene and MACE need every item at once and
are applied by :mod:`annotation.gold.services`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..task_types import MissingLayer, PayloadError, get_task_type

RESOLVED = "resolved"
NEEDS_ADJUDICATION = "needs_adjudication"
DISCARDED = "discarded"
INCOMPLETE = "incomplete"


@dataclass
class GoldDecision:
    payload: dict[str, Any] | None
    status: str
    rule: str
    detail: dict[str, Any] = field(default_factory=dict)


class GoldRule:
    """Base class. ``needed`` is how many annotations a complete item has (all stages with a label)."""

    name: ClassVar[str]
    #: Categorical rules can be swapped for Dawid–Skene or MACE.
    categorical: ClassVar[bool] = False

    def decide(self, payloads: list[dict[str, Any]], *, needed: int, settings: dict[str, Any]) -> GoldDecision:
        raise NotImplementedError

    def from_annotation(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The gold payload when a manager accepts one annotation as it is."""
        return dict(payload)


def _votes(entry: tuple[str, int]) -> int:
    return entry[1]


class MajorityRule(GoldRule):
    """The most frequent label if it has at least ``min_votes`` votes and no tie.

    ``min_votes`` comes from the project (``options.gold_min_votes`` or the schema's ``gold_min_votes``),
    else a strict majority of a complete item. When the rule cannot decide on a complete item the item is
    ``discarded`` (``on_failure``, NLI as in KLUE) or needs adjudication.
    """

    name = "majority"
    categorical = True

    def __init__(self, field: str = "label", on_failure: str = NEEDS_ADJUDICATION) -> None:
        self.field = field
        self.on_failure = on_failure

    def decide(self, payloads: list[dict[str, Any]], *, needed: int, settings: dict[str, Any]) -> GoldDecision:
        # Counted in a plain dict and ranked as Counter.most_common ranks (by votes, ties in first-seen order):
        # a release decides every item of the project, and two Counters per item cost more than the counting.
        field = self.field
        votes: dict[str, int] = {}
        for p in payloads:
            value = p.get(field)
            if value is not None:
                key = str(value)
                votes[key] = votes.get(key, 0) + 1
        everything = sorted(votes.items(), key=_votes, reverse=True) if len(votes) > 1 else list(votes.items())
        min_votes = int(settings.get("gold_min_votes") or needed // 2 + 1)
        detail = {"votes": dict(everything), "min_votes": min_votes, "annotations": len(payloads)}
        ranked = everything[:2]
        if ranked and ranked[0][1] >= min_votes and (len(ranked) == 1 or ranked[1][1] < ranked[0][1]):
            return GoldDecision({self.field: ranked[0][0]}, RESOLVED, self.name, detail)
        if len(payloads) < needed:
            return GoldDecision(None, INCOMPLETE, self.name, detail)
        on_failure = settings.get("gold_on_failure") or self.on_failure
        detail["reason"] = f"no label reached {min_votes} votes" if not ranked or ranked[0][1] < min_votes \
            else "tie between the top labels"
        return GoldDecision(None, on_failure, self.name, detail)

    def from_annotation(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {self.field: payload.get(self.field)}


class MeanRule(GoldRule):
    """KLUE-STS: the mean score (``real_label``), rounded to one decimal (``label``), binary at ≥ 3.0."""

    name = "mean"
    threshold = 3.0

    def decide(self, payloads: list[dict[str, Any]], *, needed: int, settings: dict[str, Any]) -> GoldDecision:
        scores = [float(p["score"]) for p in payloads if p.get("score") is not None]
        detail = {"scores": scores, "annotations": len(payloads)}
        if len(scores) < max(needed, 1):
            return GoldDecision(None, INCOMPLETE, self.name, detail)
        return GoldDecision(self.gold(sum(scores) / len(scores)), RESOLVED, self.name, detail)

    def gold(self, mean: float) -> dict[str, Any]:
        # round half up on one decimal, as KLUE's label (4.857 → 4.9, 3.25 → 3.3)
        label = math.floor(mean * 10 + 0.5 + 1e-9) / 10
        return {"score": mean, "real_label": mean, "label": label, "binary_label": int(mean >= self.threshold)}

    def from_annotation(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.gold(float(payload["score"]))


class SpanMajorityRule(GoldRule):
    """NER: keep each exact span (start, end, type) marked by more than half of the annotators; a span
    marked by exactly half is a tie that needs adjudication."""

    name = "span_majority"

    def decide(self, payloads: list[dict[str, Any]], *, needed: int, settings: dict[str, Any]) -> GoldDecision:
        n = len(payloads)
        votes = Counter((e["start"], e["end"], e["type"]) for p in payloads for e in p.get("entities") or [])
        detail = {"annotations": n, "spans": [[s, e, t, v] for (s, e, t), v in sorted(votes.items())]}
        if n < needed:
            return GoldDecision(None, INCOMPLETE, self.name, detail)
        ties = [span for span, v in votes.items() if 2 * v == n]
        if ties:
            detail["reason"] = f"{len(ties)} span(s) marked by exactly half of the annotators"
            return GoldDecision(None, NEEDS_ADJUDICATION, self.name, detail)
        kept = sorted(span for span, v in votes.items() if 2 * v > n)
        # Strict majorities cannot overlap: an annotator would have marked both, which validation forbids.
        return GoldDecision({"entities": [{"start": s, "end": e, "type": t} for s, e, t in kept]}, RESOLVED,
                            self.name, detail)


class ExactMajorityRule(GoldRule):
    """Structured answers (DP trees, DST states, MRC answers): the answer given identically by more than half
    of the annotators; anything else goes to adjudication (KLUE adjudicated these)."""

    name = "exact_majority"

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields

    def _key(self, payload: dict[str, Any]) -> str:
        return json.dumps([payload.get(f) for f in self.fields], ensure_ascii=False, sort_keys=True)

    def decide(self, payloads: list[dict[str, Any]], *, needed: int, settings: dict[str, Any]) -> GoldDecision:
        n = len(payloads)
        votes = Counter(self._key(p) for p in payloads)
        detail = {"annotations": n, "distinct_answers": len(votes)}
        if n < needed:
            return GoldDecision(None, INCOMPLETE, self.name, detail)
        key, count = votes.most_common(1)[0] if votes else ("", 0)
        detail["top_votes"] = count
        if 2 * count > n:
            winner = next(p for p in payloads if self._key(p) == key)
            return GoldDecision(self.from_annotation(winner), RESOLVED, self.name, detail)
        detail["reason"] = "no answer was given by more than half of the annotators"
        return GoldDecision(None, NEEDS_ADJUDICATION, self.name, detail)

    def from_annotation(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {f: payload.get(f) for f in self.fields}


DAWID_SKENE = "dawid_skene"
MACE = "mace"
#: Gold rules that fit a model of the annotators to every item at once (applied by
#: :mod:`annotation.gold.services`), with the name their errors use.
MODEL_RULES = {DAWID_SKENE: "Dawid–Skene", MACE: "MACE"}
#: Part of the gold's stored state (``annotation.models.GoldState``): raise it with any change to what a rule
#: decides, so that gold decided by the old code is computed again by the next release.
RULES_VERSION = 2
#: Rules a project may pick instead of its task's default (``options["gold_rule"]``).
ALTERNATIVE_RULES = (DAWID_SKENE, MACE)


def rule_for(slug: str) -> GoldRule:
    """The default rule the task type names (``TaskType.gold_rule``)."""
    try:
        return get_task_type(slug).gold_rule()
    except (PayloadError, MissingLayer) as exc:
        raise LookupError(f"no gold rule for task type {slug!r}") from exc
