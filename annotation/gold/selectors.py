"""Reads of gold labels, for the release builder, the API and the review pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from ..models import (
    USABLE_GOLD,
    Adjudication,
    Annotation,
    Flag,
    FlagResolution,
    GoldLabel,
    GoldStatus,
    Item,
    Project,
    ScreeningStatus,
)

#: Screening statuses a release may take: cleared by the screener, or kept by a person after review.
RELEASABLE_SCREENING = (ScreeningStatus.CLEAR, ScreeningStatus.KEPT)
#: Gold statuses that are a decision against releasing the item.
BLOCKING_GOLD = (GoldStatus.DISCARDED, GoldStatus.NEEDS_ADJUDICATION)
#: Gold statuses that close an item to its annotators' revisions: a gold answer was decided (by the rule, a
#: manager or a known answer) or the rule discarded the item. Waiting, excluded and disputed items stay open.
DECIDED_GOLD = (*USABLE_GOLD, GoldStatus.DISCARDED)
#: The gold statuses :func:`release_exclusion` tells apart from no gold row at all (the rest, incomplete and
#: excluded, decide nothing: a reader of many items may leave their rows out).
DECIDING_GOLD = (*USABLE_GOLD, *BLOCKING_GOLD)


def release_exclusion(*, screening_status: str, open_flag: bool, gold_status: str | None, has_annotations: bool,
                      corpus_only: bool, gold_table: bool) -> str | None:
    """Why an item may not be released (``None``: it is releasable). The one rule the release build, the
    dataset card, the progress page and the suggester share.

    Releasable means: screening cleared it or a person kept it after review; no flag of any kind is open on
    it; and its gold is usable — a usable gold label (resolved, adjudicated, known answer), or, while no gold
    decision exists, the corpus's own imported label, or (in a project whose gold was never computed,
    ``gold_table`` false) the task's rule over its annotations.
    """
    if screening_status not in RELEASABLE_SCREENING:
        return f"screening_{screening_status or 'unknown'}"
    if open_flag:
        return "open_flag"
    if gold_status in USABLE_GOLD:
        return None
    if gold_status in BLOCKING_GOLD:
        return f"gold_{gold_status}"
    if has_annotations and (corpus_only or not gold_table):
        return None
    return "gold_incomplete" if has_annotations else "unlabelled"


def has_gold_table(project: Project) -> bool:
    """Whether the project's gold was ever computed (its gold rows, not each task's rule, then decide)."""
    return GoldLabel.objects.filter(item__project=project).exists()


def open_flag_items(project: Project) -> set[int]:
    """Ids of the project's items with an open flag of any kind."""
    return set(Flag.objects.filter(item__project=project, resolution=FlagResolution.OPEN)
               .values_list("item_id", flat=True))


def releasable_items(project: Project) -> QuerySet[Item]:
    """The items :func:`release_exclusion` lets through, as one query (counts on the progress page and the
    release form; the release build applies the same rule row by row)."""
    annotations = Annotation.objects.filter(item=OuterRef("pk"))
    gold = Q(gold__status__in=USABLE_GOLD)
    if has_gold_table(project):
        gold |= (~Q(gold__status__in=BLOCKING_GOLD) & Exists(annotations)
                 & ~Exists(annotations.filter(imported=False)))
    else:
        gold |= Q(Exists(annotations))
    return (Item.objects.filter(project=project, screening_status__in=RELEASABLE_SCREENING)
            .exclude(Exists(Flag.objects.filter(item=OuterRef("pk"), resolution=FlagResolution.OPEN)))
            .filter(gold))


