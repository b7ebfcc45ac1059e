"""Bootstrap confidence interval of (baseline − trivial baseline) on the primary metric of dev.

Dev records are resampled with replacement (the same resample for both predictors, so the interval is of a
paired difference) and both predictions are scored on every resample. Every primary metric is a function of
sums of per-record statistics (class counts, hits, per-turn F1 …), so a resample is scored from the records'
statistics weighted by how often it drew each record, not by re-running the scorer: 1,000 resamples cost
about what one scoring does. Seeded: the same records, predictions and seed give the same interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from exports.metrics import classification, dp, dst, get_task_metrics, mrc, ner
from exports.metrics import re as re_metrics
from exports.metrics._common import align_by_guid

from ._base import Records

RESAMPLES = 1000
CONFIDENCE = 0.95
#: Resamples scored at a time (bounds the memory of the resample-count matrix on a large dev split).
_BLOCK = 50

#: Per-record statistics (n × k) and the metric (0–100) of summed statistics (m × k → m).
Stats = tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    resamples: int
    records: int

    def to_dict(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "confidence": CONFIDENCE, "resamples": self.resamples,
                "records": self.records}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)


def _one_hot(values: Sequence[str], kinds: list[str]) -> np.ndarray:
    index = {kind: i for i, kind in enumerate(kinds)}
    out = np.zeros((len(values), len(kinds)))
    out[np.arange(len(values)), [index[v] for v in values]] = 1.0
    return out


def _macro_f1(k: int) -> Callable[[np.ndarray], np.ndarray]:
    """Columns: gold counts, predicted counts, hits per class; the mean F1 over classes seen on either side."""
    def finish(sums: np.ndarray) -> np.ndarray:
        gold, pred, hits = sums[:, :k], sums[:, k:2 * k], sums[:, 2 * k:]
        seen = (gold + pred) > 0
        f1 = _ratio(2 * hits, gold + pred)
        return 100.0 * _ratio((f1 * seen).sum(axis=1), seen.sum(axis=1).astype(float))
    return finish


def tc_stats(dev: Records, predicted: Any) -> Stats:
    gold = classification._labels(dev, "label")
    pred = classification._labels(align_by_guid(dev, predicted), "label")
    kinds = sorted(set(gold) | set(pred))
    g, p = _one_hot(gold, kinds), _one_hot(pred, kinds)
    return np.hstack([g, p, g * p]), _macro_f1(len(kinds))


def nli_stats(dev: Records, predicted: Any) -> Stats:
    gold = classification._labels(dev, "gold_label")
    pred = classification._labels(align_by_guid(dev, predicted), "gold_label")
    stats = np.array([[float(a == b), 1.0] for a, b in zip(gold, pred, strict=True)])
    return stats, lambda s: 100.0 * _ratio(s[:, 0], s[:, 1])


def sts_stats(dev: Records, predicted: Any) -> Stats:
    y = np.array([classification.sts_value(r) for r in dev])
    x = np.array([classification.sts_value(r) for r in align_by_guid(dev, predicted)])
    stats = np.column_stack([x, y, x * x, y * y, x * y, np.ones_like(x)])

    def finish(s: np.ndarray) -> np.ndarray:
        n = s[:, 5]
        mean_x, mean_y = _ratio(s[:, 0], n), _ratio(s[:, 1], n)
        var_x = _ratio(s[:, 2], n) - mean_x ** 2
        var_y = _ratio(s[:, 3], n) - mean_y ** 2
        cov = _ratio(s[:, 4], n) - mean_x * mean_y
        # A constant side has no correlation (the scorer's NaN, counted as 0); rounding leaves ~1e-16.
        defined = (var_x > 1e-12 * (1 + mean_x ** 2)) & (var_y > 1e-12 * (1 + mean_y ** 2))
        return 100.0 * _ratio(cov, np.sqrt(np.where(defined, var_x * var_y, 0.0)))
    return stats, finish


def re_stats(dev: Records, predicted: Any) -> Stats:
    labels = set(re_metrics.RELATIONS) - {re_metrics.NO_RELATION}
    gold = [re_metrics._label(r) for r in dev]
    pred = [re_metrics._label(r) for r in align_by_guid(dev, predicted)]
    stats = np.array([[float(g == p and p in labels), float(p in labels), float(g in labels)]
                      for g, p in zip(gold, pred, strict=True)])
    return stats, lambda s: 100.0 * _ratio(2 * s[:, 0], s[:, 1] + s[:, 2])


def ner_stats(dev: Records, predicted: Any) -> Stats:
    rows: list[tuple[Counter[str], Counter[str], Counter[str]]] = []
    for gold_record, pred_record in zip(dev, align_by_guid(dev, predicted), strict=True):
        chars, gold_tags = ner._tags(gold_record)
        _, pred_tags = ner._tags(pred_record)
        gold_entities = ner.strict_iob2_entities(ner.official_sequence(chars, gold_tags))
        pred_entities = ner.strict_iob2_entities(ner.official_sequence(chars, pred_tags))
        rows.append((Counter(k for k, _, _ in gold_entities), Counter(k for k, _, _ in pred_entities),
                     Counter(k for k, _, _ in gold_entities & pred_entities)))
    kinds = sorted({kind for gold, pred, _ in rows for kind in (*gold, *pred)})
    stats = np.array([[c[k] for c in row for k in kinds] for row in rows]).reshape(len(rows), 3 * len(kinds))
    return stats, _macro_f1(len(kinds))


def dp_stats(dev: Records, predicted: Any) -> Stats:
    stats = []
    for gold_record, pred_record in zip(dev, align_by_guid(dev, predicted), strict=True):
        gold_heads, _ = dp._columns(gold_record)
        pred_heads, _ = dp._columns(pred_record)
        stats.append([sum(a == b for a, b in zip(gold_heads, pred_heads, strict=True)), len(gold_heads)])
    return np.array(stats, dtype=float), lambda s: 100.0 * _ratio(s[:, 0], s[:, 1])


def mrc_stats(dev: Records, predicted: Any) -> Stats:
    stats = []
    for record in dev:
        answer = mrc.normalize_answer(str(predicted[record["guid"]] or ""))
        stats.append([mrc._best(answer, mrc.gold_answers(record), mrc.rouge_w_single), 1.0])
    return np.array(stats, dtype=float), lambda s: 100.0 * _ratio(s[:, 0], s[:, 1])


def dst_stats(dev: Records, predicted: Any) -> Stats:
    stats = []
    for gold_record, pred_record in zip(dev, align_by_guid(dev, predicted), strict=True):
        turns = list(zip(dst.user_states(gold_record), dst.user_states(pred_record), strict=True))
        stats.append([sum(dst.turn_f1(g, p) for g, p in turns), len(turns)])
    return np.array(stats, dtype=float), lambda s: 100.0 * _ratio(s[:, 0], s[:, 1])




def difference_interval(task_slug: str, dev: Records, baseline: Any, trivial: Any, seed: int,
                        resamples: int = RESAMPLES) -> Interval:
    """The percentile bootstrap interval of primary(baseline) − primary(trivial), in points (0–100)."""
    n = len(dev)
    primary_stats = get_task_metrics(task_slug).primary_stats
    ours, finish_ours = primary_stats(dev, baseline)
    theirs, finish_theirs = primary_stats(dev, trivial)
    rng = np.random.default_rng(seed)
    differences = []
    for start in range(0, resamples, _BLOCK):
        draws = rng.integers(0, n, size=(min(_BLOCK, resamples - start), n))
        counts = np.stack([np.bincount(row, minlength=n) for row in draws]).astype(float)
        differences.append(finish_ours(counts @ ours) - finish_theirs(counts @ theirs))
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(np.concatenate(differences), [tail, 100 - tail])
    return Interval(round(float(low), 6), round(float(high), 6), resamples, n)
