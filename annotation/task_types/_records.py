"""Helpers shared by the task types' ``parse_record``/``build_record`` (KLUE record <-> item).

A KLUE record is split into the item payload (what annotators see), ``meta`` (every other original
field, so an export can rebuild the record) and annotations. Rebuilding lays the fields out in KLUE's
own key order; fields KLUE does not know (kept in ``meta``) follow in the order they came.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ._common import require_str
from .base import RecordAnnotation

#: The annotator name of a label that came with the corpus without an annotator id (e.g. RE's ``label``).
CORPUS = ""

_SPLIT = re.compile(r"_(train|dev|test)_")


def external_id(record: Mapping[str, Any]) -> str:
    """The record's guid; an absent guid is ``""`` (the importer then numbers the item itself)."""
    guid = record.get("guid")
    return "" if guid is None else require_str(guid, "guid")


def split_from_guid(guid: str) -> str:
    """``klue-nli-v1_dev_00002`` -> ``dev``; ``""`` when the guid names no split."""
    match = _SPLIT.search(guid)
    return match.group(1) if match else ""


def text_key(*parts: str) -> str:
    """A group key for long text (a premise, a passage): hash of the NFKC, whitespace-collapsed text.

    Item.group_key is 200 characters at most, so long texts are hashed rather than stored.
    """
    normalised = "\n".join(" ".join(unicodedata.normalize("NFKC", p).split()) for p in parts)
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def rest(record: Mapping[str, Any], used: Iterable[str]) -> dict[str, Any]:
    """The fields of ``record`` not in ``used``, in their original order (they go to ``meta``)."""
    skip = set(used)
    return {k: v for k, v in record.items() if k not in skip}


def ordered(order: Iterable[str], fields: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    """Lay out a record: keys of ``order`` first (taken from ``fields``, else ``meta``; absent keys are
    skipped), then the remaining ``meta`` keys that are not record fields of their own."""
    order = list(order)
    record: dict[str, Any] = {}
    for key in order:
        if key in fields:
            record[key] = fields[key]
        elif key in meta:
            record[key] = meta[key]
    for key, value in meta.items():
        if key not in record and key not in order and not key.startswith("_"):
            record[key] = value
    return record


def individual(annotations: Iterable[RecordAnnotation], stage: str | None = None) -> list[RecordAnnotation]:
    """Annotations by an annotator (corpus ids or Goldset users), not the corpus's anonymous label."""
    return [a for a in annotations if a.annotator != CORPUS and (stage is None or a.stage == stage)]


def first_payload(annotations: Iterable[RecordAnnotation], stage: str | None = None) -> dict[str, Any] | None:
    """The payload of the first annotation (of a stage): the label of a single-annotation task."""
    for annotation in annotations:
        if stage is None or annotation.stage == stage:
            return annotation.payload
    return None


def majority(values: Iterable[Any], min_votes: int = 1) -> Any:
    """The most frequent value (first seen wins a tie), or ``None`` below ``min_votes``."""
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    value, votes = counts.most_common(1)[0]
    return value if votes >= min_votes else None
