"""The screening of items stored one at a time — through the API, the admin or a service — with the importer's
own code (:meth:`.prepare.RecordPreparer.screened`): the same checks, the same PII pseudonymization under the
project's policy (text, meta and external id), the same toxicity and bias screening, the same flags and status.
Registered with ``annotation.services.item_screening_register`` when the app is ready (apps.py)."""

from __future__ import annotations

from typing import Any

from annotation.models import Project
from annotation.services import ScreenedItem, ServiceError

from .pii import resolve_policy
from .pii.redact import redact_message
from .pipeline import CORPUS_ANNOTATOR
from .prepare import RecordPreparer
from .readers import RecordError


def item_screen(project: Project, *, payload: dict[str, Any], external_id: str, meta: dict[str, Any],
                group_key: str) -> ScreenedItem:
    try:
        policy = resolve_policy(project.options)
    except ValueError as error:  # a policy the project settings would not have accepted
        raise ServiceError(f"the project's PII policy is invalid: {error}", field="options.pii") from None
    preparer = RecordPreparer(task=project.task, label_schema=project.label_schema, project_id=project.pk,
                              source_id=None, policy=policy, corpus_annotator=CORPUS_ANNOTATOR)
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
