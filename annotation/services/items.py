"""Items: built from a payload the task type validates."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.apps import apps
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.module_loading import import_string

from ..audit import audit_record
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


@cache
def _delete_guards() -> tuple[Callable[[Item], str | None], ...]:
    """Each app's check that an item must stay: the dotted path its AppConfig names as ``item_delete_guard``
    (exports refuses while a published release may hold the item)."""
    return tuple(import_string(path) for config in apps.get_app_configs()
                 if (path := getattr(config, "item_delete_guard", None)))


def item_delete_refusal(item: Item) -> str | None:
    """Why :func:`item_delete` refuses ``item``, in the reader's language; None when it may be deleted."""
    return next((reason for guard in _delete_guards() if (reason := guard(item))), None)


def item_delete(*, item: Item, by: User | None) -> None:
    """Delete an item with its annotations, assignments and gold, audited (its external id, content hash and
    how many annotations went with it; never its text). Refused while a published release may hold it."""
    with transaction.atomic():
        item = Item.objects.select_for_update().get(pk=item.pk)
        if reason := item_delete_refusal(item):
            raise ServiceError(reason, code="conflict")
        before = {"external_id": item.external_id, "content_hash": item.content_hash, "split": item.split,
                  "annotations": item.annotations.count()}
        audit_record(project=item.project_id, actor=by, object_type="item", object_id=item.pk, action="delete",
                     before=before, after=None)
        item.delete()
