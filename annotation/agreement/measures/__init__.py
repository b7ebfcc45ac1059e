"""Per-task agreement measures: which coefficients a task reports, and how payloads become units.

Each task type names its measure (``TaskType.agreement_measure``, one of the kinds below or its own);
:func:`measure_for` finds it, so nothing here branches on task slugs.

Every measure works on the frame of :mod:`..data` (one row per item × annotator, with the payload keys
it declared in ``fields``) and returns a :class:`MeasureResult`: the coefficients with bootstrap
intervals, an annotator × annotator agreement matrix, each annotator's agreement with the others,
and a disagreement score per item.

The statistics only; the HTML of a payload on the review pages is in :mod:`..rendering`.

=================  ===================================================================================
``base``           the :class:`Measure` interface, :class:`MeasureResult`, helpers of the frame
``pairwise``       pairwise agreement over structured answers and :class:`~.pairwise.StructuredMeasure`
``categorical``    one label per item: :class:`~.categorical.CategoricalMeasure`
``scores``         a number per item: :class:`~.scores.ScoreMeasure`
``spans``          character spans: :class:`~.spans.SpanMeasure`
``trees``          dependency trees: :class:`~.trees.TreeMeasure`
``answers``        answer spans in a context: :class:`~.answers.AnswerMeasure`
``states``         dialogue states: :class:`~.states.StateMeasure`
=================  ===================================================================================
"""

from __future__ import annotations

from ...task_types import MissingLayer, PayloadError, get_task_type
from .base import Headline, Measure, MeasureResult

__all__ = ["Headline", "Measure", "MeasureResult", "measure_for"]


def measure_for(slug: str) -> Measure:
    """The measure the task type names (``TaskType.agreement_measure``)."""
    try:
        return get_task_type(slug).agreement_measure()
    except (PayloadError, MissingLayer) as exc:
        raise LookupError(f"no agreement measure for task type {slug!r}") from exc
