"""The official KLUE metrics, keyed by Goldset task slug.

``score(task_slug, gold_records, pred_records)`` returns ``{metric name: value}`` on a 0-100 scale with the
KLUE-baseline model-selection names, plus corrected variants under their own names (docs/metrics.md).
Records are KLUE records as ``datasets_build.klue_formats.iter_klue_records`` yields them; MRC predictions
are ``{guid: answer_text}``. Each task type names its scorer in ``TaskType.metrics``; a new scorer is a module
here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.task_types import MissingLayer, PayloadError, get_task_type

from ._common import ScoringError, finite_or_zero

__all__ = ["ScoringError", "TaskMetrics", "finite_or_zero", "get_task_metrics", "score"]


@dataclass(frozen=True)
class TaskMetrics:
    slug: str
    scorer: Callable[[Sequence[Mapping[str, Any]], Any], dict[str, float]]
    #: The official model-selection keys, in the order KLUE-baseline lists them.
    official: tuple[str, ...]
    #: Plain scores and corrected variants reported beside the official ones.
    extra: tuple[str, ...]
    #: The metric the release check compares against the trivial baseline.
    primary: str
    #: ``(dev, predicted)`` -> (per-record statistics of ``primary``, the function turning their column sums
    #: into the metric): what the release check's bootstrap resamples (``exports.baselines.bootstrap``).
    primary_stats: Callable[[Sequence[Mapping[str, Any]], Any], tuple[Any, Callable[[Any], Any]]]
    #: Predictions are ``{guid: answer_text}`` (KLUE-MRC's) rather than records in the split's format.
    answer_map: bool = False


def get_task_metrics(task_slug: str) -> TaskMetrics:
    """The metrics the task type names (``TaskType.metrics``)."""
    try:
        return get_task_type(task_slug).metrics()
    except (PayloadError, MissingLayer) as exc:
        raise ScoringError(str(exc)) from None


def score(task_slug: str, gold_records: Sequence[Mapping[str, Any]], pred_records: Any) -> dict[str, float]:
    """Score predictions against gold; raises ``ScoringError`` when they cannot be paired."""
    return get_task_metrics(task_slug).scorer(list(gold_records), pred_records)
