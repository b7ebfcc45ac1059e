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
    slug: str
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
