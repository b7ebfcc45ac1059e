"""Sentence(-pair) classification and regression: YNAT (tc), KLUE-NLI (nli), KLUE-STS (sts).

Each function mirrors one function of the KLUE-baseline scorer (``klue_baseline/metrics/functional.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import ConstantInputWarning, pearsonr
from sklearn.metrics import f1_score

from ._common import ScoringError, align_by_guid, pct

STS_THRESHOLD = 3.0


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """YNAT: sklearn macro F1 over the labels seen in gold or predictions (absent classes score 0)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pct(f1_score(list(gold), list(pred), average="macro", zero_division=0))


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    if not gold:
        raise ScoringError("nothing to score")
    return pct(np.mean(np.asarray(gold, dtype=object) == np.asarray(pred, dtype=object)))


def pearson_r(gold: Sequence[float], pred: Sequence[float]) -> float:
    """STS Pearson r; NaN (as the official scorer) when either side is constant."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        return pct(pearsonr(np.asarray(pred, dtype=float), np.asarray(gold, dtype=float))[0])


def sts_binary_f1(gold: Sequence[float], pred: Sequence[float]) -> float:
    """STS binary F1: both gold and predicted scores thresholded at 3.0 (>= 3 is positive)."""
    gold_bin = (np.asarray(gold, dtype=float) >= STS_THRESHOLD).astype(int)
    pred_bin = (np.asarray(pred, dtype=float) >= STS_THRESHOLD).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pct(f1_score(gold_bin, pred_bin, average="binary", zero_division=0))


def sts_value(record: Mapping[str, Any]) -> float:
    """The score of an STS record: ``labels.real-label`` (the official target), else ``labels.label``."""
    labels = record.get("labels") or {}
    value = labels.get("real-label", labels.get("label"))
    if value is None:
        raise ScoringError(f"STS record {record.get('guid')} has no labels.real-label / labels.label")
    return float(value)


def _labels(records: Sequence[Mapping[str, Any]], key: str) -> list[str]:
    values = []
    for record in records:
        if record.get(key) is None:
            raise ScoringError(f"record {record.get('guid')} has no {key!r}")
        values.append(str(record[key]))
    return values


def score_tc(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    aligned = align_by_guid(gold, pred)
    return {"macro_f1": macro_f1(_labels(gold, "label"), _labels(aligned, "label"))}


def score_nli(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    aligned = align_by_guid(gold, pred)
    return {"accuracy": accuracy(_labels(gold, "gold_label"), _labels(aligned, "gold_label"))}


def score_sts(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    aligned = align_by_guid(gold, pred)
    gold_values = [sts_value(r) for r in gold]
    pred_values = [sts_value(r) for r in aligned]
    return {"pearsonr": pearson_r(gold_values, pred_values), "f1": sts_binary_f1(gold_values, pred_values)}
