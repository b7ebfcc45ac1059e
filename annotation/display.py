"""Human names for the identifiers Goldset stores: the one place that turns ``krippendorff_alpha``,
``needs_adjudication``, ``span_majority`` or ``start_idx`` into words of the reader's language.

Stored identifiers stay as they are in the database, the files, the API and the management commands' JSON;
pages show them through :func:`display_name` (templates: ``{{ value|display:"coefficient" }}``). An identifier
without a name here is shown as it is, which the Korean page test (tests/site/test_korean_console.py) reports.

The agreement and gold code stores a few sentences in English (a coefficient left out, a gold rule that could not
decide); :func:`display_message` matches them against :data:`MESSAGES` and gives them in the reader's language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from django.db.models import TextChoices
from django.utils.functional import Promise
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

NAMES: dict[str, dict[str, Promise]] = {
    # Coefficients of the agreement report (Coefficient.name) and the pair matrix's metrics.
    "coefficient": {
        "krippendorff_alpha": _("Krippendorff's alpha"),
        "krippendorff_alpha_slots": _("Krippendorff's alpha over slots"),
        "krippendorff_alpha_heads": _("Krippendorff's alpha over heads"),
        "krippendorff_alpha_deprels": _("Krippendorff's alpha over dependency relations"),
        "krippendorff_alpha_answerable": _("Krippendorff's alpha on answerability"),
        "krippendorff_alpha_unitizing": _("Krippendorff's unitizing alpha (partial credit for boundaries)"),
        "fleiss_kappa": _("Fleiss' kappa"),
        "pairwise_cohen_kappa": _("Cohen's kappa, mean over pairs"),
        "pairwise_entity_f1": _("entity F1, mean over pairs"),
        "pairwise_char_f1": _("character F1, mean over pairs"),
        "pairwise_exact_match": _("exact match, mean over pairs"),
        "pairwise_uas": _("UAS, mean over pairs"),
        "pairwise_las": _("LAS, mean over pairs"),
        "pairwise_pearson": _("Pearson's r, mean over pairs"),
        "pairwise_spearman": _("Spearman's rho, mean over pairs"),
        "pairwise_joint_goal": _("joint goal agreement, mean over pairs"),
        "cohen_kappa": _("Cohen's kappa"),
        "entity_f1": _("entity F1"),
        "char_f1": _("character F1"),
        "exact_match": _("exact match"),
        "uas": _("UAS"),
        "las": _("LAS"),
        "pearson_r": _("Pearson's r"),
        "pearson": _("Pearson's r"),
        "spearman": _("Spearman's rho"),
        "joint_goal": _("joint goal agreement"),
    },
    # Labels the agreement measures make of an answer (MRC: whether the annotator gave one).
    "measure_label": {
        "answerable": _("answered"),
        "unanswerable": _("no answer"),
        # the one category of MRC's answer spans (the unitizing alpha's per_category)
        "answer": _("answer"),
    },
    # What a guideline revision did to agreement (report["guideline_versions"]["changes"][…]["verdict"]).
    "agreement_change": {
        "improved": _("helped"),
        "worsened": _("made it worse"),
        "no_clear_difference": _("no clear difference"),
        "too_few_items": _("too few items to tell"),
    },
    # Kinds of span disagreement between two annotators (annotation/agreement/slips.py).
    "disagreement_kind": {
        "boundary_slip": _("boundary slip"),
        "type_mismatch": _("different type"),
        "missed_span": _("span marked by one only"),
    },
    # What the per-label breakdown's categories are (report["per_label"]["kind"]).
    "category_kind": {
        "label": _("label"),
        "score band": _("score band"),
        "entity type": _("entity type"),
        "answer": _("answer span"),
        "slot": _("slot"),
        "relation": _("dependency relation"),
    },
    # How a release's items were split (Release.splits["mode"]).
    "split_mode": {
        "ratios": _("by ratios"),
        "keep": _("the items' own splits kept"),
    },
    # Levels of measurement.
    "level": {
        "nominal": _("nominal"),
        "ordinal": _("ordinal"),
        "interval": _("interval"),
        "ratio": _("ratio"),
    },
    # Why items were left out of the agreement report (report["items_excluded"]).
    "exclusion": {
        "flagged": _("flagged or held in screening"),
        "skipped": _("skipped by annotators"),
        "fewer_than_2_annotations": _("fewer than 2 annotations"),
    },
    # Gold rules (GoldLabel.rule, TaskType.gold_rule) and the rules a person applies.
    "rule": {
        "majority": _("majority vote"),
        "mean": _("mean score"),
        "span_majority": _("span majority"),
        "exact_majority": _("majority of identical answers"),
        "dawid_skene": _("Dawid–Skene model"),
        "mace": _("MACE model"),
        "adjudication": _("adjudication"),
        "known_answer": _("known answer"),
    },
    # Annotation stages (TaskType.stages).
    "stage": {
        "label": _("labelling"),
        "writing": _("writing"),
        "validation": _("validation"),
    },
    # Audit actions (AuditEvent.action).
    "action": {
        "create": _("created"),
        "update": _("changed"),
        "publish": _("published"),
        "delete": _("deleted"),
        "import": _("imported"),
        "adjudicate": _("adjudicated"),
        "set_known_answer": _("known answer set"),
        "clear_known_answer": _("known answer removed"),
        "keep": _("kept"),
        "drop": _("dropped"),
        "bulk keep": _("kept (several items)"),
        "bulk drop": _("dropped (several items)"),
        "add_reference": _("contamination reference added"),
        "remove_reference": _("contamination reference removed"),
        "check_contamination": _("checked for contamination"),
        "assign_splits": _("splits given"),
        "assign": _("assigned to annotators"),
        "unassign": _("opened to every annotator"),
    },
    # Fields of item payloads, annotation payloads and audit details.
    "field": {
        "sentence": _("sentence"), "sentence1": _("sentence 1"), "sentence2": _("sentence 2"),
        "title": _("title"), "premise": _("premise"), "hypothesis": _("hypothesis"), "question": _("question"),
        "context": _("passage"), "answer": _("answer"), "answers": _("answers"), "score": _("score"),
        "label": _("label"), "second": _("second label"), "third": _("third label"), "labels": _("labels"),
        "entities": _("entities"), "subject_entity": _("subject entity"), "object_entity": _("object entity"),
        "heads": _("heads"), "deprels": _("dependency relations"), "states": _("dialogue states"),
        "dialogue": _("dialogue"), "tokens": _("eojeol"), "domains": _("domains"),
        "question_type": _("question type"), "is_impossible": _("unanswerable"), "plausible": _("plausible answer"),
        "plausible_answers": _("plausible answers"), "real_label": _("score (real number)"),
        "binary_label": _("binary label"), "guid": _("corpus id"), "source": _("source"), "url": _("address"),
        "date": _("date"), "news_category": _("news section"),
        "predefined_news_category": _("news section given by the publisher"), "word": _("word"),
        "start_idx": _("start"), "end_idx": _("end"), "start": _("start"), "end": _("end"), "type": _("type"),
        "text": _("text"), "gold_label": _("gold label"),
        "item": _("item"), "stage": _("stage"), "payload": _("answer"), "version": _("version"),
        "instructions": _("instructions"), "ethics": _("ethics"), "pii": _("personal information"),
        "change_note": _("change note"), "current_version": _("current version"), "published_at": _("published at"),
        "file": _("file"), "format": _("format"), "formats": _("formats"), "items": _("items"),
        "annotations": _("annotations"), "splits": _("splits"), "mode": _("mode"), "ratios": _("ratios"),
        "seed": _("seed"), "status": _("status"), "reason": _("reason"), "by": _("by"),
        "accepted_annotation": _("accepted annotation"), "screening_status": _("screening status"),
        "selection": _("selection"), "item_ids": _("items"), "override_reason": _("reason for publishing anyway"),
        "train": _("train"), "dev": _("dev"), "test": _("test"),
        "options": _("options"), "budget": _("annotation budget"), "rules": _("rules"), "k": _("annotators per item"),
        "annotators_per_item": _("annotators per item"), "split": _("split"), "sample": _("sample"),
        "annotators": _("annotators"), "first_item": _("first item"), "last_item": _("last item"),
    },
}


def _choices() -> dict[str, type[TextChoices]]:
    """Kinds whose names are a model's choices (their labels are the names)."""
    from .models import AssignmentStatus, FlagKind, GoldStatus, JobStatus, Role, ScreeningStatus

    return {"gold_status": GoldStatus, "screening_status": ScreeningStatus, "assignment_status": AssignmentStatus,
            "job_status": JobStatus, "role": Role, "flag_kind": FlagKind}


