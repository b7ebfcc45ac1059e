"""A payload as HTML for the review pages' side-by-side comparison: spans marked, trees tabulated, states
listed, never raw JSON.

:func:`payload_html` dispatches on the class of the task type's measure (``TaskType.agreement_measure``), so
a task type that names one of the measure kinds gets its rendering without a word here, and one with a
measure of its own gets the one-line summary (``Measure.describe``) as a chip until it registers a function
(``@payload_html.register``). The measures themselves (:mod:`.measures`) hold only the statistics.

Labels are shown by their display names in the reader's language (``names``: value → name, from
``workspace_strings.label_display``); a value without a name is shown as it is stored.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from functools import singledispatch
from types import MappingProxyType
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from .measures import Measure
from .measures.answers import AnswerMeasure
from .measures.categorical import CategoricalMeasure
from .measures.scores import ScoreMeasure
from .measures.spans import SpanMeasure
from .measures.states import StateMeasure
from .measures.trees import TreeMeasure

#: ``names`` of a caller that shows labels as stored.
NO_NAMES: Mapping[str, str] = MappingProxyType({})
#: Span colours: ``ent-c0`` … ``ent-c5`` in goldset.css, the same classes the NER widget (ner.js) marks with.
SPAN_PALETTE_SIZE = 6


@singledispatch
def payload_summary(measure: Measure, payload: dict[str, Any], names: Mapping[str, str]) -> str:
    """A payload on one line, its labels by their names (the gold list, the adjudication choices). The
    default: the measure's own summary."""
    return measure.describe(payload)


@payload_summary.register
def _label_summary(measure: CategoricalMeasure, payload: dict[str, Any], names: Mapping[str, str]) -> str:
    label = str(payload.get("label", ""))
    return names.get(label, label)


def _score_name(score: Any, names: Mapping[str, str]) -> str:
    """The name of a whole score (``4`` or ``4.0``); half points have none."""
    if isinstance(score, int | float) and not isinstance(score, bool) and float(score).is_integer():
        return names.get(str(int(score)), "")
    return ""


@payload_summary.register
def _score_summary(measure: ScoreMeasure, payload: dict[str, Any], names: Mapping[str, str]) -> str:
    name = _score_name(payload.get("score"), names)
    return f"{payload.get('score')} ({name})" if name else measure.describe(payload)


@payload_summary.register
def _spans_summary(measure: SpanMeasure, payload: dict[str, Any], names: Mapping[str, str]) -> str:
    return ", ".join(f"[{e['start']},{e['end']}) {names.get(str(e['type']), e['type'])}"
                     for e in payload.get("entities") or []) or "—"


@singledispatch
def payload_html(measure: Measure, payload: dict[str, Any], item: dict[str, Any],
                 schema: dict[str, Any], names: Mapping[str, str] = NO_NAMES) -> SafeString:
    """``payload`` (an annotation's or the gold label's) on ``item`` as HTML; ``schema`` is the project's label
    schema, ``names`` its labels' display names. The default: the payload's one-line summary as a chip."""
    return format_html('<span class="chip">{}</span>', payload_summary(measure, payload, names))


@payload_html.register
def _score(measure: ScoreMeasure, payload: dict[str, Any], item: dict[str, Any],
           schema: dict[str, Any], names: Mapping[str, str] = NO_NAMES) -> SafeString:
    name = _score_name(payload.get("score"), names)
    return format_html('<span class="chip score">{}</span> / {}{}', payload.get("score"), schema.get("max", 5),
                       format_html(' <span class="muted">{}</span>', name) if name else "")


def span_colour(label: str, schema: dict[str, Any]) -> str:
    """The palette class of a span label: by its position in the schema's labels (the widget's colours), and
    for a label the schema no longer lists by a hash of the label, so it keeps one colour on every page."""
    labels = [str(label) for label in schema.get("labels") or []]
    index = labels.index(label) if label in labels else zlib.crc32(label.encode("utf-8"))
    return f"ent-c{index % SPAN_PALETTE_SIZE}"


@payload_html.register
def _spans(measure: SpanMeasure, payload: dict[str, Any], item: dict[str, Any],
           schema: dict[str, Any], names: Mapping[str, str] = NO_NAMES) -> SafeString:
    sentence = str(item.get("sentence", ""))
    parts, cursor = [], 0
    for e in sorted(payload.get("entities") or [], key=lambda e: (e["start"], e["end"])):
        label = str(e["type"])
        parts.append(format_html("{}", sentence[cursor:e["start"]]))
        parts.append(format_html('<mark class="ent {}" data-type="{}" title="{}">{}<sub>{}</sub></mark>',
                                 span_colour(label, schema), label, label, sentence[e["start"]:e["end"]],
                                 f"{label} {names[label]}" if label in names else label))
        cursor = e["end"]
    parts.append(format_html("{}", sentence[cursor:]))
    # every part went through format_html, so the joined string is safe
    return format_html('<p class="spans">{}</p>', mark_safe("".join(parts)))


@payload_html.register
def _tree(measure: TreeMeasure, payload: dict[str, Any], item: dict[str, Any],
          schema: dict[str, Any], names: Mapping[str, str] = NO_NAMES) -> SafeString:
    forms = [str(t.get("form", "")) for t in item.get("tokens") or []]
    rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>→ {} {}</td><td>{}</td></tr>", (
        (i + 1, forms[i] if i < len(forms) else "", head, f"({forms[head - 1]})" if 0 < head <= len(forms)
         else f"({_('root')})", format_html('{} <span class="muted">{}</span>', deprel, names[str(deprel)])
         if str(deprel) in names else deprel)
        for i, (head, deprel) in enumerate(zip(payload.get("heads") or [], payload.get("deprels") or [],
                                               strict=False))))
    return format_html('<table class="tree"><thead><tr><th>#</th><th>{}</th><th>{}</th><th>{}</th>'
                       "</tr></thead><tbody>{}</tbody></table>", _("eojeol"), _("head"), _("dependency relation"),
                       rows)


@payload_html.register
def _answer(measure: AnswerMeasure, payload: dict[str, Any], item: dict[str, Any],
            schema: dict[str, Any], names: Mapping[str, str] = NO_NAMES) -> SafeString:
    answer = (payload or {}).get("answer")
    kind = str(payload.get("question_type", ""))
    question = format_html('<p class="question">{}{}</p>', payload["question"],
                           format_html(' <span class="chip">{}</span>', names[kind]) if kind in names else ""
                           ) if payload.get("question") else ""
    if answer is None:
        return format_html('{}<p class="unanswerable">{}</p>', question, _("unanswerable"))
    context, start = str(item.get("context", "")), int(answer.get("start", 0))
    end = start + len(str(answer.get("text", "")))
    before, after = context[max(0, start - 40):start], context[end:end + 40]
    return format_html('{}<p class="answer">…{}<mark>{}</mark>{}… <span class="muted">({})</span></p>',
                       question, before, context[start:end], after,
                       _("from character %(start)s") % {"start": start})


@payload_html.register
def _states(measure: StateMeasure, payload: dict[str, Any], item: dict[str, Any],
            schema: dict[str, Any], names: Mapping[str, str] = NO_NAMES) -> SafeString:
    turns = [str(t.get("text", "")) for t in item.get("dialogue") or [] if t.get("role") == "user"]
    rows = format_html_join("", '<li><span class="muted">{}</span><br>{}</li>', (
        (turns[t] if t < len(turns) else "", ", ".join(state) or "—")
        for t, state in enumerate(payload.get("states") or [])))
    return format_html('<ol class="states">{}</ol>', rows)
