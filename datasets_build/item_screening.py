"""The screening of items stored one at a time — through the API, the admin or a service — with the importer's
own code (:meth:`.prepare.RecordPreparer.screened`): the same checks, the same PII pseudonymization under the
project's policy (text, meta and external id), the same toxicity and bias screening, the same flags and status.
Text a writing stage copies into an item (an NLI hypothesis, an MRC question) gets the same, on that text alone
(:func:`writing_screen`). Registered with ``annotation.services.item_screening_register`` when the app is ready
(apps.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from annotation.display import CORPUS_ANNOTATOR
from annotation.models import Project
from annotation.services import ScreenedItem, ScreenedWriting, ServiceError

from .pii import PiiPolicy, Scrubber, resolve_policy
from .pii.apply import scrub_writing
from .pii.redact import redact_message
from .prepare import RecordPreparer, pii_flags, screening_flags
from .readers import RecordError
from .screening import ScreenHit, screen_with_models, screen_without_models
from .screening.highlight import text_field_starts


def _policy(project: Project) -> PiiPolicy:
    try:
        return resolve_policy(project.options)
    except ValueError as error:  # a policy the project settings would not have accepted
        raise ServiceError(f"the project's PII policy is invalid: {error}", field="options.pii") from None


def item_screen(project: Project, *, payload: dict[str, Any], external_id: str, meta: dict[str, Any],
                group_key: str) -> ScreenedItem:
    preparer = RecordPreparer(task=project.task, label_schema=project.label_schema, project_id=project.pk,
                              source_id=None, policy=_policy(project), corpus_annotator=CORPUS_ANNOTATOR)
    try:
        screened = preparer.screened(0, payload, meta=meta, annotations=[], external_id=external_id,
                                     group_key=group_key)
    except RecordError as error:  # its message may quote the payload: its PII is taken out, as an import's
        raise ServiceError(redact_message(error.message, {"payload": payload, "meta": meta}),
                           field=f"payload.{error.field}" if error.field and error.field != "pii" else "payload"
                           ) from None
    return ScreenedItem(payload=screened.payload, content_hash=screened.content_hash,
                        external_id=screened.external_id, group_key=screened.group_key, meta=screened.meta,
                        pii_findings=screened.findings, flags=screened.flags)


def writing_screen(project: Project, *, payload: dict[str, Any], meta: dict[str, Any],
                   findings: list[dict[str, Any]], written: dict[str, str]) -> ScreenedWriting:
    """The written texts pseudonymized under the project's policy as an import's text would be, continuing the
    item's pseudonyms (:func:`.pii.apply.scrub_writing`), and screened for toxicity and bias; the flags are an
    import's, their offsets in the item's text with the written text in it."""
    task = project.task
    scrubber = Scrubber(_policy(project), single_words=isinstance(payload.get("tokens"), list))
    scrubbed = scrub_writing(scrubber=scrubber, text_fields=task.text_fields, payload=payload, meta=meta,
                             findings=findings, written=written)
    if scrubbed.leaks:
        field = next(f for f, text in scrubbed.texts.items() if any(raw in text for raw in scrubbed.leaks))
        raise ServiceError(f"{len(scrubbed.leaks)} personal value(s) still appear in the text after replacement; "
                           f"the text was not stored", field=f"payload.{field}")
    starts = text_field_starts(task, {**payload, **scrubbed.texts})
    hits: list[ScreenHit] = []
    for field, text in scrubbed.texts.items():
        found, to_models = screen_without_models(text)
        if to_models:
            found += screen_with_models(text)
        at = starts.get(field, 0)
        hits += [replace(hit, start=hit.start + at, end=hit.end + at) for hit in found]
    return ScreenedWriting(texts=scrubbed.texts, pii_findings=scrubbed.findings,
                           flags=pii_flags(scrubbed.findings) + screening_flags(hits))
