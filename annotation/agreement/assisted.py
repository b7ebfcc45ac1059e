"""Agreement split by model assistance: α of the annotations made with a suggestion shown and of those made
without, the acceptance rate, and how well the suggestions agreed with the annotators and with gold.

Pre-filled suggestions anchor annotators: two people who accept the same suggestion agree because of the
model, not because the guideline is clear. So the report never mixes the two: the headline coefficient is
computed separately on the assisted annotations (items with at least two of them) and on the unassisted
ones, each with its bootstrap interval, and the dashboard shows the difference. With the fraction at 50 %
(a random half of the assignments assisted, decided per assignment) the two halves are a controlled
comparison of the same items, annotators and period.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..models import USABLE_GOLD, Annotation, GoldLabel, Suggestion
from .data import ProjectData
from .measures import Headline, Measure

#: Bootstrap resamples of each half's interval (the headline uses the full count; halves are a comparison).
SPLIT_BOOT = 200


def _half(half: np.ndarray, item_codes: np.ndarray, headline: Headline, seed: int) -> dict[str, Any]:
    """The headline coefficient of the rows in ``half``, on the items with two or more of them."""
    per_item = np.bincount(item_codes[half], minlength=len(item_codes) and int(item_codes.max()) + 1)
    counted = half & (per_item >= 2)[item_codes]
    entry: dict[str, Any] = {"annotations": int(half.sum()), "items_with_2": int((per_item >= 2).sum())}
    if not counted.any():
        entry.update(value=None, ci95=[None, None], reason="no item has two annotations of this kind")
        return entry
    coefficient = headline(counted, seed=seed, n_boot=SPLIT_BOOT).as_dict()
    entry.update(value=coefficient["value"], ci95=coefficient["ci95"], units=coefficient["units"],
                 unit=coefficient["unit"], name=coefficient["name"], level=coefficient["level"])
    return entry


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def assist_split(data: ProjectData, measure: Measure, headline: Headline, seed: int) -> dict[str, Any]:
    """The ``assist`` section of the agreement report (``{"assisted_annotations": 0}`` when none was assisted)."""
    shown_n, unshown_n = data.annotations_assisted, data.annotations_made - data.annotations_assisted
    if not shown_n:
        return {"assisted_annotations": 0, "unassisted_annotations": unshown_n}
    shown = data.rows["shown"][data.counted]
    _, item_codes = np.unique(data.rows["item"][data.counted], return_inverse=True)
    assisted = _half(shown, item_codes, headline, seed)
    unassisted = _half(~shown, item_codes, headline, seed)
    difference = (assisted["value"] - unassisted["value"]
                  if assisted["value"] is not None and unassisted["value"] is not None else None)

    parts = {"accepted": 0, "changed": 0, "added": 0, "unit": None}
    agreement: dict[str, dict[str, list[float]]] = {"accepted": {"annotation": [], "gold": []},
                                                    "changed": {"annotation": [], "gold": []}}
    shown = list(Annotation.objects.filter(item__project=data.project, suggestion_shown=True, imported=False)
                 .values_list("payload", "suggestion_accepted", "suggestion_id", "item_id", "suggestion_parts"))
    suggestions = dict(Suggestion.objects.filter(pk__in={s for _, _, s, _, _ in shown if s is not None})
                       .values_list("id", "payload"))
    gold = dict(GoldLabel.objects.filter(item__project=data.project, status__in=USABLE_GOLD)
                .values_list("item_id", "payload"))
    accepted_n = 0
    for annotation_payload, accepted, suggestion_id, item_id, annotation_parts in shown:
        accepted_n += bool(accepted)
        group = "accepted" if accepted else "changed"
        suggested = suggestions.get(suggestion_id)
        if suggested is not None:
            agreement[group]["annotation"].append(measure.score(annotation_payload, suggested))
            if gold.get(item_id) is not None:
                agreement[group]["gold"].append(measure.score(suggested, gold[item_id]))
        if annotation_parts:
            parts["unit"] = annotation_parts.get("unit")
            for key in ("accepted", "changed", "added"):
                parts[key] += int(annotation_parts.get(key) or 0)
    offered = parts["accepted"] + parts["changed"]
    return {
        "assisted_annotations": shown_n,
        "unassisted_annotations": unshown_n,
        "alpha": {"assisted": assisted, "unassisted": unassisted, "difference": difference},
        "acceptance_rate": accepted_n / shown_n,
        "accepted_unchanged": accepted_n,
        "parts": {**parts, "acceptance_rate": parts["accepted"] / offered if offered else None},
        "model_agreement": {
            group: {"annotations": len(values["annotation"]),
                    "with_annotation": _mean(values["annotation"]),
                    "with_gold": _mean(values["gold"]), "gold_items": len(values["gold"])}
            for group, values in agreement.items()},
        "note": "α of assisted and unassisted annotations, each on items with two or more annotations of its kind; "
                "model agreement = the measure's score of the suggestion against the annotation and against gold",
    }
