"""KLUE-DP: the official "macro F1" UAS/LAS and the plain attachment scores.

The official scorer flattens all eojeols of all sentences and then
- UAS macro F1: treats each head *position* (0 = root, 1, 2, ...) as a class, sklearn macro F1;
- LAS macro F1: maps every DEPREL from index 15 of the official list on into one "others" class,
  replaces the predicted label of every wrong-head word with a padding class, sklearn macro F1 over
  the labels seen on either side. The padding class never occurs in gold, so its F1 is 0 and one
  wrong head alone drags the macro average down by a whole class.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import f1_score

from annotation.task_types import get_task_type

from ._common import ScoringError, align_by_guid, pct

#: The official DEPREL list, in its order.
DEPRELS = get_task_type("dp").default_labels()

OTHERS_FROM = 15
OTHERS = -3
PAD = -2
_INDEX = {label: i for i, label in enumerate(DEPRELS)}


def label_class(deprel: str) -> int:
    """The official class id of a DEPREL; labels outside the official list are pooled into "others"."""
    index = _INDEX.get(deprel, len(DEPRELS))
    return OTHERS if index >= OTHERS_FROM else index


def _macro(gold: Sequence[int], pred: Sequence[int]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pct(f1_score(list(gold), list(pred), average="macro", zero_division=0))


def uas_macro_f1(gold_heads: Sequence[int], pred_heads: Sequence[int]) -> float:
    return _macro(gold_heads, pred_heads)


def las_macro_f1(
    gold_heads: Sequence[int], pred_heads: Sequence[int], gold_labels: Sequence[str], pred_labels: Sequence[str]
) -> float:
    gold_types = np.asarray([label_class(x) for x in gold_labels])
    pred_types = np.asarray([label_class(x) for x in pred_labels])
    pred_types[np.asarray(gold_heads) != np.asarray(pred_heads)] = PAD
    return _macro(gold_types.tolist(), pred_types.tolist())


def uas(gold_heads: Sequence[int], pred_heads: Sequence[int]) -> float:
    """Plain unlabelled attachment score: share of eojeols with the right head."""
    return pct(np.mean(np.asarray(gold_heads) == np.asarray(pred_heads)))


def las(
    gold_heads: Sequence[int], pred_heads: Sequence[int], gold_labels: Sequence[str], pred_labels: Sequence[str]
) -> float:
    """Plain labelled attachment score: right head and the exact DEPREL string."""
    heads_ok = np.asarray(gold_heads) == np.asarray(pred_heads)
    labels_ok = np.asarray(gold_labels, dtype=object) == np.asarray(pred_labels, dtype=object)
    return pct(np.mean(heads_ok & labels_ok))


def _columns(record: Mapping[str, Any]) -> tuple[list[int], list[str]]:
    heads, deprels = record.get("head"), record.get("deprel")
    if heads is None or deprels is None or len(heads) != len(deprels):
        raise ScoringError(f"DP record {record.get('guid')} needs head and deprel lists of equal length")
    try:
        return [int(h) for h in heads], [str(d) for d in deprels]
    except (TypeError, ValueError) as exc:
        raise ScoringError(f"DP record {record.get('guid')}: a head is not an integer") from exc


def score_dp(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    aligned = align_by_guid(gold, pred)
    gold_heads: list[int] = []
    pred_heads: list[int] = []
    gold_labels: list[str] = []
    pred_labels: list[str] = []
    for gold_record, pred_record in zip(gold, aligned, strict=True):
        g_heads, g_labels = _columns(gold_record)
        p_heads, p_labels = _columns(pred_record)
        if len(p_heads) != len(g_heads):
            raise ScoringError(f"DP record {gold_record['guid']}: {len(p_heads)} predicted rows for {len(g_heads)}")
        gold_heads += g_heads
        pred_heads += p_heads
        gold_labels += g_labels
        pred_labels += p_labels
    if not gold_heads:
        raise ScoringError("nothing to score")
    return {
        "uas_macro_f1": uas_macro_f1(gold_heads, pred_heads),
        "las_macro_f1": las_macro_f1(gold_heads, pred_heads, gold_labels, pred_labels),
        "uas": uas(gold_heads, pred_heads),
        "las": las(gold_heads, pred_heads, gold_labels, pred_labels),
    }
