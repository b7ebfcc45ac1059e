"""Per-label reliability from an agreement report (the live one, or the one stored with a release): what the
dashboard, the release page and the dataset card show beside the headline coefficients.

The figure is the one the agreement dashboard shows for the task: one-vs-rest Krippendorff's α per label
(categorical tasks, STS by score band), unitizing α (αu) per entity type (NER) or for the answer spans (MRC), α per
slot (DST), one-vs-rest α per dependency relation over the eojeol (DP); each with its bootstrap 95 % interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The release keeps these keys of the agreement report (besides the headline ones): the per-label section.
REPORT_KEYS = ("per_label",)


@dataclass(frozen=True)
class Reliability:
    """The rows of one report: ``measure`` names the coefficient (a ``coefficient`` or report key), ``kind`` what
    a row is (label, score band, entity type, answer, slot)."""

    measure: str
    kind: str
    rows: list[dict[str, Any]]


def _interval(ci: Any) -> list[float | None]:
    return [ci[0], ci[1]] if isinstance(ci, list | tuple) and len(ci) == 2 else [None, None]


def reliability(agreement: dict[str, Any]) -> Reliability | None:
    """The per-label rows (``label``, ``value``, ``ci95``, and where known ``items`` and ``annotations``) of an
    agreement report (live or stored with a release), or ``None`` when the task has none or none was computed."""
    section = agreement.get("per_label")
    if section and section.get("labels"):
        return Reliability("one_vs_rest_alpha", section.get("kind") or "label", [
            {"label": entry["label"], "value": entry.get("value"), "ci95": _interval(entry.get("ci95")),
             "items": entry.get("items"), "annotations": entry.get("annotations")} for entry in section["labels"]])
    by_name = {c.get("name"): c for c in agreement.get("coefficients") or []}
    for name, key, kind in (("krippendorff_alpha_unitizing", "per_type", "entity type"),
                            ("krippendorff_alpha_unitizing", "per_category", "answer"),
                            ("krippendorff_alpha_slots", "per_slot", "slot"),
                            ("krippendorff_alpha_deprels", "per_relation", "relation")):
        values = (by_name.get(name) or {}).get(key)
        if not values:
            continue
        intervals = by_name[name].get(f"{key}_ci95") or {}
        rows = []
        for label, value in sorted(values.items()):
            if isinstance(value, dict):  # per slot: {"alpha", "units", "ci95"}
                rows.append({"label": label, "value": value.get("alpha"), "ci95": _interval(value.get("ci95")),
                             "items": None, "annotations": None})
            else:
                rows.append({"label": label, "value": value, "ci95": _interval(intervals.get(label)),
                             "items": None, "annotations": None})
        return Reliability(name, kind, rows)
    return None
