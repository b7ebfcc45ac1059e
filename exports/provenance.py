"""An item's provenance as one timeline: where it came from (source, import file and record), how it was screened
(PII types found, flags, screening decisions), who annotated it (rater ids only) under which guideline version,
how its gold was decided, and which releases held it in which split (or left it out, and why).

Only a project's managers and maintainers reach it (the page and the API check the role); annotators are named by
the opaque rater ids of the releases, never by account, and PII findings by type only (their raw values are never
stored). A read: nothing is written, so an annotator who has no rater id yet shows as one without.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from annotation.models import Adjudication, Annotation, AuditEvent, AuditObject, Flag, GoldLabel, Item

from .diff import version_key
from .models import BUILT, RaterId, Release, ReleaseItems


def _when(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _import_of(item: Item) -> dict[str, Any] | None:
    """The import job that wrote ``item`` and the record of its file, from the job's record runs."""
    from datasets_build.models import ImportJob

    for job in ImportJob.objects.filter(project_id=item.project_id, status="succeeded").order_by("-created_at"):
        runs = (job.summary or {}).get("record_runs") or []
        at = bisect.bisect_right(runs, [item.pk, float("inf"), 0]) - 1
        if at >= 0:
            first, record, length = runs[at]
            if first <= item.pk < first + length:
                return {"job": job.pk, "file_name": job.file_name, "format": job.format,
                        "record": record + (item.pk - first), "at": _when(job.finished_at or job.created_at)}
    return None


def _raters(project_id: int) -> dict[int, str]:
    return {row.user_id: row.code for row in RaterId.objects.filter(project_id=project_id)}


def _releases(item: Item) -> list[dict[str, Any]]:
    out = []
    releases = sorted(Release.objects.filter(project_id=item.project_id, status__in=BUILT, held_items__isnull=False),
                      key=lambda r: version_key(r.version))
    rows = {row.release_id: row for row in ReleaseItems.objects.filter(release__in=releases)}
    for release in releases:
        row = rows[release.pk]
        columns = row.unpacked()
        at = np.searchsorted(columns["ids"], item.pk)
        entry: dict[str, Any] = {"kind": "released", "at": _when(release.finished_at or release.created_at),
                                 "release": release.version, "release_id": release.pk, "status": release.status}
        if at < len(columns["ids"]) and columns["ids"][at] == item.pk:
            entry["split"] = row.split_names[int(columns["splits"][at])]
        else:
            out_at = np.searchsorted(columns["excluded_ids"], item.pk)
            if out_at < len(columns["excluded_ids"]) and columns["excluded_ids"][out_at] == item.pk:
                entry["kind"] = "left_out"
                entry["reason"] = row.reason_names[int(columns["excluded_reasons"][out_at])]
            else:
                entry["kind"] = "left_out"
                entry["reason"] = "absent"
        out.append(entry)
    return out


def item_provenance(item: Item) -> dict[str, Any]:
    """The timeline of ``item`` (events in time order, each with its ``kind``) and its current state."""
    events: list[dict[str, Any]] = []
    source = item.source
    imported = _import_of(item)
    events.append({"kind": "imported", "at": _when(item.created_at),
                   "source": {"name": source.name, "license": source.license} if source else None,
                   "external_id": item.external_id, "file": imported})
    pii_types = sorted({f.get("type", "") for f in item.pii_findings or [] if f.get("type")})
    events.append({"kind": "screened", "at": _when(item.created_at), "status": item.screening_status,
                   "pii_types": pii_types, "pii_count": len(item.pii_findings or [])})
    for flag in Flag.objects.filter(item=item).order_by("created_at", "id"):
        events.append({"kind": "flagged", "at": _when(flag.created_at), "flag": flag.kind,
                       "by_screener": flag.user_id is None, "resolution": flag.resolution})
    for event in AuditEvent.objects.filter(project_id=item.project_id, object_type=AuditObject.SCREENING,
                                           object_id=item.pk).order_by("at", "id"):
        events.append({"kind": "screening_review", "at": _when(event.at), "action": event.action,
                       "status": (event.after or {}).get("screening_status")})
    raters = _raters(item.project_id)
    for annotation in (Annotation.objects.filter(item=item).select_related("guideline")
                       .order_by("created_at", "id")):
        events.append({"kind": "annotated", "at": _when(annotation.created_at), "stage": annotation.stage,
                       "rater": raters.get(annotation.annotator_id), "imported": annotation.imported,
                       "guideline": annotation.guideline.version if annotation.guideline else None})
    for adjudication in Adjudication.objects.filter(item=item).order_by("decided_at", "id"):
        events.append({"kind": "adjudicated", "at": _when(adjudication.decided_at), "reason": adjudication.reason,
                       "previous_status": adjudication.previous_status})
    for event in AuditEvent.objects.filter(project_id=item.project_id, object_type=AuditObject.GOLD,
                                           object_id=item.pk).exclude(action="adjudicate").order_by("at", "id"):
        events.append({"kind": "gold_decision", "at": _when(event.at), "action": event.action})
    gold = GoldLabel.objects.filter(item=item).first()
    if gold is not None:
        events.append({"kind": "gold", "at": _when(gold.updated_at), "status": gold.status, "rule": gold.rule,
                       "annotations": gold.annotation_count, "version": gold.version})
    events += _releases(item)
    events.sort(key=lambda e: e["at"] or "")
    return {"item": item.pk, "external_id": item.external_id, "split": item.split,
            "screening_status": item.screening_status, "events": events}
