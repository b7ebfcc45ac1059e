"""What every task baseline provides: a trainer and a trivial predictor, both returning a ``Predictor``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Records = Sequence[dict[str, Any]]
#: Maps records of a split to prediction records in the metric's format (MRC: ``{guid: answer}``).
Predictor = Callable[[Records], Any]


@dataclass(frozen=True)
class TaskBaseline:
    """What a task type's ``baseline`` hook returns."""

    #: ``train(train_records, seed, ontology)`` -> predictor; ontology is the WoS ontology or None.
    train: Callable[[Records, int, dict[str, list[str]] | None], Predictor]
    trivial: Callable[[Records], Predictor]
    description: str
    trivial_description: str


def with_label(records: Records, key: str, values: Sequence[Any]) -> list[dict[str, Any]]:
    """Copies of ``records`` with ``key`` set to the predicted value."""
    return [{**r, key: v} for r, v in zip(records, values, strict=True)]


def majority(values: Sequence[Any]) -> Any:
    """The most frequent value; ties go to the value seen first (deterministic)."""
    counts: dict[Any, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return max(counts, key=lambda v: counts[v])


# -- predictions with a confidence (model-assisted annotation) ----------------------------------------------


@dataclass(frozen=True)
class Scored:
    """One prediction with how sure the model is: ``record`` is the prediction in the split's record format
    (MRC: ``{"guid", "answer"}``); ``confidence``, ``margin`` (top-1 minus top-2 probability of the weakest
    decision) and ``entropy`` (normalised to 0..1) are 0..1; ``parts`` holds per-part confidences (spans,
    arcs, turns) where the task has parts."""

    record: dict[str, Any]
    confidence: float
    margin: float
    entropy: float
    parts: list[float] | None = None


class Model:
    """A trained baseline: call it for predictions in the metric's format; :meth:`scored` adds confidences."""

    def __init__(self, predict: Predictor, scored: Callable[[Records], list[Scored]] | None = None) -> None:
        self._predict = predict
        self._scored = scored

    def __call__(self, records: Records) -> Any:
        return self._predict(records)

    def scored(self, records: Records) -> list[Scored]:
        if self._scored is None:
            raise NotImplementedError("this baseline gives no confidences")
        return self._scored(records) if records else []


def probability_stats(probs: Any) -> tuple[Any, Any, Any]:
    """Row-wise (top probability, top-1 − top-2 margin, entropy normalised by log(classes)) of a matrix."""
    import numpy as np

    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim == 1:
        probs = probs[None, :]
    if probs.shape[1] == 1:
        ones = np.ones(len(probs))
        return ones, ones, np.zeros(len(probs))
    ordered = np.sort(probs, axis=1)
    top, second = ordered[:, -1], ordered[:, -2]
    clipped = np.clip(probs, 1e-12, 1.0)
    entropy = -(clipped * np.log(clipped)).sum(axis=1) / np.log(probs.shape[1])
    return top, top - second, np.clip(entropy, 0.0, 1.0)


def softmax(scores: Any) -> Any:
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64)
    shifted = np.exp(scores - scores.max())
    return shifted / shifted.sum()
