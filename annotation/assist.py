"""Model-assisted annotation: which assignments show a model's suggestion, what was shown, what was kept.

A project's suggester (its baseline retrained on the current gold, or an uploaded predictions file — both
built in ``exports.assist``) writes :class:`~annotation.models.Suggestion` rows through
``services.suggestions_replace``. When an annotator is handed an item, ``services.suggestion_decide``
decides once per assignment, by :func:`arm_decision`, whether it shows the item's current suggestion:

- never when the project's ``assist.show`` option is off, in a writing stage, or on a gold / attention item
  (its answers score the annotators, so they must be the annotator's own);
- otherwise, when the item has a suggestion, a deterministic share of assignments (``assist.fraction``:
  the hash of the project seed and the assignment id below the fraction) is ``assisted``; the rest are the
  ``control`` share, which a 50 % fraction turns into a controlled comparison.

When the first case holds whatever the item (settings off, a writing stage), the take creates the assignment
with the ``none`` arm already (:func:`initial_arm`), so an unassisted project spends no query on this.
The decision and the suggestion shown are stored on the assignment, so a reload shows the same thing and
:func:`submission_fields` compares the submitted payload with exactly what the annotator saw.

This module reads and decides; every write (settings, the arm of an assignment, suggestions, the queue's
priorities) is in ``annotation/services/suggestions.py``. It never imports the queue internals
(``selectors.eligible_items``, ``services.assignment_next``): the API asks after the queue has chosen the
assignment.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import Count, Q

from .models import (
    Annotation,
    Assignment,
    GoldLabel,
    GoldStatus,
    Item,
    Project,
    Suggestion,
    SuggestionArm,
)

#: The key of the assist settings in ``Project.options``.
OPTIONS_KEY = "assist"
QUEUE_ORDERS = ("default", "uncertainty")
UNCERTAINTY_MEASURES = ("margin", "entropy")
SOURCES = ("baseline", "upload")


class AssistError(ValueError):
    """Settings or suggestions that cannot be used; ``field`` names the offending setting."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class AssistSettings:
    #: Show suggestions to annotators at all.
    show: bool = False
    #: Share of eligible assignments that show the suggestion (0..1); the rest are the control share.
    fraction: float = 1.0
    #: Seed of the per-assignment draw (default: the project id).
    seed: int | None = None
    #: ``default`` (the queue's own order) or ``uncertainty`` (least sure suggestion first).
    queue_order: str = "default"
    #: What the suggester's ``uncertainty`` measures: ``margin`` (1 − top-2 margin) or ``entropy``.
    uncertainty: str = "margin"
    #: Retrain the baseline after this many new gold items (0 = only on demand).
    retrain_every: int = 0
    #: The baseline score (its primary metric, 0–100) the manager aims for, for the expected-effect estimate.
    target_score: float | None = None
    #: Filled by the suggester: the model version whose suggestions are current, its source, and the gold
    #: count it was trained on (for ``retrain_every``).
    model_version: str = ""
    source: str = ""
    trained_on: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def effective_seed(self, project: Project) -> int:
        return project.pk if self.seed is None else int(self.seed)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra")
        return data


_EDITABLE = ("show", "fraction", "seed", "queue_order", "uncertainty", "retrain_every", "target_score")


def assist_settings(project: Project) -> AssistSettings:
    options = project.options or {}
    raw = dict(options.get(OPTIONS_KEY) or {})
    # The queue reads its order from the project's own ``queue_order`` option; that one is authoritative.
    raw["queue_order"] = options.get("queue_order", "default") if options.get("queue_order") in QUEUE_ORDERS \
        else "default"
    known = {k: raw[k] for k in AssistSettings.__dataclass_fields__ if k in raw and k != "extra"}
    try:
        return AssistSettings(**known)
    except TypeError:
        return AssistSettings()


def settings_validated(changes: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in changes.items():
        if key not in _EDITABLE:
            raise AssistError(f"unknown assist setting {key!r}; expected one of {', '.join(_EDITABLE)}", field=key)
        if key == "show":
            if not isinstance(value, bool):
                raise AssistError("show must be true or false", field=key)
        elif key == "fraction":
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or not 0 <= value <= 1:
                raise AssistError(f"fraction must be a number from 0 to 1 (0.5 = half the assignments); got "
                                  f"{value!r}", field=key)
            value = float(value)
        elif key == "seed":
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise AssistError("seed must be an integer or null", field=key)
        elif key == "queue_order":
            if value not in QUEUE_ORDERS:
                raise AssistError(f"queue_order must be one of {', '.join(QUEUE_ORDERS)}", field=key)
        elif key == "uncertainty":
            if value not in UNCERTAINTY_MEASURES:
                raise AssistError(f"uncertainty must be one of {', '.join(UNCERTAINTY_MEASURES)}", field=key)
        elif key == "retrain_every":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise AssistError("retrain_every must be a whole number ≥ 0 (0 = only on demand)", field=key)
        elif key == "target_score" and value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 100):
            raise AssistError("target_score must be a score from 0 to 100 (the baseline's primary metric) or null",
                              field=key)
        out[key] = value
    return out


