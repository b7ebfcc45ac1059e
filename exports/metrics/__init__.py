"""The official KLUE metrics, keyed by Goldset task slug.

``score(task_slug, gold_records, pred_records)`` returns ``{metric name: value}`` on a 0-100 scale with the
KLUE-baseline model-selection names, plus corrected variants under their own names (docs/metrics.md).
Records are KLUE records as ``datasets_build.klue_formats.iter_klue_records`` yields them; MRC predictions
are ``{guid: answer_text}``. A new task type adds a module and one ``TaskMetrics`` row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._common import ScoringError, finite_or_zero
from .classification import score_nli, score_sts, score_tc
from .dp import score_dp
from .dst import score_dst
from .mrc import score_mrc
from .ner import score_ner
from .re import score_re

__all__ = ["METRICS", "ScoringError", "TaskMetrics", "finite_or_zero", "get_task_metrics", "score"]


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


METRICS: dict[str, TaskMetrics] = {
    m.slug: m
    for m in (
        TaskMetrics("tc", score_tc, ("macro_f1",), (), "macro_f1"),
        TaskMetrics("sts", score_sts, ("pearsonr", "f1"), (), "pearsonr"),
        TaskMetrics("nli", score_nli, ("accuracy",), (), "accuracy"),
        TaskMetrics("ner", score_ner, ("entity_macro_f1", "char_macro_f1"), ("char_macro_f1_without_o",),
                    "entity_macro_f1"),
        TaskMetrics("re", score_re, ("micro_f1", "auprc"), ("auprc_present",), "micro_f1"),
        TaskMetrics("dp", score_dp, ("uas_macro_f1", "las_macro_f1"), ("uas", "las"), "uas"),
        TaskMetrics("mrc", score_mrc, ("exact_match", "rouge_w"), ("rouge_w_lcs",), "rouge_w"),
        TaskMetrics("dst", score_dst, ("joint_goal_accuracy", "slot_micro_f1"), ("slot_f1_pooled",),
                    "slot_micro_f1"),
    )
}


def get_task_metrics(task_slug: str) -> TaskMetrics:
    try:
        return METRICS[task_slug]
    except KeyError:
        raise ScoringError(f"unknown task {task_slug!r}; expected one of {', '.join(METRICS)}") from None


def score(task_slug: str, gold_records: Sequence[Mapping[str, Any]], pred_records: Any) -> dict[str, float]:
    """Score predictions against gold; raises ``ScoringError`` when they cannot be paired."""
    return get_task_metrics(task_slug).scorer(list(gold_records), pred_records)
