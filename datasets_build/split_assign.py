"""Splits given before annotation, so that an annotation budget by split (``annotation.budget``) applies from the
first item handed out.

A KLUE corpus brings each item's split in its guid; other corpora get theirs from a ratio release, after annotation.
:func:`splits_assign` gives every item without a split one now, with the release's own splitter
(:mod:`datasets_build.splits`: items sharing a group key, a content hash or a near-duplicate group stay together;
no labels to stratify by yet), and an item that shares its group or text with an item that already has a split takes
that split. Releases then keep them (``--keep-splits``); a later ratio release would choose again, and the items'
k would follow their new split.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import transaction

from annotation import services as annotation_services
from annotation.audit import audit_record
from annotation.models import AuditObject, Item, Project, Split, User
from annotation.services import ServiceError

from . import splits as split_lib
from .selectors import near_duplicate_links

#: Items written per UPDATE.
_CHUNK = 5000


def splits_assign(*, project: Project, ratios: str | Sequence[float], seed: int, by: User | None) -> dict[str, int]:
    """Give the project's items without a split one (train, dev, test by ``ratios``, seeded); returns how many
    items each split received. Audited; the budget's k of the items follows their split."""
    try:
        shares = split_lib.parse_ratios(ratios)
    except split_lib.SplitSpecError as bad:
        raise ServiceError(str(bad), field="splits") from None
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=project.pk)
        rows = list(Item.objects.filter(project=project).order_by("pk")
                    .values_list("pk", "split", "group_key", "content_hash"))
        given = {key: split for _pk, split, group, text in rows if split for key in (f"g:{group}" if group else "",
                                                                                   f"h:{text}") if key}
        units = split_lib.SplitUnits()
        inherited: dict[int, str] = {}
        for pk, split, group, text in rows:
            if split:
                continue
            known = given.get(f"g:{group}") if group else None
            known = known or given.get(f"h:{text}")
            if known:  # kept with the item it shares a group or a text with
                inherited[pk] = known
            else:
                units.add(pk, label=None, group_key=group, content_hash=text)
        units.link(near_duplicate_links(project))
        units.freeze()
        codes = split_lib.assign_splits(units, shares, seed)
        names = list(shares)
        chosen: dict[str, list[int]] = {name: units.ids[codes == i].tolist() for i, name in enumerate(names)}
        for pk, split in inherited.items():
            chosen.setdefault(split, []).append(pk)
        for name, ids in chosen.items():
            for start in range(0, len(ids), _CHUNK):
                Item.objects.filter(pk__in=ids[start:start + _CHUNK], split=Split.NONE).update(split=name)
        counts = {name: len(ids) for name, ids in chosen.items()}
        annotation_services.queue_needed_refresh(project)
        audit_record(project=project, actor=by, object_type=AuditObject.PROJECT, object_id=project.pk,
                     action="assign_splits", after={"ratios": shares, "seed": seed, "items": counts})
    return counts


def split_counts(project: Project) -> dict[str, int]:
    """Items per split (``""``: none yet)."""
    values, counts = np.unique(np.array(list(Item.objects.filter(project=project).values_list("split", flat=True)),
                                        dtype=object), return_counts=True)
    return {str(value): int(n) for value, n in zip(values, counts, strict=True)}
