"""Writes of model-assisted annotation: a project's assist settings, the arm each assignment is in, the
project's current suggestions and the uncertainty-first queue priorities fed from them.

What is decided (settings validated, the per-assignment draw, a suggestion's record on an annotation) is
read in ``annotation/assist.py``; the suggester that computes suggestions is ``exports/assist.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet

from ..assist import (
    OPTIONS_KEY,
    SOURCES,
    AssistError,
    AssistSettings,
    SuggestionRow,
    arm_decision,
    assist_settings,
    settings_validated,
)
from ..models import (
    Annotation,
    Assignment,
    GoldLabel,
    GoldStatus,
    Item,
    Project,
    QueueSlot,
    Suggestion,
    SuggestionArm,
)
from ..task_types import PayloadError
from .queue import queue_priority_set


def _assist_options_write(project: Project, settings: AssistSettings) -> None:
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
    settings = replace(before, **settings_validated(changes))
    _assist_options_write(locked, settings)
    project.options = locked.options
    if settings.queue_order == "uncertainty" and before.queue_order != "uncertainty":
        transaction.on_commit(lambda: queue_priorities_refresh(project))
    return settings


def suggestion_decide(assignment: Assignment) -> Suggestion | None:
    """The suggestion this assignment shows, deciding (once, under a row lock) when it is new."""
    if assignment.suggestion_arm != SuggestionArm.UNDECIDED:
        return assignment.suggestion if assignment.suggestion_arm == SuggestionArm.ASSISTED else None
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("item", "item__project").get(pk=assignment.pk)
        if locked.suggestion_arm == SuggestionArm.UNDECIDED:
            arm, suggestion = arm_decision(locked)
            locked.suggestion_arm, locked.suggestion = arm, suggestion
            locked.save(update_fields=["suggestion_arm", "suggestion", "updated_at"])
    assignment.suggestion_arm, assignment.suggestion = locked.suggestion_arm, locked.suggestion
    return locked.suggestion if locked.suggestion_arm == SuggestionArm.ASSISTED else None


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
    _assist_options_write(locked, settings)
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
