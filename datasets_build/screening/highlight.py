"""What the screening review shows of an item: the flagged spans marked in their context.

The spans are the item's PII findings (offsets in their text field, after pseudonymization) and the screeners'
hits on the item's text as the annotators will see it. Each span is shown with ``CONTEXT`` characters on either
side; spans whose windows touch share one snippet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.task_types import TaskType

from . import screen_text

CONTEXT = 60

#: How the review page names each PII type and screening category (the stored names are identifiers).
SPAN_NAMES = {
    "rrn": _("resident registration number"), "frn": _("foreigner registration number"), "card": _("card number"),
    "email": _("e-mail address"), "url": _("URL"), "phone": _("phone number"), "account": _("bank account number"),
    "passport": _("passport number"), "driver_license": _("driver's licence number"),
    "vehicle_plate": _("vehicle plate"), "ip": _("IP address"), "address": _("address"), "person": _("person name"),
    "profanity": _("profanity"), "insult": _("insult"), "threat": _("threat or call for violence"),
    "gender": _("gender bias"), "age": _("age bias"), "region": _("regional bias"), "religion": _("religious bias"),
    "nationality": _("nationality bias"), "disability": _("disability bias"), "sexuality": _("sexuality bias"),
}


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    #: ``pii`` or the screener's kind (``toxic``, ``bias``).
    kind: str
    #: The PII type or the screener's category (``phone``, ``threat``, ``gender`` …).
    label: str

    @property
    def name(self) -> str:
        """The label in the reader's language (an unknown label is shown as it is)."""
        return gettext(SPAN_NAMES[self.label]) if self.label in SPAN_NAMES else self.label


@dataclass(frozen=True)
class Piece:
    text: str
    span: Span | None = None


def text_field_starts(task: TaskType, payload: dict[str, Any]) -> dict[str, int]:
    """Where each top-level text field of the item starts in its text (``task.item_text``: the fields that are
    not empty, joined by newlines)."""
    starts: dict[str, int] = {}
    at = 0
    for name in task.text_fields:
        if payload.get(name):
            starts[name] = at
            at += len(str(payload[name])) + 1
    return starts


def item_spans(task: TaskType, payload: dict[str, Any], pii_findings: list[dict[str, Any]]) -> tuple[str, list[Span]]:
    """The item's text (``task.item_text``) and the spans to mark in it, in text order, without overlaps."""
    text = task.item_text(payload)
    bases = text_field_starts(task, payload)
    spans = [Span(bases[f["field"]] + f["start"], bases[f["field"]] + f["end"], "pii", f["type"])
             for f in pii_findings if f.get("field") in bases and "start" in f]
    spans += [Span(hit.start, hit.end, hit.kind, hit.category) for hit in screen_text(text)]
    spans.sort(key=lambda s: (s.start, -s.end))
    kept: list[Span] = []
    for span in spans:
        if span.start < span.end <= len(text) and (not kept or span.start >= kept[-1].end):
            kept.append(span)
    return text, kept


def snippets(text: str, spans: list[Span], context: int = CONTEXT) -> list[list[Piece]]:
    """The marked spans with their context: one list of pieces per snippet; "…" where the text was cut."""
    groups: list[tuple[int, int, list[Span]]] = []
    for span in spans:
        start, end = max(0, span.start - context), min(len(text), span.end + context)
        if groups and start <= groups[-1][1]:
            groups[-1] = (groups[-1][0], end, [*groups[-1][2], span])
        else:
            groups.append((start, end, [span]))
    out = []
    for start, end, members in groups:
        pieces = [Piece("…")] if start else []
        cursor = start
        for span in members:
            pieces += [Piece(text[cursor:span.start]), Piece(text[span.start:span.end], span)]
            cursor = span.end
        pieces.append(Piece(text[cursor:end] + ("…" if end < len(text) else "")))
        out.append([piece for piece in pieces if piece.text])
    return out
