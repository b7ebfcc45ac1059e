"""KLUE-NER: entity-level and character-level macro F1.

The official scorer sees one sequence per sentence made of the non-space characters, framed by the
``[CLS]``/``[SEP]`` positions (both tagged ``O``), and concatenates all sentences into one sequence.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import f1_score

from annotation.task_types import get_task_type

from ._common import ScoringError, align_by_guid, pct

#: KLUE-NER's entity types, in KLUE's order.
ENTITY_TYPES = get_task_type("ner").default_labels()

#: The official tag list (B/I per type, then O); its order matches KLUE-baseline's ``get_labels``.
TAGS = [f"{prefix}-{etype}" for etype in ENTITY_TYPES for prefix in ("B", "I")] + ["O"]
_TAG_ID = {tag: i for i, tag in enumerate(TAGS)}


def official_sequence(chars: Sequence[str], tags: Sequence[str]) -> list[str]:
    """One sentence as the official scorer sees it: spaces dropped, framed by two ``O`` positions."""
    if len(chars) != len(tags):
        raise ScoringError(f"{len(chars)} characters but {len(tags)} tags")
    return ["O"] + [tag for char, tag in zip(chars, tags, strict=True) if char != " "] + ["O"]


def strict_iob2_entities(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """Entities as seqeval's strict IOB2 mode finds them: ``B-X`` then any ``I-X``; a stray ``I-X`` is no entity.

    seqeval re-slices the sequence for every entity, which is quadratic on the official single concatenated
    sequence (minutes for KLUE-NER dev); this linear scan yields the same spans (the tests check it).
    """
    entities = set()
    i, n = 0, len(tags)
    while i < n:
        if tags[i].startswith("B-"):
            kind, end = tags[i][2:], i + 1
            while end < n and tags[end] == f"I-{kind}":
                end += 1
            entities.add((kind, i, end))
            i = end
        else:
            i += 1
    return entities


def entity_macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """seqeval ``f1_score(average="macro", mode="strict", scheme=IOB2)`` over one concatenated sequence:
    the mean over entity types seen on either side of 2·tp / (gold + predicted); NaN when neither has one."""
    gold_entities, pred_entities = strict_iob2_entities(gold), strict_iob2_entities(pred)
    gold_counts = Counter(kind for kind, _, _ in gold_entities)
    pred_counts = Counter(kind for kind, _, _ in pred_entities)
    hits = Counter(kind for kind, _, _ in gold_entities & pred_entities)
    kinds = set(gold_counts) | set(pred_counts)
    if not kinds:
        return float("nan")
    return pct(sum(2 * hits[k] / (gold_counts[k] + pred_counts[k]) for k in kinds) / len(kinds))


def _ids(tags: Sequence[str]) -> np.ndarray:
    # Integer ids as the official code uses: sklearn is an order of magnitude faster on them than on strings.
    return np.fromiter((_TAG_ID[t] for t in tags), dtype=np.int64, count=len(tags))


def char_macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Official: macro F1 over all 13 tags, ``O`` included; a tag absent from both sides scores 1."""
    labels = list(range(len(TAGS)))
    return pct(f1_score(_ids(gold), _ids(pred), labels=labels, average="macro", zero_division=1))


def char_macro_f1_without_o(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Corrected (what the docstring and paper say): macro F1 over the 12 entity tags seen in gold or
    predictions, ``O`` excluded, undefined scores counted as 0."""
    gold_ids, pred_ids = _ids(gold), _ids(pred)
    seen = [int(i) for i in np.union1d(gold_ids, pred_ids) if i != _TAG_ID["O"]]
    if not seen:
        return pct(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pct(f1_score(gold_ids, pred_ids, labels=seen, average="macro", zero_division=0))


def _tags(record: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    chars, tags = record.get("chars"), record.get("tags")
    if chars is None or tags is None:
        raise ScoringError(f"NER record {record.get('guid')} has no chars/tags")
    unknown = set(tags) - set(TAGS)
    if unknown:
        raise ScoringError(f"NER record {record.get('guid')} has unknown tag(s) {sorted(unknown)}")
    return list(chars), list(tags)


def score_ner(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    aligned = align_by_guid(gold, pred)
    gold_seq: list[str] = []
    pred_seq: list[str] = []
    for gold_record, pred_record in zip(gold, aligned, strict=True):
        chars, gold_tags = _tags(gold_record)
        _, pred_tags = _tags(pred_record)
        if len(pred_tags) != len(gold_tags):
            guid = gold_record["guid"]
            raise ScoringError(f"NER record {guid}: {len(pred_tags)} predicted tags for {len(chars)} characters")
        gold_seq += official_sequence(chars, gold_tags)
        pred_seq += official_sequence(chars, pred_tags)
    return {
        "entity_macro_f1": entity_macro_f1(gold_seq, pred_seq),
        "char_macro_f1": char_macro_f1(gold_seq, pred_seq),
        "char_macro_f1_without_o": char_macro_f1_without_o(gold_seq, pred_seq),
    }
