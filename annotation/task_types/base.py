"""The contract every task type fulfils.

A task type is pure Python: it knows the shape of an item (what annotators see), the shape of an
annotation payload, the default label schema, the stages of work, and how to validate. It imports
nothing from the Django apps at import time, so the registry can be used by importers, exporters and
metrics alike.

It is also the one place that says what every other layer does for the task (docs/ARCHITECTURE.md, "Adding
a task type"): data the layers read (text and span fields, CSV columns, the KLUE file layout, the
suggestion payload, the widget) as class attributes, and the layer's own object (agreement measure, gold
rule, flat export schema, metrics, baseline, synthetic records) from a hook that imports the layer's
building blocks when it is called. A hook the task type does not implement raises :class:`MissingLayer`
naming the layer. Titles are English strings marked with ``gettext_noop`` (Django's translation module
only, which needs no settings), so the ``ko`` catalogue translates them where a page shows them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from django.utils.translation import gettext_noop

#: The stage name used by every single-stage task type.
LABEL_STAGE = "label"
#: The label schema key holding the labels' display names: ``{value: {language: name}}``. Payloads, files
#: and the API keep the values; pages show the name in the reader's language.
LABEL_NAMES = "label_names"
#: Display names a task type ships for its labels: value → {language code: name}.
Names = dict[str, dict[str, str]]


def copy_names(names: Names) -> Names:
    """A copy a project's schema may change without touching the task type's table."""
    return {value: dict(entry) for value, entry in names.items()}


class PayloadError(ValueError):
    """A payload (item or annotation) that breaks the task's rules.

    ``field`` is a dotted/indexed path into the payload (``entities[2].end``); ``message`` says what is
    wrong in words an annotator or a data engineer can act on.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def reject_nul_characters(value: Any, field: str = "") -> None:
    """Refuse U+0000 anywhere in a payload (keys or strings): PostgreSQL cannot store it in text or JSON,
    and no corpus has a legitimate use for it, so it is a clear error rather than a database crash."""
    if isinstance(value, str):
        if "\x00" in value:
            raise PayloadError(field, f"contains a NUL character (U+0000) at position {value.index(chr(0))}; "
                                      "remove control characters from the text")
    elif isinstance(value, dict):
        for key, inner in value.items():
            path = f"{field}.{key}" if field else str(key)
            reject_nul_characters(key, path)
            reject_nul_characters(inner, path)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            reject_nul_characters(inner, f"{field}[{index}]")


class MissingLayer(NotImplementedError):
    """A layer the task type declares nothing for (``layer`` is its name: ``"gold rule"``, ``"metrics"``...)."""

    def __init__(self, layer: str, slug: str) -> None:
        super().__init__(f"task type {slug!r} declares no {layer}")
        self.layer = layer
        self.slug = slug


@dataclass(frozen=True)
class SpanField:
    """Character offsets into an item text field, declared so PII pseudonymization remaps them."""

    #: ``payload`` (the item), ``meta`` or ``annotation`` (each imported annotation's payload).
    where: str
    #: Key of the span object; a trailing ``[]`` means a list of span objects.
    path: str
    #: The item text field the offsets point into.
    text_field: str
    start: str
    #: Key of the end offset, or ``None`` when the end is ``start + len(quote)``.
    end: str | None = None
    #: ``end`` is inclusive (KLUE-RE's ``end_idx``).
    inclusive: bool = False
    #: Key holding the quoted text, refreshed from the new text.
    quote: str | None = None


#: The KLUE file layouts ``datasets_build.klue_formats`` reads and writes.
JSON_ARRAY = "json_array"
CHAR_TSV = "char_tsv"
EOJEOL_TSV = "eojeol_tsv"
SQUAD = "squad"


@dataclass(frozen=True)
class KlueFile:
    """How one task's KLUE files are named and laid out."""

    name: str
    extension: str
    #: :data:`JSON_ARRAY` (one JSON array of records), :data:`CHAR_TSV` (KLUE-NER: a character and its tag
    #: per line), :data:`EOJEOL_TSV` (KLUE-DP: an eojeol row per line) or :data:`SQUAD` (KLUE-MRC's nesting).
    layout: str = JSON_ARRAY
    #: KLUE's line ending for the file (the STS files were written on Windows).
    newline: str = "\n"
    #: The release ships ``<name>-v<version>_ontology.json`` beside the splits (WoS).
    ontology: bool = False