# -- which assignment shows a suggestion --------------------------------------------------------------


def in_assisted_share(assignment_id: int, seed: int, fraction: float) -> bool:
    """Deterministic draw for one assignment: the hash of (seed, id) as a number in [0, 1) below the
    fraction. Independent of the order assignments are handed out, and the same on every reload."""
    if fraction <= 0:
        return False
    if fraction >= 1:
        return True
    digest = hashlib.sha256(f"goldset-assist:{seed}:{assignment_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def is_gold_item(item: Item) -> bool:
    """A gold / attention item (a known answer that scores annotators): never assisted."""
    return bool(item.is_gold_check) or GoldLabel.objects.filter(item=item, status=GoldStatus.KNOWN).exists()


def current_suggestion(item_id: int, stage: str) -> Suggestion | None:
    return Suggestion.objects.filter(item_id=item_id, stage=stage, is_current=True).first()


def _never_shown(project: Project, stage: str) -> bool:
    """No item of this project and stage can show a suggestion: the settings are off, or a writing stage."""
    return not assist_settings(project).show or stage not in project.task.suggestion_stages


def initial_arm(project: Project, stage: str) -> str:
    """The arm a new assignment starts with: ``none`` when :func:`_never_shown` decides it without looking
    at the item (no query, and ``services.suggestion_decide`` has nothing left to do), else undecided."""
    return SuggestionArm.NONE if _never_shown(project, stage) else SuggestionArm.UNDECIDED


def arm_decision(assignment: Assignment) -> tuple[str, Suggestion | None]:
    """The arm of an undecided assignment and the suggestion it shows (``services.suggestion_decide``
    stores them)."""
    item = assignment.item
    project = item.project
    if _never_shown(project, assignment.stage) or is_gold_item(item):
        return SuggestionArm.NONE, None
    suggestion = current_suggestion(item.pk, assignment.stage)
    if suggestion is None:
        return SuggestionArm.NONE, None
    settings = assist_settings(project)
    if in_assisted_share(assignment.pk, settings.effective_seed(project), settings.fraction):
        return SuggestionArm.ASSISTED, suggestion
    return SuggestionArm.CONTROL, None


def suggestion_view(suggestion: Suggestion | None) -> dict[str, Any] | None:
    """What the annotator's workspace receives (``GET next/``)."""
    if suggestion is None:
        return None
    return {"id": suggestion.pk, "payload": suggestion.payload, "confidence": suggestion.confidence,
            "model": suggestion.model_version, "source": suggestion.source}


def submission_fields(assignment: Assignment, normalised: dict[str, Any], project: Project) -> dict[str, Any]:
    """The annotation's record of assistance, computed on the server from the suggestion the assignment
    showed (never from what a client claims): shown, accepted unchanged, and part by part."""
    if assignment.suggestion_arm != SuggestionArm.ASSISTED or assignment.suggestion_id is None:
        return {"suggestion": None, "suggestion_shown": False, "suggestion_accepted": None,
                "suggestion_parts": None}
    suggestion = assignment.suggestion
    return {"suggestion": suggestion, "suggestion_shown": True,
            "suggestion_accepted": suggestion.payload == normalised,
            "suggestion_parts": project.task.suggestion_parts(suggestion.payload, normalised)}


# -- what the suggester hands to ``services.suggestions_replace`` ------------------------------------------


@dataclass
class SuggestionRow:
    item_id: int
    stage: str
    payload: dict[str, Any]
    confidence: float | None = None
    uncertainty: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)


# -- reads ----------------------------------------------------------------------------------------------


def suggestion_summary(project: Project) -> dict[str, Any]:
    """Current suggestions and what annotators did with the ones they were shown (managers' overview)."""
    settings = assist_settings(project)
    current = Suggestion.objects.filter(item__project=project, is_current=True)
    annotations = Annotation.objects.filter(item__project=project, imported=False)
    row = annotations.aggregate(total=Count("id"), shown=Count("id", filter=Q(suggestion_shown=True)),
                                accepted=Count("id", filter=Q(suggestion_accepted=True)))
    arms = dict(Assignment.objects.filter(item__project=project).values_list("suggestion_arm")
                .annotate(n=Count("id")).order_by())
    return {
        "settings": settings.as_dict(),
        "current": {"suggestions": current.count(), "model_version": settings.model_version,
                    "source": settings.source},
        "annotations": {"total": row["total"], "assisted": row["shown"], "accepted_unchanged": row["accepted"],
                        "acceptance_rate": row["accepted"] / row["shown"] if row["shown"] else None},
        "assignments_by_arm": {arm or "undecided": n for arm, n in sorted(arms.items())},
    }
