"""Helpers shared by the per-task metric modules."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class ScoringError(ValueError):
    """Gold and predictions that cannot be scored together (missing guid, wrong length, bad label)."""


def pct(value: float) -> float:
    """The official scorer reports every metric on a 0-100 scale."""
    return float(value) * 100.0


def finite_or_zero(value: float) -> float:
    """Undefined metrics (NaN, e.g. Pearson r of a constant prediction) count as 0 in comparisons."""
    return 0.0 if value is None or math.isnan(value) else float(value)


def align_by_guid(gold: Sequence[Mapping[str, Any]], pred: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The prediction for each gold record, in gold order; every gold guid must be predicted."""
    by_guid: dict[str, Mapping[str, Any]] = {}
    for record in pred:
        guid = record.get("guid")
        if guid is None:
            raise ScoringError("a prediction record has no guid")
        by_guid[str(guid)] = record
    missing = [str(g["guid"]) for g in gold if str(g["guid"]) not in by_guid]
    if missing:
        raise ScoringError(f"{len(missing)} gold record(s) have no prediction, first: {missing[0]}")
    return [by_guid[str(g["guid"])] for g in gold]