def display_name(kind: str, value: Any) -> str:
    """The human name of a stored identifier of this kind, in the request's language (the identifier itself
    when it has none)."""
    if value is None or value == "":
        return ""
    if kind not in NAMES:
        return display_choice(_choices()[kind], value)
    name = NAMES[kind].get(str(value))
    return str(name) if name is not None else str(value)


def display_choice(choices: type[TextChoices], value: Any) -> str:
    """The label of a model's choice (``GoldStatus``, ``ScreeningStatus``…) for a stored value."""
    try:
        return str(choices(value).label)
    except ValueError:
        return str(value)


# -- counts with their unit --------------------------------------------------------------------------

UNITS: dict[str, Callable[[int], str]] = {
    "item": lambda n: ngettext("%(n)s item", "%(n)s items", n) % {"n": n},
    "character": lambda n: ngettext("%(n)s character", "%(n)s characters", n) % {"n": n},
    "eojeol": lambda n: ngettext("%(n)s eojeol", "%(n)s eojeol", n) % {"n": n},
    "turn × slot": lambda n: ngettext("%(n)s turn × slot", "%(n)s turns × slots", n) % {"n": n},
}


def units_text(n: int, unit: str) -> str:
    """``136 items`` / ``항목 136개``: a coefficient's units with their name, counted in the reader's language."""
    return UNITS[unit](n) if unit in UNITS else f"{n} {unit}"


