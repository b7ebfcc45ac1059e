"""Model-assisted annotation: which assignments show a model's suggestion, what was shown, what was kept.

A project's suggester (its baseline retrained on the current gold, or an uploaded predictions file — both
built in ``exports.assist``) writes :class:`~annotation.models.Suggestion` rows through
:func:`suggestions_replace`. When an annotator is handed an item, :func:`suggestion_for` decides once per
assignment whether it shows the item's current suggestion:

- never when the project's ``assist.show`` option is off, in a writing stage, or on a gold / attention item
  (its answers score the annotators, so they must be the annotator's own);
- otherwise, when the item has a suggestion, a deterministic share of assignments (``assist.fraction``:
  the hash of the project seed and the assignment id below the fraction) is ``assisted``; the rest are the
  ``control`` share, which a 50 % fraction turns into a controlled comparison.

When the first case holds whatever the item (settings off, a writing stage), the take creates the assignment
with the ``none`` arm already (:func:`initial_arm`), so an unassisted project spends no query on this.
The decision and the suggestion shown are stored on the assignment, so a reload shows the same thing and
:func:`submission_fields` compares the submitted payload with exactly what the annotator saw.

This module never imports the queue internals (``selectors.eligible_items``, ``services.assignment_next``):
the API calls it after the queue has chosen the assignment.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

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
from .task_types import PayloadError

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


def _validated(changes: dict[str, Any]) -> dict[str, Any]:
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


def _write(project: Project, settings: AssistSettings) -> None:
    options = dict(project.options or {})
    data = settings.as_dict()
    options["queue_order"] = data.pop("queue_order")
    options[OPTIONS_KEY] = data
    Project.objects.filter(pk=project.pk).update(options=options)
    project.options = options


@transaction.atomic
def assist_settings_update(*, project: Project, **changes: Any) -> AssistSettings:
    """Change the project's assist settings (validated); returns the new settings."""
    locked = Project.objects.select_for_update().get(pk=project.pk)
    before = assist_settings(locked)
    settings = replace(before, **_validated(changes))
    _write(locked, settings)
    project.options = locked.options
    if settings.queue_order == "uncertainty" and before.queue_order != "uncertainty":
        transaction.on_commit(lambda: queue_priorities_refresh(project))
    return settings


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
    at the item (no query, and :func:`suggestion_for` has nothing left to do), else undecided."""
    return SuggestionArm.NONE if _never_shown(project, stage) else SuggestionArm.UNDECIDED


def suggestion_for(assignment: Assignment) -> Suggestion | None:
    """The suggestion this assignment shows, deciding (once, under a row lock) when it is new."""
    if assignment.suggestion_arm != SuggestionArm.UNDECIDED:
        return assignment.suggestion if assignment.suggestion_arm == SuggestionArm.ASSISTED else None
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("item", "item__project").get(pk=assignment.pk)
        if locked.suggestion_arm == SuggestionArm.UNDECIDED:
            arm, suggestion = _decide(locked)
            locked.suggestion_arm, locked.suggestion = arm, suggestion
            locked.save(update_fields=["suggestion_arm", "suggestion", "updated_at"])
    assignment.suggestion_arm, assignment.suggestion = locked.suggestion_arm, locked.suggestion
    return locked.suggestion if locked.suggestion_arm == SuggestionArm.ASSISTED else None


def _decide(assignment: Assignment) -> tuple[str, Suggestion | None]:
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


# -- storing suggestions (the suggester's write path) ------------------------------------------------------


@dataclass
class SuggestionRow:
    item_id: int
    stage: str
    payload: dict[str, Any]
    confidence: float | None = None
    uncertainty: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def _clip(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if not math.isfinite(value) else min(1.0, max(0.0, value))


def _unreferenced(qs: QuerySet[Suggestion]) -> QuerySet[Suggestion]:
    return qs.exclude(Exists(Assignment.objects.filter(suggestion=OuterRef("pk")))).exclude(
        Exists(Annotation.objects.filter(suggestion=OuterRef("pk"))))


def _chunks(rows: Iterable[SuggestionRow], size: int) -> Iterator[list[SuggestionRow]]:
    chunk: list[SuggestionRow] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@transaction.atomic
def suggestions_replace(*, project: Project, rows: Iterable[SuggestionRow], model_version: str, source: str,
                        trained_on: int | None = None) -> dict[str, Any]:
    """Make ``model_version`` the project's current suggestions (one per item and stage).

    Every payload is validated like an annotator's (an invalid one is left out and counted); gold /
    attention items and writing stages are left out. Superseded suggestions no assignment or annotation
    refers to are deleted. Idempotent: writing the same version again replaces it.
    """
    if source not in SOURCES:
        raise AssistError(f"source must be one of {', '.join(SOURCES)}", field="source")
    if not model_version or len(model_version) > 120:
        raise AssistError("model_version must be 1–120 characters", field="model_version")
    locked = Project.objects.select_for_update().get(pk=project.pk)
    task = locked.task
    stages = set(task.suggestion_stages)
    schema = locked.label_schema or {}
    known = set(GoldLabel.objects.filter(item__project=locked, status=GoldStatus.KNOWN)
                .values_list("item_id", flat=True))
    counts = {"stored": 0, "invalid": 0, "skipped_gold": 0, "skipped_stage": 0, "unknown_item": 0}
    errors: list[str] = []

    Suggestion.objects.filter(item__project=locked, is_current=True).update(is_current=False)
    _unreferenced(Suggestion.objects.filter(item__project=locked, model_version=model_version)).delete()
    existing = set(Suggestion.objects.filter(item__project=locked, model_version=model_version)
                   .values_list("item_id", "stage"))
    seen: set[tuple[int, str]] = set()
    for chunk in _chunks(rows, 1000):
        items = {i.pk: i for i in Item.objects.filter(project=locked, pk__in=[r.item_id for r in chunk])
                 .only("id", "payload", "is_gold_check")}
        new = []
        for row in chunk:
            item = items.get(row.item_id)
            if item is None:
                counts["unknown_item"] += 1
                continue
            if row.stage not in stages:
                counts["skipped_stage"] += 1
                continue
            if item.is_gold_check or item.pk in known:
                counts["skipped_gold"] += 1
                continue
            if (item.pk, row.stage) in seen:
                continue
            try:
                payload = task.validate_annotation(row.payload, item=item.payload, schema=schema, stage=row.stage)
            except PayloadError as error:
                counts["invalid"] += 1
                if len(errors) < 20:
                    errors.append(f"item {item.pk}: {error}")
                continue
            seen.add((item.pk, row.stage))
            if (item.pk, row.stage) in existing:
                continue  # a referenced row of this version from an earlier attempt: re-marked current below
            new.append(Suggestion(item=item, stage=row.stage, payload=payload, confidence=_clip(row.confidence),
                                  uncertainty=_clip(row.uncertainty), detail=row.detail or {},
                                  model_version=model_version, source=source, is_current=False))
        Suggestion.objects.bulk_create(new, batch_size=1000)
    current = Suggestion.objects.filter(item__project=locked, model_version=model_version)
    current.update(is_current=True)
    counts["stored"] = len(seen)
    _unreferenced(Suggestion.objects.filter(item__project=locked, is_current=False)).delete()
    settings = replace(assist_settings(locked), model_version=model_version, source=source,
                       trained_on=assist_settings(locked).trained_on if trained_on is None else int(trained_on))
    _write(locked, settings)
    project.options = locked.options
    # The queue's priorities follow after commit, in short transactions of their own (see below).
    transaction.on_commit(lambda: queue_priorities_refresh(project))
    return {**counts, "errors": errors, "model_version": model_version}


@transaction.atomic
def suggestions_clear(*, project: Project) -> int:
    """Withdraw the project's suggestions: none is current any more (those already shown stay on record)."""
    Project.objects.select_for_update().get(pk=project.pk)
    n = Suggestion.objects.filter(item__project=project, is_current=True).update(is_current=False)
    _unreferenced(Suggestion.objects.filter(item__project=project, is_current=False)).delete()
    transaction.on_commit(lambda: queue_priorities_refresh(project))
    return n


# -- the uncertainty-first queue order ------------------------------------------------------------------------

#: Items per priority update: each chunk is its own short transaction, so the queue's slot rows are never
#: held locked for long (the take skips locked slots, and would otherwise find nothing to hand out).
PRIORITY_CHUNK = 500


def queue_priorities_refresh(project: Project) -> int:
    """Give the queue's ``"uncertainty"`` order its keys: each item's priority is its current suggestion's
    uncertainty (least sure first); items without one get none and come last. Returns slots updated.

    The queue (``services.queue_priority_set`` and the slot index) is the queue's own; this only feeds it.
    """
    from .models import QueueSlot
    from .services import queue_priority_set

    priorities: dict[int, float | None] = dict.fromkeys(
        QueueSlot.objects.filter(project=project, priority__isnull=False).values_list("item_id", flat=True))
    priorities.update(Suggestion.objects.filter(item__project=project, is_current=True)
                      .values_list("item_id", "uncertainty"))
    ids = sorted(priorities)
    updated = 0
    for start in range(0, len(ids), PRIORITY_CHUNK):
        with transaction.atomic():
            updated += queue_priority_set(project, {i: priorities[i] for i in ids[start:start + PRIORITY_CHUNK]})
    return updated


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
