"""KLUE-RE: micro F1 without ``no_relation`` and AUPRC over all 30 classes."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import auc, average_precision_score, f1_score, precision_recall_curve

from annotation.task_types import get_task_type

from ._common import ScoringError, align_by_guid, pct

#: KLUE-RE's relation list, in its order (``relation_list``: the order of a prediction's ``probs``).
RELATIONS = get_task_type("re").default_labels()

NO_RELATION = "no_relation"


def micro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Micro F1 over every relation except ``no_relation`` (a no_relation prediction is never a hit)."""
    labels = [label for label in RELATIONS if label != NO_RELATION]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pct(f1_score(list(gold), list(pred), labels=labels, average="micro", zero_division=0))


def _one_hot(gold: Sequence[str]) -> np.ndarray:
    index = {label: i for i, label in enumerate(RELATIONS)}
    return np.eye(len(RELATIONS))[[index[label] for label in gold]]


def auprc(gold: Sequence[str], probs: np.ndarray) -> float:
    """Official: mean over all 30 classes of the trapezoid area under the one-vs-rest PR curve.

    A class absent from gold has no PR curve (the official code fails on it with the scikit-learn it pins;
    newer versions would give 0.5); it scores 0 here and still counts in the mean of 30.
    """
    targets = _one_hot(gold)
    scores = np.zeros(len(RELATIONS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in range(len(RELATIONS)):
            if not targets[:, c].any():
                continue
            precision, recall, _ = precision_recall_curve(targets[:, c], probs[:, c])
            scores[c] = auc(recall, precision)
    return pct(np.mean(scores))


def auprc_present(gold: Sequence[str], probs: np.ndarray) -> float:
    """Corrected: mean average precision over the classes that occur in gold (absent classes are undefined)."""
    targets = _one_hot(gold)
    present = [c for c in range(len(RELATIONS)) if targets[:, c].any()]
    return pct(np.mean([average_precision_score(targets[:, c], probs[:, c]) for c in present]))


def _label(record: Mapping[str, Any]) -> str:
    label = record.get("label")
    if label not in RELATIONS:
        raise ScoringError(f"RE record {record.get('guid')} has unknown label {label!r}")
    return str(label)


def _probs(records: Sequence[Mapping[str, Any]]) -> np.ndarray | None:
    if not all("probs" in r for r in records):
        return None
    probs = np.asarray([r["probs"] for r in records], dtype=float)
    if probs.shape != (len(records), len(RELATIONS)):
        raise ScoringError(f"RE probs must be {len(RELATIONS)} floats per record in relation_list order")
    return probs


def score_re(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``auprc`` needs ``probs`` on every prediction record; without them only ``micro_f1`` is reported."""
    aligned = align_by_guid(gold, pred)
    gold_labels = [_label(r) for r in gold]
    result = {"micro_f1": micro_f1(gold_labels, [_label(r) for r in aligned])}
    probs = _probs(aligned)
    if probs is not None:
        result["auprc"] = auprc(gold_labels, probs)
        result["auprc_present"] = auprc_present(gold_labels, probs)
    return result