# -- sentences the agreement and gold code stores in English ---------------------------------------------------

#: Python's names of the types a JSON value takes, as the file's reader calls them.
JSON_TYPES = {"dict": _("an object"), "list": _("a list"), "str": _("a string"), "int": _("a number"),
              "float": _("a number"), "bool": _("true or false"), "null": _("null"),
              "NoneType": _("null")}
MESSAGES: list[tuple[re.Pattern[str], Promise]] = [
    (re.compile(r"no label reached (?P<n>\d+) votes"), _("no label reached %(n)s votes")),
    (re.compile(r"tie between the top labels"), _("tie between the top labels")),
    (re.compile(r"(?P<n>\d+) span\(s\) marked by exactly half of the annotators"),
     _("%(n)s span(s) marked by exactly half of the annotators")),
    (re.compile(r"no answer was given by more than half of the annotators"),
     _("no answer was given by more than half of the annotators")),
    (re.compile(r"posterior (?P<p>[\d.]+) below (?P<min>[\d.]+)"),
     _("the model's confidence %(p)s is below %(min)s")),
    (re.compile(r"flagged or dropped in screening"), _("flagged or dropped in screening")),
    (re.compile(r"no item is complete yet \(k annotations in every stage\)"),
     _("no item is complete yet (k annotations in every stage)")),
    (re.compile(r"items have different numbers of raters; Fleiss' kappa needs the same number"),
     _("items have different numbers of raters; Fleiss' kappa needs the same number")),
    (re.compile(r"too many distinct label combinations across pairs for the bootstrap"),
     _("too many distinct label combinations across pairs for the bootstrap")),
    (re.compile(r"no item has two annotations of this kind"), _("no item has two annotations of this kind")),
    # Which items a bulk screening decision took (the audit's "selection").
    (re.compile(r"chosen items"), _("the items chosen on the page")),
    (re.compile(r"all matching kind=any"), _("every item in the review queue")),
    (re.compile(r"all matching kind=(?P<kind>\w+)"), _("every item in the review queue flagged as %(kind)s")),
    # The agreement report's progress notes (Job.progress_note).
    (re.compile(r"reading annotations"), _("reading annotations")),
    (re.compile(r"computing coefficients"), _("computing coefficients")),
    (re.compile(r"scoring annotators"), _("scoring annotators")),
    (re.compile(r"building the timeline"), _("building the timeline")),
    (re.compile(r"splitting assisted and unassisted annotations"),
     _("splitting assisted and unassisted annotations")),
    # How the disagreement list measures disagreement (MeasureResult.disagreement_name).
    (re.compile(r"entropy of the labels \(0 = unanimous, 1 = uniform\)"),
     _("entropy of the labels (0 = unanimous, 1 = evenly split)")),
    (re.compile(r"standard deviation of the scores \(points\)"), _("standard deviation of the scores (points)")),
    (re.compile(r"1 − character F1 between the annotators' answers"),
     _("1 − character F1 between the annotators' answers")),
    (re.compile(r"1 − entity F1 between the annotators' spans"), _("1 − entity F1 between the annotators' spans")),
    (re.compile(r"1 − share of user turns with identical states"),
     _("1 − share of user turns with identical states")),
    (re.compile(r"1 − LAS between the annotators"), _("1 − LAS between the annotators")),
    (re.compile(r"1 − exact match between the annotators"), _("1 − exact match between the annotators")),
    # Refusals a background job records (an import's errors, a release's build error).
    # An import's most frequent record errors (the task types' payload checks, a line that is not JSON).
    (re.compile(r"is required"), _("is required")),
    (re.compile(r"must not be empty"), _("must not be empty")),
    (re.compile(r"must be an object, got (?P<type>\w+)"), _("must be an object, not %(type)s")),
    (re.compile(r"must be a list, got (?P<type>\w+)"), _("must be a list, not %(type)s")),
    (re.compile(r"must be a string, got (?P<type>\w+)"), _("must be a string, not %(type)s")),
    (re.compile(r"each line must be a JSON object, got (?P<type>\w+)"),
     _("each line must be a JSON object, not %(type)s")),
    (re.compile(r"invalid JSON: .*\bline \d+ column (?P<column>\d+).*"),
     _("not valid JSON (from character %(column)s of the line)")),
    (re.compile(r"the file holds no records: nothing was imported"),
     _("the file holds no records: nothing was imported")),
    (re.compile(r"nothing to release: none of the (?P<n>\d+) releasable records of (?P<project>\S+) carries a label "
                r"\((?P<field>[^)]+)\); compute or adjudicate the gold first"),
     _("nothing to release: none of the %(n)s releasable records of %(project)s carries a label (%(field)s); "
       "compute or adjudicate the gold first")),
]


