"""Flags an annotator or a manager raises on an item, and their resolution."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..models import (
    Assignment,
    AssignmentStatus,
    Flag,
    FlagResolution,
    Item,
    ScreeningStatus,
    User,
)
from .errors import ServiceError
from .queue import assignments_close

# -- flags --------------------------------------------------------------------------------------


@transaction.atomic
def flag_create(*, item: Item, user: User | None, kind: str, note: str = "") -> Flag:
    """Raise a flag; the item leaves every queue until a manager resolves it."""
    flag = Flag.objects.create(item=item, user=user, kind=kind, note=note)
    if user is not None:
        assignments_close(Assignment.objects.filter(item=item, annotator=user)
                           .exclude(status=AssignmentStatus.SUBMITTED), AssignmentStatus.FLAGGED)
    return flag


@transaction.atomic
def flag_resolve(*, flag: Flag, resolution: str, by: User, note: str = "") -> Flag:
    flag = Flag.objects.select_for_update().get(pk=flag.pk)
    if flag.resolution != FlagResolution.OPEN:
        raise ServiceError(f"this flag was already resolved ({flag.resolution})", code="conflict")
    if resolution not in FlagResolution.values or resolution == FlagResolution.OPEN:
        raise ServiceError(f"unknown resolution {resolution!r}", field="resolution")
    flag.resolution = resolution
    flag.resolution_note = note
    flag.resolved_by = by
    flag.resolved_at = timezone.now()
    flag.save()
    if resolution == FlagResolution.DROPPED:
        Item.objects.filter(pk=flag.item_id).update(screening_status=ScreeningStatus.DROPPED)
    elif not Flag.objects.filter(item_id=flag.item_id, resolution=FlagResolution.OPEN).exists():
        # The last open flag resolved in the item's favour: a screened item goes back to the queue.
        Item.objects.filter(pk=flag.item_id, screening_status=ScreeningStatus.NEEDS_REVIEW).update(
            screening_status=ScreeningStatus.KEPT)
    return flag