@dataclass(frozen=True)
class Stage:
    """One pass of human work over an item (e.g. NLI writing, then validation)."""

    name: str
    #: In English, marked with ``gettext_noop``: pages show it translated (``annotation.workspace_strings``).
    title: str
    #: Annotations per item in this stage; ``None`` means the project's ``annotators_per_item``.
    annotators: int | None = None
    #: What a writing stage adds to the item for the next stage: (annotation field, item field) pairs.
    #: The first item field marks the stage as done (e.g. an NLI item with a ``hypothesis``).
    produces: tuple[tuple[str, str], ...] = ()

    @property
    def done_marker(self) -> str | None:
        return self.produces[0][1] if self.produces else None


@dataclass(frozen=True)
class GuidelineTemplate:
    """The guideline a new project of this task type starts with (Markdown, published as v1)."""

    instructions: str
    ethics: str
    pii: str


@dataclass(frozen=True)
class RecordAnnotation:
    """A label that came with a corpus record (e.g. one of YNAT's three annotators)."""

    #: The corpus's own annotator id ("18"), or a role name ("author", "label2") where it has none.
    annotator: str
    stage: str
    payload: dict[str, Any]


@dataclass
class ParsedRecord:
    """One KLUE-style record split into what Goldset stores."""

    external_id: str
    payload: dict[str, Any]
    #: Original fields not shown to annotators, kept so an export can rebuild the record exactly.
    meta: dict[str, Any] = field(default_factory=dict)
    split: str = ""
    group_key: str = ""
    annotations: list[RecordAnnotation] = field(default_factory=list)