def display_message(text: Any) -> str:
    """A sentence the agreement or gold code stored in English, in the reader's language (unknown ones as they
    are)."""
    if not text:
        return ""
    text = str(text)
    for pattern, template in MESSAGES:
        if match := pattern.fullmatch(text):
            values = match.groupdict()
            if "kind" in values:  # a flag's kind, by its name
                values["kind"] = display_name("flag_kind", values["kind"])
            if "type" in values:  # a JSON value's type, as a reader of the file calls it
                values["type"] = str(JSON_TYPES.get(values["type"], values["type"]))
            return str(template) % values if values else str(template)
    return text


# -- annotators ---------------------------------------------------------------------------------------------

#: The original id an import gives a corpus's own label that names no annotator (``<source>:corpus``).
CORPUS_ANNOTATOR = "corpus"


def annotator_name(username: str) -> str:
    """A user as the review pages name them. A corpus's own labels were imported as users named
    ``<source or project>:<original id>`` (a ':' no account name can hold: Django's username validator refuses
    it): they are shown as what they are, the corpus's labels, not as a person."""
    username = str(username)
    prefix, colon, original = username.rpartition(":")
    if not colon or not prefix:
        return username
    if original == CORPUS_ANNOTATOR:
        return gettext("labels from the source corpus")
    return gettext("corpus annotator %(id)s") % {"id": original[:8]}


# -- structured values as text --------------------------------------------------------------------------------

Summary = Callable[[dict[str, Any]], str]
#: Fields holding a whole text (a guideline's sections): their length is shown, the text is on its own page.
LONG_TEXTS = ("instructions", "ethics", "pii")


def value_text(value: Any, *, summary: Summary | None = None, limit: int = 120) -> str:
    """A stored value (a payload, an audit detail) as a line of text: fields by their human names, answers by the
    task's summary, long texts shortened; never JSON."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit - 1] + "…"
    if isinstance(value, list | tuple):
        if len(value) > 12:
            shown = ", ".join(value_text(v, summary=summary, limit=40) for v in value[:12])
            return gettext("%(shown)s … (%(n)s in all)") % {"shown": shown, "n": len(value)}
        return ", ".join(value_text(v, summary=summary, limit=40) for v in value) or "—"
    if isinstance(value, Mapping):
        return " · ".join(f"{display_name('field', key)}: {field_text(key, inner, summary=summary, limit=limit)}"
                          for key, inner in value.items())
    return str(value)


def field_text(key: str, value: Any, *, summary: Summary | None = None, limit: int = 120) -> str:
    """One field's value: an answer (``payload``) by the task's summary, a status or stage by its name."""
    if key == "payload" and isinstance(value, Mapping) and summary is not None:
        return summary(dict(value)) or "—"
    if key == "stage":
        return display_name("stage", value)
    if key == "mode":
        return display_name("split_mode", value)
    if key == "selection":
        return display_message(value)
    if key in LONG_TEXTS and isinstance(value, str):
        return ngettext("%(n)s character", "%(n)s characters", len(value)) % {"n": len(value)}
    if key in ("status", "screening_status") and isinstance(value, str):
        for kind in ("gold_status", "screening_status"):
            if value in _choices()[kind].values:
                return display_name(kind, value)
    return value_text(value, summary=summary, limit=limit)


def item_facts(payload: Mapping[str, Any], *,
               hidden: tuple[str, ...] = ("tokens", "dialogue")) -> list[tuple[str, str]]:
    """An item's fields as (name, text) rows for the review pages; ``hidden`` ones are shown otherwise."""
    return [(display_name("field", key), field_text(key, value)) for key, value in payload.items()
            if value not in (None, "", [], {}) and key not in hidden]
