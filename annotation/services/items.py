"""Items: built from a payload the task type validates, and screened before they are stored.

Every item that is stored, whichever way it comes in (an import, ``POST /api/projects/{id}/items/``, the
admin, a service), gets the same screening: its PII pseudonymized or detected under the project's policy
(its text, meta and external id), its text screened for toxicity and bias, its findings recorded and its
flags raised, its screening status set from them. The importer screens its records in
``datasets_build.prepare``; the items created one at a time here go through the same code, which
``datasets_build`` registers (:func:`item_screening_register`, from its ``AppConfig.ready``): the screening
belongs to that app, which depends on this one and not the other way round (docs/ARCHITECTURE.md). Text a
writing stage copies into an item is screened the same way, on that text alone (:func:`item_written`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from django.apps import apps
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, transaction
from django.utils.module_loading import import_string

from ..audit import audit_record
from ..models import (
    Flag,
    FlagResolution,
    Item,
    Project,
    ScreeningStatus,
    Source,
    content_hash,
)
from ..task_types import PayloadError, TaskType, reject_nul_characters
from .budgets import queue_needed_refresh
from .errors import ServiceError


@dataclass(frozen=True)
class ScreenedItem:
    """An item's fields as they are stored after screening, and the flags (kind, note) its screening raised."""

    payload: dict[str, Any]
    content_hash: str
    external_id: str
    group_key: str
    meta: dict[str, Any]
    pii_findings: list[dict[str, Any]]
    flags: list[tuple[str, str]]

    @property
    def screening_status(self) -> str:
        return ScreeningStatus.NEEDS_REVIEW if self.flags else ScreeningStatus.CLEAR


class ItemScreening(Protocol):
    """Checks, pseudonymizes and screens an item of ``project`` as an import does; raises :class:`ServiceError`
    naming the field of a payload it refuses."""

    def __call__(self, project: Project, *, payload: dict[str, Any], external_id: str, meta: dict[str, Any],
                 group_key: str) -> ScreenedItem: ...


@dataclass(frozen=True)
class ScreenedWriting:
    """Text a writing stage wrote into an item, screened: per item field the text as it is to be stored, its PII
    findings (``field`` the item field) and the flags (kind, note) its screening raised."""

    texts: dict[str, str]
    pii_findings: list[dict[str, Any]]
    flags: list[tuple[str, str]]


class WritingScreening(Protocol):
    """Pseudonymizes and screens text written into an item of ``project`` (``written``: item field → text), as an
    import does its text, without touching the item's other fields (``payload``, ``meta`` and ``findings`` as
    stored); raises :class:`ServiceError` naming the item field of a text it refuses."""

    def __call__(self, project: Project, *, payload: dict[str, Any], meta: dict[str, Any],
                 findings: list[dict[str, Any]], written: dict[str, str]) -> ScreenedWriting: ...


_item_screening: ItemScreening | None = None
_writing_screening: WritingScreening | None = None


def item_screening_register(screening: ItemScreening, writing: WritingScreening) -> None:
    """Make ``screening`` the one every item goes through, and ``writing`` the one every text a writing stage
    copies into an item goes through (``datasets_build``'s, registered when it is ready)."""
    global _item_screening, _writing_screening
    _item_screening, _writing_screening = screening, writing


def item_screened(project: Project, *, payload: Any, external_id: str = "", meta: dict[str, Any] | None = None,
                  group_key: str = "") -> ScreenedItem:
    """The item as it is to be stored: validated by its task type, PII pseudonymized, screened."""
    if _item_screening is None:  # never store an unscreened item, even in a setup without datasets_build
        raise ImproperlyConfigured("no item screening is registered: add datasets_build to INSTALLED_APPS")
    try:
        reject_nul_characters({"payload": payload, "meta": meta or {}, "external_id": external_id,
                               "group_key": group_key})
    except PayloadError as error:
        raise ServiceError(error.message, field=error.field) from None
    if not isinstance(payload, dict):
        raise ServiceError("the payload must be an object", field="payload")
    return _item_screening(project, payload=payload, external_id=external_id, meta=meta or {}, group_key=group_key)


def item_written(*, project: Project, item: Item, stage: str, output: dict[str, Any]) -> dict[str, Any]:
    """Copy a writing stage's validated output into ``item`` (locked by the caller), screened as an import's text
    is: its PII pseudonymized or detected under the project's policy, in the item and in the output alike, the
    findings recorded with the item's, its text screened for toxicity and bias, the flags raised and the item held
    for review when there are any. Only the written text is screened: the rest of the item stays as it was, so
    offsets into it (an MRC answer in its passage) stay right, and the output is validated again to prove it.
    Returns the output as the annotation is to store it."""
    if _writing_screening is None:
        raise ImproperlyConfigured("no writing screening is registered: add datasets_build to INSTALLED_APPS")
    task = project.task
    produces = task.stage(stage).produces
    written = {item_field: text for field, item_field in produces if isinstance(text := output.get(field), str)}
    screened = _writing_screening(project, payload=item.payload, meta=item.meta or {},
                                  findings=item.pii_findings or [], written=written)
    output = {**output, **{field: screened.texts[item_field] for field, item_field in produces
                           if item_field in screened.texts}}
    try:
        output = task.validate_annotation(output, item=item.payload, schema=project.label_schema, stage=stage)
    except PayloadError as error:
        raise ServiceError("after pseudonymizing: " + error.message,
                           field=f"payload.{error.field}" if error.field else "payload") from None
    item.payload = task.apply_stage_output(item.payload, stage, output)
    item.pii_findings = [f for f in item.pii_findings or [] if f.get("field") not in written] + screened.pii_findings
    if screened.flags:
        Flag.objects.bulk_create([Flag(item=item, user=None, kind=kind, note=note) for kind, note in screened.flags])
        if item.screening_status != ScreeningStatus.DROPPED:
            item.screening_status = ScreeningStatus.NEEDS_REVIEW
    item.save(update_fields=["payload", "pii_findings", "screening_status"])
    return output


