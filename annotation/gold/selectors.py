"""Reads of gold labels, for the release builder, the API and the review pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Count, QuerySet

from ..models import Adjudication, GoldLabel, GoldStatus, Item, Project


def gold_labels(project: Project, *, refresh: bool = True) -> Iterator[tuple[Item, dict[str, Any] | None, str]]:
    """Every item of the project, in id order, with its gold payload and status.

    ``status`` is a :class:`~annotation.models.GoldStatus` value; only ``USABLE_GOLD`` statuses
    (resolved, adjudicated, known) carry a payload a release may use. With ``refresh`` the project's gold
    rule is applied first (adjudications and known answers are kept).
    """
    if refresh:
        from .services import gold_compute

        gold_compute(project)
    golds = dict((item_id, (payload, status)) for item_id, payload, status in GoldLabel.objects.filter(
        item__project=project).values_list("item_id", "payload", "status"))
    for item in Item.objects.filter(project=project).order_by("id").iterator(chunk_size=2000):
        payload, status = golds.get(item.pk, (None, GoldStatus.INCOMPLETE))
        yield item, payload, status


def gold_list(project: Project, *, status: str | None = None) -> QuerySet[GoldLabel]:
    qs = GoldLabel.objects.filter(item__project=project).select_related("item")
    return qs.filter(status=status) if status else qs


def adjudications_of(item: Item) -> QuerySet[Adjudication]:
    return Adjudication.objects.filter(item=item).select_related("decided_by", "source_annotation").order_by(
        "-decided_at")


def gold_counts(project: Project) -> dict[str, int]:
    return dict(GoldLabel.objects.filter(item__project=project).values_list("status").annotate(n=Count("id"))
                .order_by())
