"""Label Studio's JSON task format (NER, RE): tasks that its import takes WITH their labels as annotations.

Label Studio imports a doccano-style JSONL line as task data only (``label``, ``entities`` and
``relations`` become fields of ``data``, no annotation; tests/data/interop/README.md), so a release
for Label Studio carries its labels the way Label Studio's own export does: ``annotations[].result``
items of type ``labels`` (``value.start``/``end``/``text``/``labels``, character offsets, end exclusive)
and, for RE, ``relation`` (``from_id``/``to_id``/``labels``). ``labelstudio/config.xml``, written from
the project's label schema, is the labelling config of the project to import them into.

Which kind of task a project's records become is declared on its task type (``TaskType.interop_labels``:
``"spans"`` or ``"relations"``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import orjson

from annotation.task_types import get_task_type, spans_from_tags

from .base import WrittenFile, target

KIND = "labelstudio"
CONFIG_NAME = f"{KIND}/config.xml"
#: The names the results use for the labelling config's tags (``from_name`` / ``to_name``).
LABELS_TAG, TEXT_TAG = "label", "text"


def _span(result_id: str, text: str, start: int, end: int, kind: str) -> dict[str, Any]:
    return {"id": result_id, "from_name": LABELS_TAG, "to_name": TEXT_TAG, "type": "labels",
            "value": {"start": start, "end": end, "text": text[start:end], "labels": [kind]}}


def _task(record: dict[str, Any], result: list[dict[str, Any]]) -> dict[str, Any]:
    """A task and its label (a release's records all have one: its gold) as one annotation."""
    return {"data": {"text": record.get("sentence", ""), "guid": record.get("guid", "")},
            "annotations": [{"result": result}]}


def _spans_task(record: dict[str, Any]) -> dict[str, Any]:
    """An NER record: one ``labels`` result per entity; a labelled sentence without entities has an
    annotation with no result (Label Studio's "submitted, nothing to mark")."""
    text = record.get("sentence", "")
    spans = spans_from_tags(list(text), record["tags"])
    return _task(record, [_span(f"e{n}", text, s["start"], s["end"], s["type"]) for n, s in enumerate(spans)])


def _relations_task(record: dict[str, Any]) -> dict[str, Any]:
    """An RE record: its subject and object entities (KLUE's ``end_idx`` is inclusive) and the relation
    from subject to object."""
    text = record.get("sentence", "")
    result = [_span(name, text, e["start_idx"], e["end_idx"] + 1, e["type"])
              for name, e in (("subject", record["subject_entity"]), ("object", record["object_entity"]))]
    result.append({"from_id": "subject", "to_id": "object", "type": "relation", "direction": "right",
                   "labels": [record["label"]]})
    return _task(record, result)


def _spans_config(schema: dict[str, Any]) -> tuple[list[str], list[str]]:
    return list(schema.get("labels") or []), []


def _relations_config(schema: dict[str, Any]) -> tuple[list[str], list[str]]:
    return list(schema.get("entity_types") or []), list(schema.get("labels") or [])


#: Per ``TaskType.interop_labels``: how a record becomes a task, and which (entity types, relation
#: names) of the project's label schema the labelling config lists.
TASKS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]],
                       Callable[[dict[str, Any]], tuple[list[str], list[str]]]]] = {
    "spans": (_spans_task, _spans_config), "relations": (_relations_task, _relations_config),
}


class LabelStudioWriter:
    """``labelstudio/<split>.json``: a JSON array, one task per line, streamed record by record."""

    kind = KIND

    def __init__(self, folder: Path, split: str, task_slug: str) -> None:
        path, self.relative = target(folder, self.kind, split, "json")
        self.convert = TASKS[get_task_type(task_slug).interop_labels or ""][0]
        self.split = split
        self.count = 0
        self.out = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.out.write(b"[")

    def write(self, record: dict[str, Any]) -> None:
        self.out.write((b",\n" if self.count else b"\n") + orjson.dumps(self.convert(record)))
        self.count += 1

    def close(self) -> WrittenFile:
        self.out.write(b"\n]\n")
        self.out.close()
        return WrittenFile(self.relative, self.kind, self.split, self.count)


def label_config(task_slug: str, label_schema: dict[str, Any]) -> str:
    """The labelling config of a Label Studio project for these tasks: ``Labels`` over ``Text`` (and
    ``Relations`` for RE), listing the project's entity types and relation names."""
    task = get_task_type(task_slug)
    entity_types, relations = TASKS[task.interop_labels or ""][1](label_schema or task.default_schema())
    lines = ["<View>"]
    if relations:
        lines += ["  <Relations>", *(f"    <Relation value={quoteattr(r)}/>" for r in relations), "  </Relations>"]
    lines += [f'  <Labels name="{LABELS_TAG}" toName="{TEXT_TAG}">',
              *(f"    <Label value={quoteattr(t)}/>" for t in entity_types), "  </Labels>",
              f'  <Text name="{TEXT_TAG}" value="${TEXT_TAG}"/>', "</View>"]
    return "\n".join(lines) + "\n"


def write_config(folder: Path, task_slug: str, label_schema: dict[str, Any]) -> list[WrittenFile]:
    """``labelstudio/config.xml`` (once per release, beside the splits' files)."""
    path = folder / CONFIG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(label_config(task_slug, label_schema), encoding="utf-8")
    return [WrittenFile(CONFIG_NAME, KIND)]