class TaskType:
    """Base class of a registry entry. Subclasses set the class attributes and override the hooks."""

    slug: ClassVar[str]
    #: The KLUE dataset this task type reproduces (YNAT, KLUE-STS, ...).
    klue_name: ClassVar[str]
    #: In English, marked with ``gettext_noop`` (the ``ko`` catalogue holds its translation): releases and
    #: the API carry it as written, pages show it translated (``annotation.workspace_strings.task_title``).
    title: ClassVar[str]
    #: Position in listings (KLUE's order: tc, sts, nli, ner, re, dp, mrc, dst).
    order: ClassVar[int] = 100
    #: The item fields that hold the text shown to annotators (used for PII screening and dedup).
    text_fields: ClassVar[tuple[str, ...]]
    #: Those of ``text_fields`` that are lists of turns, each turn's text in its ``text`` (a WoS dialogue): the
    #: item search (``annotation.selectors.items_matching``) looks inside the turns.
    turn_fields: ClassVar[tuple[str, ...]] = ()
    stages: ClassVar[tuple[Stage, ...]] = (Stage(LABEL_STAGE, gettext_noop("Label")),)
    #: What another annotation tool's export (doccano, Label Studio) labels for this task type:
    #: ``"categories"``, ``"spans"`` or ``"relations"``; ``None`` when such exports do not import into it.
    interop_labels: ClassVar[str | None] = None
    #: The release formats beyond KLUE's own, JSONL, CSV and Parquet that fit the task
    #: (``exports.writers.standard.STANDARD_FORMATS`` names): ``("conllu",)`` for DP.
    standard_formats: ClassVar[tuple[str, ...]] = ()
    #: Offsets into the text fields carried by items, meta or annotations (remapped when PII is replaced);
    #: required, ``()`` for a task without offsets, so a span task cannot be left un-remapped by omission.
    span_fields: ClassVar[tuple[SpanField, ...]]
    #: The columns a CSV import must have (a nested field by its prefix: ``subject_entity`` for
    #: ``subject_entity.word``).
    csv_columns: ClassVar[tuple[str, ...]]
    #: The KLUE file the task reads and writes.
    klue_file: ClassVar[KlueFile]
    #: The annotation widget: a module under ``annotation/static/`` (``annotation/widgets/tc.js``).
    widget: ClassVar[str]
    #: The widget's stylesheet under ``annotation/static/``, loaded after the workspace's; ``None`` for none.
    widget_styles: ClassVar[str | None] = None
    #: The schema key of the label list a manager may extend with a new label once annotation has started
    #: (``labels``, ``deprels``); ``None`` where the labels are fixed by the KLUE format (MRC question types,
    #: STS scores, the WoS ontology's slots).
    label_list: ClassVar[str | None] = None

    # -- what the other layers use, found here (each raises MissingLayer when not declared) --------

    def declared(self, attribute: str, layer: str) -> Any:
        """A class attribute another layer reads, or :class:`MissingLayer` naming ``layer``."""
        try:
            return getattr(self, attribute)
        except AttributeError:
            raise MissingLayer(layer, self.slug) from None

    def agreement_measure(self) -> Any:
        """The ``annotation.agreement.measures.Measure`` of the task's annotations."""
        raise MissingLayer("agreement measure", self.slug)

    def gold_rule(self) -> Any:
        """The default ``annotation.gold.rules.GoldRule`` turning an item's annotations into gold."""
        raise MissingLayer("gold rule", self.slug)

    def flat_schema(self) -> Any:
        """The ``exports.writers.flat.FlatSchema`` of the JSONL, CSV and Parquet release files."""
        raise MissingLayer("flat export schema", self.slug)

    def metrics(self) -> Any:
        """The ``exports.metrics.TaskMetrics``: the official KLUE scorer and its primary metric."""
        raise MissingLayer("metrics", self.slug)

    def baseline(self) -> Any:
        """The ``exports.baselines.TaskBaseline`` that checks a release (and trains the suggester)."""
        raise MissingLayer("baseline", self.slug)

    def widget_strings(self) -> dict[str, str]:
        """The widget's interface text in the request's language, beside the workspace's own (keys prefixed
        with the slug by convention)."""
        return {}

    def suggestion_payload(self, record: dict[str, Any], item: dict[str, Any], schema: dict[str, Any]
                           ) -> dict[str, Any]:
        """The annotation payload a model suggests, from its prediction record (the split's KLUE record)."""
        raise MissingLayer("suggestion payload", self.slug)

    def doccano_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """The release record as a line of doccano's JSONL (for task types offering the ``doccano`` format)."""
        raise MissingLayer("doccano record", self.slug)

    def synthetic_record(self, rng: random.Random, n: int) -> dict[str, Any]:
        """The ``n``-th record of a seeded synthetic release: a templated KLUE record (the shape
        ``iter_klue_records`` yields) whose label its text gives away, for the baselines' self-tests, the
        release-check tests and the benchmarks (``exports/baselines/synthetic.py``)."""
        raise MissingLayer("synthetic records", self.slug)

    def synthetic_ontology(self) -> dict[str, list[str]] | None:
        """The ontology a synthetic release ships beside its splits: required when the KLUE file has one."""
        if self.declared("klue_file", "KLUE file layout").ontology:
            raise MissingLayer("synthetic ontology", self.slug)
        return None

    def prediction_record(self, record: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
        """The KLUE record of an unannotated item as the baseline reads it (``build_record`` without gold);
        task types whose records need label columns to be read fill them with a neutral value."""
        return record

    def complete_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """An imported record before :meth:`parse_record`: task types that can start from raw text (DP from a
        sentence) fill in what annotators start from; the default keeps the record."""
        return record

    def default_schema(self) -> dict[str, Any]:
        """The project's label schema when it is created (editable afterwards); it carries
        :meth:`default_label_names` under :data:`LABEL_NAMES`."""
        raise NotImplementedError

    def default_label_names(self) -> Names:
        """The Korean and English display names the task type ships for its default labels."""
        return {}

    def label_values(self, schema: dict[str, Any]) -> list[str]:
        """The label values of ``schema`` that may carry a display name (as strings, the schema's JSON keys);
        the default: the entries of :attr:`label_list`."""
        values = schema.get(self.label_list) if self.label_list else None
        return [str(value) for value in values] if isinstance(values, list) else []

    def default_labels(self) -> list[str]:
        """The task type's own labels in KLUE's order (:meth:`label_values` of :meth:`default_schema`), whatever a
        project's schema adds: what the official scorers and the baselines index by."""
        return self.label_values(self.default_schema())

    def label_display(self, schema: dict[str, Any], language: str) -> dict[str, str]:
        """Each label value's name in ``language`` (``ko``, ``en``): the schema's own name, else the one the
        task type ships; values with neither are left out (pages show the value)."""
        ours = schema.get(LABEL_NAMES)
        ours = ours if isinstance(ours, dict) else {}
        shipped = self.default_label_names()
        names: dict[str, str] = {}
        for value in (*self.label_values(schema), *ours):
            for source in (ours, shipped):
                entry = source.get(value)
                name = entry.get(language) if isinstance(entry, dict) else None
                if isinstance(name, str) and name.strip():
                    names[value] = name
                    break
        return names

    def guideline_template(self) -> GuidelineTemplate:
        raise NotImplementedError

    def validate_item(self, payload: Any) -> dict[str, Any]:
        """Check an item payload; return it normalised or raise :class:`PayloadError`."""
        raise NotImplementedError

    def validate_annotation(
        self, payload: Any, *, item: dict[str, Any], schema: dict[str, Any], stage: str
    ) -> dict[str, Any]:
        """Check an annotation payload against its item and the project's schema.

        Returns the normalised payload or raises :class:`PayloadError` naming the field.
        """
        raise NotImplementedError

    def parse_record(self, record: dict[str, Any]) -> ParsedRecord:
        """Turn one KLUE-style record (from a KLUE file, a JSONL line or a CSV row) into an item and the
        labels it carries; raise :class:`PayloadError` naming the field when the record is malformed."""
        raise NotImplementedError

    def parse_tool_record(self, record: dict[str, Any]) -> ParsedRecord:
        """:meth:`parse_record` for a record made from another annotation tool's export (``interop_labels``),
        whose labels come per author from the tool's own label fields: the record's text is text, and nothing
        in it is read as a label. Task types whose text fields carry no label syntax keep this default."""
        return replace(self.parse_record(record), annotations=[])

    def validate_carried(self, meta: dict[str, Any], *, item: dict[str, Any], schema: dict[str, Any]) -> None:
        """Check the fields a record carries past its annotations (``meta`` of :meth:`parse_record`, and item
        fields no annotation covers) that :meth:`build_record` writes back into a release: NLI's
        ``gold_label``, STS's ``labels``, MRC's answer lists… Raise :class:`PayloadError` naming the field,
        as for an annotation, so the importer refuses the record instead of publishing the value later.
        Task types whose carried fields are all re-derived from checked annotations keep this default."""

    def build_record(
        self, *, external_id: str, payload: dict[str, Any], meta: dict[str, Any],
        annotations: list[RecordAnnotation], gold: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """The inverse of :meth:`parse_record`: the KLUE record, field names and order as KLUE has them."""
        raise NotImplementedError

    def annotator_view(self, payload: dict[str, Any], stage: str) -> dict[str, Any]:
        """The item as an annotator in this stage may see it (blind: nothing that reveals others' labels)."""
        return payload

    def apply_stage_output(
        self, item: dict[str, Any], stage: str, annotation: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The item payload after a writing stage's annotation, or ``None`` when the stage adds nothing."""
        produces = self.stage(stage).produces
        if not produces:
            return None
        return {**item, **{item_field: annotation.get(field) for field, item_field in produces}}

    # -- model-assisted annotation ------------------------------------------------------------

    @property
    def suggestion_stages(self) -> tuple[str, ...]:
        """The stages a suggester may pre-fill: labelling stages, never a writing stage (a model does not
        write hypotheses or questions for people)."""
        return tuple(s.name for s in self.stages if not s.produces)

    def suggestion_parts(self, suggested: dict[str, Any], annotated: dict[str, Any]) -> dict[str, Any]:
        """Which parts of a shown suggestion the annotator kept, part by part.

        Both payloads are normalised (validated). Returns ``{"unit", "accepted", "changed", "added",
        "parts": [...]}``: counts of suggested parts kept as they were, suggested parts changed or removed,
        parts the annotator added, and one entry per part. Task types with structured payloads (spans,
        arcs, states) override this; the default treats the whole payload as one part.
        """
        same = suggested == annotated
        return {"unit": "payload", "accepted": int(same), "changed": int(not same), "added": 0,
                "parts": [{"part": "payload", "status": "accepted" if same else "changed"}]}

    # -- helpers shared by the subclasses -------------------------------------------------------

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise PayloadError("stage", f"unknown stage {name!r} for {self.slug}; expected one of "
                           f"{', '.join(s.name for s in self.stages)}")

    def item_text(self, payload: dict[str, Any]) -> str:
        """All annotator-visible text of an item joined by newlines (for screening and hashing)."""
        return "\n".join(str(payload.get(f, "")) for f in self.text_fields if payload.get(f))

    def describe(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "klue_name": self.klue_name,
            "title": self.title,
            "stages": [
                {"name": s.name, "title": s.title, "annotators": s.annotators, "produces": s.done_marker}
                for s in self.stages
            ],
            "default_schema": self.default_schema(),
            "label_list": self.label_list,
        }
