"""The field's standard formats beside KLUE's: CoNLL-U (DP), CoNLL-2003 BIO (NER), SQuAD v2.0 (MRC),
doccano JSONL (NER, RE) and Label Studio's JSON tasks (NER, RE; its writer is ``labelstudio.py``).

Each writer takes the split's KLUE records (``build_record``'s output, as the KLUE writer does) one at a
time, so none holds the split in memory (SQuAD keeps one passage's questions). :data:`STANDARD_FORMATS`
says which task types each format fits; docs/formats.md shows a record of each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

import orjson
from django.utils.translation import gettext_noop

from annotation.task_types import all_task_types, get_task_type

from .base import WrittenFile, target
from .labelstudio import LabelStudioWriter, write_config


class RecordWriter(Protocol):
    """A streaming writer of KLUE records: ``write`` one record at a time, ``close`` once."""

    kind: str

    def write(self, record: dict[str, Any]) -> None: ...

    def close(self) -> WrittenFile: ...


class _Lines:
    """A text file written line by line under ``<kind>/<split>.<extension>``, counting records."""

    kind = ""
    extension = ""

    def __init__(self, folder: Path, split: str) -> None:
        path, self.relative = target(folder, self.kind, split, self.extension)
        self.split = split
        self.count = 0
        self.out = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed by close()

    def close(self) -> WrittenFile:
        self.out.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)


def _cell(value: Any) -> str:
    """A CoNLL-U cell: no tabs or newlines, ``_`` when empty."""
    text = re.sub(r"[\t\n\r]+", " ", str(value if value is not None else "")).strip()
    return text or "_"


class ConlluWriter(_Lines):
    """CoNLL-U (Universal Dependencies' format): a ``# sent_id`` and ``# text`` comment, then one row per
    eojeol — ID, FORM (KLUE's WORD_FORM), LEMMA (its morphemes joined by ``+``, as the UD Korean treebanks
    write them), UPOS ``_`` (KLUE-DP has no universal tags), XPOS (KLUE's POS, ``NNP+JKS``), FEATS ``_``,
    HEAD, DEPREL (KLUE's label, e.g. ``NP_SBJ``), DEPS and MISC ``_``."""

    kind = "conllu"
    extension = "conllu"

    def write(self, record: dict[str, Any]) -> None:
        forms = record.get("word_form") or []
        heads, deprels = record.get("head") or [], record.get("deprel") or []
        lines = [f"# sent_id = {_cell(record.get('guid'))}", f"# text = {_cell(record.get('sentence'))}"]
        for i, form in enumerate(forms):
            lemma = "+".join(str(record["lemma"][i]).split()) if i < len(record.get("lemma") or []) else ""
            xpos = record["pos"][i] if i < len(record.get("pos") or []) else ""
            head = heads[i] if i < len(heads) else "_"
            deprel = deprels[i] if i < len(deprels) else "_"
            lines.append("\t".join([str(i + 1), _cell(form), _cell(lemma), "_", _cell(xpos), "_", _cell(head),
                                    _cell(deprel), "_", "_"]))
        self.out.write("\n".join(lines) + "\n\n")
        self.count += 1


def conll_tokens(sentence: str, entities: list[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """``(token, BIO tag)`` pairs: the sentence split at whitespace and at every entity boundary, so a
    particle after an entity (``경찰`` ``은``) is its own ``O`` token and no span is lost."""
    cuts: set[int] = set()
    owner: dict[int, tuple[int, str]] = {}
    for start, end, kind in entities:
        cuts.update((start, end))
        for i in range(start, end):
            owner[i] = (start, kind)
    tokens: list[tuple[str, str]] = []
    for match in re.finditer(r"\S+", sentence):
        points = sorted({match.start(), match.end(), *(c for c in cuts if match.start() < c < match.end())})
        for a, b in pairwise(points):
            entity = owner.get(a)
            tag = "O" if entity is None else f"{'B' if entity[0] == a else 'I'}-{entity[1]}"
            tokens.append((sentence[a:b], tag))
    return tokens


def ner_spans(record: dict[str, Any]) -> list[tuple[int, int, str]]:
    """The entities of a KLUE NER record (its character tags) as ``(start, end, type)``, end exclusive."""
    spans: list[tuple[int, int, str]] = []
    for i, tag in enumerate(record.get("tags") or []):
        if tag.startswith("B-"):
            spans.append((i, i + 1, tag[2:]))
        elif tag.startswith("I-") and spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1, spans[-1][2])
    return spans


class ConllWriter(_Lines):
    """CoNLL-2003 layout: ``-DOCSTART- -X- -X- O``, then per sentence one ``token POS chunk NER`` row per
    token (POS and chunk ``_``: KLUE-NER has none) and a blank line; tags are IOB2 (``B-PS``, ``I-PS``)."""

    kind = "conll"
    extension = "txt"

    def __init__(self, folder: Path, split: str) -> None:
        super().__init__(folder, split)
        self.out.write("-DOCSTART- -X- -X- O\n\n")

    def write(self, record: dict[str, Any]) -> None:
        tokens = conll_tokens(record.get("sentence") or "", ner_spans(record))
        self.out.write("".join(f"{token} _ _ {tag}\n" for token, tag in tokens) + "\n")
        self.count += 1


class SquadWriter:
    """SQuAD v2.0 JSON: ``{"version": "v2.0", "data": [{"title", "paragraphs": [{"context", "qas": [...]}]}]}``,
    one question per KLUE record (``id`` its guid; an unanswerable one has ``is_impossible`` true, no
    answers and its ``plausible_answers``). Consecutive records with the same title and context share a
    paragraph (the release writes a passage's questions together); a passage without a question yet has
    an empty ``qas``."""

    kind = "squad"

    def __init__(self, folder: Path, split: str) -> None:
        path, self.relative = target(folder, self.kind, split, "json")
        self.split = split
        self.count = 0
        self.documents = 0
        self.current: dict[str, Any] | None = None
        self.out = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.out.write(b'{"version": "v2.0", "data": [')

    def write(self, record: dict[str, Any]) -> None:
        title, context = record.get("title", ""), record.get("context", "")
        if self.current is None or (self.current["title"], self.current["paragraphs"][0]["context"]) != (
                title, context):
            self._flush()
            self.current = {"title": title, "paragraphs": [{"context": context, "qas": []}]}
        if record.get("question"):
            impossible = bool(record.get("is_impossible"))
            qa: dict[str, Any] = {"id": record.get("guid", ""), "question": record["question"],
                                  "answers": [] if impossible else _answers(record.get("answers")),
                                  "is_impossible": impossible}
            if impossible:
                qa["plausible_answers"] = _answers(record.get("plausible_answers"))
            self.current["paragraphs"][0]["qas"].append(qa)
        self.count += 1

    def _flush(self) -> None:
        if self.current is not None:
            self.out.write((b", " if self.documents else b"") + orjson.dumps(self.current))
            self.documents += 1

    def close(self) -> WrittenFile:
        self._flush()
        self.out.write(b"]}")
        self.out.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)


def _answers(values: Any) -> list[dict[str, Any]]:
    return [{"text": a["text"], "answer_start": a["answer_start"]} for a in values or []
            if isinstance(a, dict) and "text" in a and "answer_start" in a]


def doccano_ner_record(record: dict[str, Any]) -> dict[str, Any]:
    return {"text": record.get("sentence", ""), "label": [list(span) for span in ner_spans(record)],
            "guid": record.get("guid", "")}


def doccano_re_record(record: dict[str, Any]) -> dict[str, Any]:
    """One sentence and its entity pair; the relation (absent while unlabelled) goes from subject to object.
    KLUE's ``end_idx`` is inclusive, doccano's ``end_offset`` exclusive."""
    entities = [{"id": n, "label": e["type"], "start_offset": e["start_idx"], "end_offset": e["end_idx"] + 1}
                for n, e in enumerate((record["subject_entity"], record["object_entity"]))]
    relations = [{"id": 0, "from_id": 0, "to_id": 1, "type": record["label"]}] if record.get("label") else []
    return {"text": record.get("sentence", ""), "entities": entities, "relations": relations,
            "guid": record.get("guid", "")}


class DoccanoWriter(_Lines):
    """doccano's JSONL, which its import reads back: NER ``{"text", "label": [[start, end, type]]}``, RE
    ``{"text", "entities": [{id, label, start_offset, end_offset}], "relations": [{id, from_id, to_id, type}]}``;
    the guid is kept as an extra field (doccano stores it as the example's metadata)."""

    kind = "doccano"
    extension = "jsonl"

    def __init__(self, folder: Path, split: str, task_slug: str) -> None:
        super().__init__(folder, split)
        self.convert = get_task_type(task_slug).doccano_record

    def write(self, record: dict[str, Any]) -> None:
        self.out.write(orjson.dumps(self.convert(record)).decode() + "\n")
        self.count += 1


@dataclass(frozen=True)
class StandardFormat:
    """A release format beyond KLUE's own: how to open its writer, how to load it (the task types it fits
    say so: ``TaskType.standard_formats``)."""

    opener: Callable[[Path, str, str], RecordWriter]
    description: str
    load: str
    #: Files written once per release beside the splits' (from the task type and the project's label schema).
    extras: Callable[[Path, str, dict[str, Any]], list[WrittenFile]] | None = None


#: ``build_release --format`` names of the standard formats.
STANDARD_FORMATS: dict[str, StandardFormat] = {
    "conllu": StandardFormat(lambda folder, split, _: ConlluWriter(folder, split),
                             gettext_noop("CoNLL-U (Universal Dependencies)"),
                             "`conllu.parse_incr(open(path, encoding='utf-8'))`"),
    "conll": StandardFormat(lambda folder, split, _: ConllWriter(folder, split),
                            gettext_noop("CoNLL-2003 BIO (`token POS chunk NER`)"),
                            "the `conll2003` reader: split each line on spaces, token = column 1, tag = column 4"),
    "squad": StandardFormat(lambda folder, split, _: SquadWriter(folder, split),
                            gettext_noop("SQuAD v2.0 JSON"),
                            "`json.load`, or `datasets.load_dataset('json', data_files=path, field='data')`"),
    "doccano": StandardFormat(DoccanoWriter, gettext_noop("doccano JSONL"),
                              "doccano's import (sequence labelling / relation extraction), or `pandas.read_json(path, "
                              "lines=True)`"),
    "labelstudio": StandardFormat(LabelStudioWriter, gettext_noop("Label Studio JSON tasks"),
                                  "Label Studio: a project with the labelling config `labelstudio/config.xml`, then "
                                  "Import the JSON file (its labels come in as annotations); or `json.load`",
                                  write_config),
}


def record_writers(folder: Path, task_slug: str, split: str, formats: list[str]) -> list[RecordWriter]:
    """Writers of the requested standard formats (their fit to the task was checked when the release was
    created)."""
    return [STANDARD_FORMATS[fmt].opener(folder, split, task_slug) for fmt in formats if fmt in STANDARD_FORMATS]


def write_extras(folder: Path, task_slug: str, formats: list[str], label_schema: dict[str, Any]
                 ) -> list[WrittenFile]:
    """The once-per-release files of the requested standard formats."""
    written: list[WrittenFile] = []
    for fmt in formats:
        extras = STANDARD_FORMATS[fmt].extras if fmt in STANDARD_FORMATS else None
        if extras is not None:
            written += extras(folder, task_slug, label_schema)
    return written


def fits(fmt: str, task_slug: str) -> bool:
    """Whether a release of ``task_slug`` can be written in ``fmt`` (every task fits the default formats)."""
    return fmt not in STANDARD_FORMATS or fmt in get_task_type(task_slug).standard_formats


def fitting_tasks(fmt: str) -> list[str]:
    """The task types a standard format fits, in KLUE's order."""
    return [task.slug for task in all_task_types() if fmt in task.standard_formats]


def unfit_formats(task_slug: str, formats: list[str]) -> list[str]:
    """Those of ``formats`` that are standard formats for other task types."""
    return [fmt for fmt in formats if not fits(fmt, task_slug)]