def item_checked(task: TaskType, payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An item payload validated (normalised) by its task type, and its content hash; the importer writes
    items from these without building instances."""
    normalised = task.validate_item(payload)
    return normalised, content_hash(task.item_text(normalised))


def items_create(*, project: Project, items: Iterable[dict[str, Any]], source: Source | None = None) -> list[Item]:
    """Items of ``project`` from dicts of ``payload`` and optionally ``external_id``, ``split``, ``meta`` and
    ``group_key``, each screened (:func:`item_screened`), written in bulk with the flags their screening
    raised. An external id the project already has fails the whole call (:class:`ServiceError`, ``conflict``)."""
    built: list[tuple[Item, list[tuple[str, str]]]] = []
    for fields in items:
        screened = item_screened(project, payload=fields["payload"], external_id=fields.get("external_id", ""),
                                 meta=fields.get("meta"), group_key=fields.get("group_key", ""))
        built.append((Item(
            project=project, source=source, split=fields.get("split", ""), payload=screened.payload,
            external_id=screened.external_id, meta=screened.meta, group_key=screened.group_key,
            content_hash=screened.content_hash, pii_findings=screened.pii_findings,
            screening_status=screened.screening_status), screened.flags))
    try:
        with transaction.atomic():
            created = Item.objects.bulk_create([item for item, _ in built], batch_size=2000)
            Flag.objects.bulk_create([Flag(item=item, user=None, kind=kind, note=note)
                                      for item, flags in built for kind, note in flags], batch_size=2000)
    except IntegrityError:
        # The id as it would have been stored: the one given may hold the PII its screening took out.
        which = f"external id {built[0][0].external_id!r}" if len(built) == 1 else "one of these external ids"
        raise ServiceError(f"an item with {which} already exists in the project", code="conflict",
                           field="external_id") from None
    return created


def item_create(*, project: Project, payload: Any, external_id: str = "", source: Source | None = None,
                split: str = "", meta: dict[str, Any] | None = None, group_key: str = "") -> Item:
    """One item, screened like an import's (:func:`items_create`)."""
    (item,) = items_create(project=project, source=source, items=[{
        "payload": payload, "external_id": external_id, "split": split, "meta": meta, "group_key": group_key}])
    return item


@transaction.atomic
def item_update(*, item: Item, payload: Any, external_id: str, meta: dict[str, Any] | None, group_key: str,
                split: str, source: Source | None) -> Item:
    """Change an item (the admin's form). New content (payload, external id, meta or group key) is screened again as
    if it came in now: its findings replace the old ones and its flags are raised; it waits for review when one of
    them or an earlier open flag says so, stays dropped when a reviewer dropped it, and is otherwise clear (the new
    text has not been reviewed). Content as stored is left alone: screened again, a pseudonym of the ``fake`` kind
    would be taken for a name and replaced once more."""
    item = Item.objects.select_for_update().get(pk=item.pk)
    budgeted = (item.split, item.source_id) != (split, source.pk if source is not None else None)
    item.split, item.source = split, source
    if (payload, external_id, meta or {}, group_key) != (item.payload, item.external_id, item.meta, item.group_key):
        screened = item_screened(item.project, payload=payload, external_id=external_id, meta=meta,
                                 group_key=group_key)
        item.payload, item.external_id, item.meta = screened.payload, screened.external_id, screened.meta
        item.group_key, item.content_hash = screened.group_key, screened.content_hash
        item.pii_findings = screened.pii_findings
        Flag.objects.bulk_create([Flag(item=item, user=None, kind=kind, note=note) for kind, note in screened.flags])
        if item.screening_status != ScreeningStatus.DROPPED:
            waiting = screened.flags or Flag.objects.filter(item=item, resolution=FlagResolution.OPEN).exists()
            item.screening_status = ScreeningStatus.NEEDS_REVIEW if waiting else ScreeningStatus.CLEAR
    try:
        with transaction.atomic():
            item.save()
    except IntegrityError:
        raise ServiceError(f"an item with external id {item.external_id!r} already exists in the project",
                           code="conflict", field="external_id") from None
    if budgeted:  # its k may follow its split or source
        queue_needed_refresh(item.project, items=Item.objects.filter(pk=item.pk))
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
