"""Items: built from a payload the task type validates."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from ..models import (
    Item,
    Project,
    ScreeningStatus,
    Source,
    content_hash,
)
from ..task_types import TaskType, reject_nul_characters
from .errors import ServiceError

# -- items --------------------------------------------------------------------------------------


def item_build(
    *,
    project: Project,
    payload: dict[str, Any],
    external_id: str = "",
    source: Source | None = None,
    split: str = "",
    meta: dict[str, Any] | None = None,
    group_key: str = "",
    screening_status: str = ScreeningStatus.CLEAR,
) -> Item:
    """Validate an item payload and return an unsaved Item."""
    normalised, text_hash = item_checked(project.task, payload)
    return Item(
        project=project, payload=normalised, external_id=external_id, source=source, split=split,
        meta=meta or {}, group_key=group_key, content_hash=text_hash, screening_status=screening_status,
    )


def item_checked(task: TaskType, payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An item payload validated (normalised) by its task type, and its content hash; the importer writes
    items from these without building instances."""
    normalised = task.validate_item(payload)
    return normalised, content_hash(task.item_text(normalised))


def item_create(**kwargs: Any) -> Item:
    reject_nul_characters(kwargs.get("payload"))  # importers check the whole raw record once, before item_build
    item = item_build(**kwargs)
    try:
        with transaction.atomic():
            item.save()
    except IntegrityError:
        raise ServiceError(f"an item with external id {item.external_id!r} already exists", code="conflict",
                           field="external_id") from None
    return item