def _digest_sql() -> str:
    """One statement: per table, its rows' count and the sum of a hash of each row's every column the gold
    rule reads (order-free, so PostgreSQL need not sort; ids, times and payloads are hashed as their binary
    values, not formatted as text)."""
    def table(model: type, alias: str, row_hash: str, where: str = "") -> str:
        item = Item._meta.db_table
        join = "" if model is Item else f" JOIN {item} i ON i.id = {alias}.item_id"
        return (f"(SELECT concat(count(*), ':', coalesce(sum({row_hash}), 0)) "
                f"FROM {model._meta.db_table} {alias}{join} WHERE i.project_id = %(project)s{where})")

    def time(column: str, seed: str) -> str:
        return f"timestamp_hash_extended({column} AT TIME ZONE 'UTC', {seed})"

    items = table(Item, "i", "hashtextextended(i.screening_status, i.id)")
    annotations = table(Annotation, "a", "jsonb_hash_extended(a.payload, " + time(
        "a.updated_at", time("a.created_at", "hashint8extended(a.annotator_id, hashint8extended(a.item_id, "
                             "hashtextextended(a.stage, a.id)))")) + ")")
    flags = table(Flag, "f", "hashint8extended(f.item_id, f.id)", " AND f.resolution = %(open)s")
    golds = table(GoldLabel, "g", time("g.updated_at", "hashtextextended(g.status, hashint8extended(g.version, "
                                                       "hashint8extended(g.item_id, g.id)))"))
    return f"SELECT concat_ws('|', {items}, {annotations}, {flags}), {golds}"


def gold_state_kept() -> bool:
    """Whether the database computes the gold's digests (PostgreSQL), so that a release can tell gold that is
    current from gold to recompute."""
    return connection.vendor == "postgresql"


def gold_digests(project: Project) -> tuple[str, str] | None:
    """What the gold of ``project`` is computed from (items and their screening, annotations, open flags) and
    what it is (the gold rows), each as a digest that changes when any of its rows is added, removed or
    changed; ``None`` where the database cannot compute them in SQL (SQLite: the gold is always recomputed).
    Cheap next to the computation: one pass over each table in PostgreSQL."""
    if not gold_state_kept():
        return None
    with connection.cursor() as cursor:
        cursor.execute(_digest_sql(), {"project": project.pk, "open": FlagResolution.OPEN})
        inputs, rows = cursor.fetchone()
    return inputs, rows


def gold_labels(project: Project) -> Iterator[tuple[Item, dict[str, Any] | None, str]]:
    """Every item of the project, in id order, with its stored gold payload and status (run
    ``services.gold_compute`` first for gold that follows the latest annotations).

    ``status`` is a :class:`~annotation.models.GoldStatus` value; only ``USABLE_GOLD`` statuses
    (resolved, adjudicated, known) carry a payload a release may use.
    """
    golds = dict((item_id, (payload, status)) for item_id, payload, status in GoldLabel.objects.filter(
        item__project=project).values_list("item_id", "payload", "status"))
    for item in Item.objects.filter(project=project).order_by("id").iterator(chunk_size=2000):
        payload, status = golds.get(item.pk, (None, GoldStatus.INCOMPLETE))
        yield item, payload, status


def gold_list(project: Project, *, status: str | None = None) -> QuerySet[GoldLabel]:
    qs = GoldLabel.objects.filter(item__project=project).select_related("item")
    return qs.filter(status=status) if status else qs


def gold_of(item: Item) -> GoldLabel | None:
    """The item's stored gold label, if any (managers only)."""
    return GoldLabel.objects.filter(item=item).first()


def adjudications_of(item: Item) -> QuerySet[Adjudication]:
    return Adjudication.objects.filter(item=item).select_related("decided_by", "source_annotation").order_by(
        "-decided_at")


def gold_counts(project: Project) -> dict[str, int]:
    return dict(GoldLabel.objects.filter(item__project=project).values_list("status").annotate(n=Count("id"))
                .order_by())


def next_to_adjudicate(project: Project, *, after: int = 0) -> int | None:
    """The open disagreement after item ``after`` in item-number order (the gold page's order of "needs
    adjudication"), wrapping round to the first; ``None`` when no other item needs adjudication."""
    waiting = (GoldLabel.objects.filter(item__project=project, status=GoldStatus.NEEDS_ADJUDICATION)
               .exclude(item_id=after).order_by("item_id").values_list("item_id", flat=True))
    return waiting.filter(item_id__gt=after).first() or waiting.first()
