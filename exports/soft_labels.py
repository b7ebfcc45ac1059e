"""Soft labels in a release: each record's label distribution beside its gold label (categorical tasks).

``label_votes`` counts the item's annotations per label (every label of the schema, zeros included), the
votes the gold rule counted. ``label_posteriors`` is the annotator model's posterior of each label where
the gold came from one (Dawid–Skene or MACE, ``GoldLabel.detail["posteriors"]``), else null. Both are
objects keyed by the schema's labels in its order: JSON objects in JSONL, structs in Parquet, JSON text
in CSV. The KLUE and standard formats keep their own layout and never carry them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa

from annotation.gold.rules import MODEL_RULES, rule_for
from annotation.models import GoldLabel, Project
from annotation.services import ServiceError
from annotation.task_types import RecordAnnotation

from .writers.flat import Column, FlatSchema

VOTES = "label_votes"
POSTERIORS = "label_posteriors"


def soft_labels_fit(project: Project) -> bool:
    """Whether the project's gold is one label out of a fixed set (tc, nli, re)."""
    return bool(getattr(rule_for(project.task_type), "categorical", False))


def check_soft_labels(project: Project) -> None:
    """Refuse soft labels for a task whose gold is not one label out of a fixed set."""
    if not soft_labels_fit(project):
        raise ServiceError(f"soft labels apply to the categorical tasks (tc, nli, re), not {project.task_type}",
                           field="soft_labels")


class SoftLabels:
    """Adds the two fields to each record of one release build."""

    def __init__(self, project: Project) -> None:
        rule = rule_for(project.task_type)
        self.field: str = getattr(rule, "field", "label")
        self.project = project
        self.labels = project.task.label_values(project.label_schema or {})
        self.posteriors: dict[int, dict[str, float]] = {}

    def read_posteriors(self) -> None:
        """The model's posteriors as the gold holds them now: read as each items pass starts (a build reads the
        items again when the gold changed meanwhile)."""
        self.posteriors = {
            item_id: detail["posteriors"] for item_id, detail in GoldLabel.objects.filter(
                item__project=self.project, rule__in=list(MODEL_RULES)).values_list("item_id", "detail")
            if isinstance(detail, dict) and isinstance(detail.get("posteriors"), dict)}

    def schema(self, schema: FlatSchema) -> FlatSchema:
        """``schema`` with the two columns after the task's own (``split`` stays last)."""
        votes = pa.struct([pa.field(label, pa.int64()) for label in self.labels])
        posteriors = pa.struct([pa.field(label, pa.float64()) for label in self.labels])
        return dataclasses.replace(schema, columns=(*schema.columns, Column(VOTES, (VOTES,), votes),
                                                    Column(POSTERIORS, (POSTERIORS,), posteriors)))

    def add(self, record: dict[str, Any], item_id: int, annotations: list[RecordAnnotation]) -> None:
        votes = dict.fromkeys(self.labels, 0)
        for annotation in annotations:
            value = annotation.payload.get(self.field)
            if value is not None and str(value) in votes:
                votes[str(value)] += 1
        record[VOTES] = votes
        posterior = self.posteriors.get(item_id)
        record[POSTERIORS] = None if posterior is None else {
            label: float(posterior.get(label, 0.0)) for label in self.labels}

