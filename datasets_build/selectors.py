"""Reads of the dataset-building app: jobs and their progress, sources, PII report, review queue, near duplicates."""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, TextField, Value
from django.db.models.functions import Cast, Concat

from annotation.models import Flag, FlagResolution, Item, Project, ScreeningStatus, Source

from .licenses import license_terms, release_notes, release_warnings
from .models import ImportJob, ImportStatus, NearDuplicate


def import_jobs(project: Project) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(project=project).select_related("created_by")


def import_job_progress(job: ImportJob) -> dict[str, int]:
    """Records read / screened / written: the final counts once finished, the worker's state while running."""
    if job.status == ImportStatus.RUNNING and job.celery_task_id:
        from celery.result import AsyncResult

        try:
            info = AsyncResult(job.celery_task_id).info
        except Exception:  # no result backend (eager mode): progress is simply unknown
            info = None
        if isinstance(info, dict) and "read" in info:
            return {"read": int(info["read"]), "screened": int(info.get("screened", 0)),
                    "written": int(info.get("written", 0))}
    return {"read": job.records_read, "screened": job.records_screened, "written": job.items_written}


def sources_report(project: Project) -> list[dict[str, Any]]:
    """The project's sources with item counts, licence terms and release warnings."""
    rows = (Source.objects.filter(items__project=project).annotate(items_count=Count("items"))
            .order_by("name"))
    report = []
    for source in rows:
        terms = license_terms(source.license)
        report.append({
            "id": source.pk,
            "name": source.name,
            "license": source.license,
            "url": source.url,
            "items": source.items_count,
            "known_license": terms is not None,
            "redistribution": bool(terms and terms.redistribution),
            "derivatives": bool(terms and terms.derivatives),
            "commercial": bool(terms and terms.commercial),
            "warnings": release_warnings(source.license),
            "notes": release_notes(source.license),
        })
    return report


def pii_report(project: Project) -> dict[str, Any]:
    """Findings by type (and by action) over the project's items; never a value, only counts."""
    by_type: Counter[str] = Counter()
    by_action: Counter[tuple[str, str]] = Counter()
    items_with = 0
    for findings in Item.objects.filter(project=project).values_list("pii_findings", flat=True).iterator(
            chunk_size=2000):
        if not findings:
            continue
        items_with += 1
        for finding in findings:
            by_type[finding["type"]] += 1
            by_action[(finding["type"], finding.get("action", ""))] += 1
    types: dict[str, dict[str, int]] = {}
    for (pii_type, action), n in sorted(by_action.items()):
        types.setdefault(pii_type, {"total": by_type[pii_type]})[action] = n
    return {"project": project.slug, "items": Item.objects.filter(project=project).count(),
            "items_with_pii": items_with, "findings": sum(by_type.values()), "types": types,
            "policy": project.options.get("pii") or {}}


def review_queue_items(project: Project, *, kind: str | None = None) -> QuerySet[Item]:
    """Items waiting for a manager: screened as needing review, or carrying an open flag (of ``kind`` when
    given), in id order, without their flags (what a bulk decision selects)."""
    open_flags = Flag.objects.filter(item=OuterRef("pk"), resolution=FlagResolution.OPEN)
    items = Item.objects.filter(project=project).annotate(has_open_flag=Exists(open_flags))
    if kind:
        items = items.filter(Exists(open_flags.filter(kind=kind)))
    else:
        items = items.filter(Q(screening_status=ScreeningStatus.NEEDS_REVIEW) | Q(has_open_flag=True))
    return items.exclude(screening_status=ScreeningStatus.DROPPED).order_by("id")


def review_queue(project: Project, *, kind: str | None = None) -> QuerySet[Item]:
    """The review queue as the page and the API show it: each item with its open flags and source."""
    return (review_queue_items(project, kind=kind)
            .prefetch_related(Prefetch("flags", queryset=Flag.objects.filter(resolution=FlagResolution.OPEN)
                                       .select_related("user"), to_attr="open_flags"))
            .select_related("source"))


def screening_summary(project: Project) -> dict[str, Any]:
    statuses = dict(Item.objects.filter(project=project).values_list("screening_status").annotate(n=Count("id"))
                    .values_list("screening_status", "n"))
    flags = dict(Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN).values_list("kind")
                 .annotate(n=Count("id")).values_list("kind", "n"))
    return {"statuses": statuses, "open_flags": flags}


def near_duplicate_counts(project: Project) -> dict[str, int]:
    """Items that have a near duplicate, and the groups they form."""
    rows = NearDuplicate.objects.filter(project=project)
    return {"items": rows.count(), "groups": rows.values("group").distinct().count()}


def near_duplicate_groups_page(project: Project, *, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
    """Groups ``offset`` … ``offset + limit`` by their first item, each with its items (id, external id, the
    earlier item it was found most similar to, the similarity)."""
    rows = NearDuplicate.objects.filter(project=project)
    groups = list(rows.values_list("group", flat=True).distinct().order_by("group")[offset:offset + limit])
    members = (rows.filter(group__in=groups).select_related("item").order_by("group", "item_id")
               .only("group", "item__external_id", "duplicate_of_id", "similarity"))
    page: dict[int, list[dict[str, Any]]] = {group: [] for group in groups}
    for row in members:
        page[row.group].append({"id": row.item_id, "external_id": row.item.external_id,
                                "duplicate_of": row.duplicate_of_id,
                                "similarity": None if row.similarity is None else round(row.similarity, 4)})
    return [{"group": group, "items": items} for group, items in page.items()]


def near_duplicate_links(project: Project, *, chunk: int = 50_000) -> Any:
    """The import's near-duplicate links (MinHash LSH, ``datasets_build.models.NearDuplicate``) as an ``(m, 2)``
    array: each grouped item with its group, which is named by its first item's id (``SplitUnits.link`` joins
    them). On PostgreSQL the links come as one string of numbers, which numpy reads (80,000 links as Python rows
    cost 50 ms of this process's time, as one string 5 ms); elsewhere ``chunk`` rows at a time."""
    import numpy as np  # the release build's and the split assignment's: not with the pages' imports

    links = NearDuplicate.objects.filter(project=project)
    if connection.vendor == "postgresql":
        from django.contrib.postgres.aggregates import StringAgg

        numbers = links.aggregate(numbers=StringAgg(
            Concat(Cast("item_id", TextField()), Value(","), Cast("group", TextField()), output_field=TextField()),
            delimiter=","))["numbers"]
        return np.fromstring(numbers or "", dtype=np.int64, sep=",").reshape(-1, 2)
    found = array("q")
    last = 0
    while rows := list(links.filter(id__gt=last).order_by("id").values_list("id", "item_id", "group")[:chunk]):
        for _id, item_id, group in rows:
            found.extend((item_id, group))
        last = rows[-1][0]
    return np.frombuffer(found, dtype=np.int64).reshape(-1, 2)
