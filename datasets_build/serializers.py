"""API shapes of the dataset-building app."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.models import Item

from . import selectors
from .models import ImportFormat, ImportJob


class ImportJobSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

    class Meta:
        model = ImportJob
        fields = ["id", "file_name", "format", "options", "status", "progress", "items_written",
                  "annotations_written", "errors", "summary", "message", "created_by", "celery_task_id",
                  "created_at", "started_at", "finished_at"]
        read_only_fields = fields

    def get_progress(self, job: ImportJob) -> dict[str, int]:
        return selectors.import_job_progress(job)

    def to_representation(self, job: ImportJob) -> dict[str, Any]:
        data = super().to_representation(job)
        ontology = data["options"].get("ontology")
        if isinstance(ontology, dict):  # its file's name; where the upload is stored is the server's business
            data["options"] = {**data["options"], "ontology": ontology.get("file")}
        return data


class ImportCreateSerializer(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=ImportFormat.values)
    source = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    license = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    pii = serializers.ChoiceField(choices=["pseudonymize", "detect", "off"], required=False, allow_null=True,
                                  default=None)
    encoding = serializers.ChoiceField(choices=["auto", "utf-8", "cp949"], required=False, default="auto")
    duplicates = serializers.ChoiceField(choices=["skip", "refuse"], required=False, default="skip")
    approved_only = serializers.BooleanField(
        required=False, default=False,
        help_text="doccano only: the export was made with \"Export only approved documents\", so an example with "
                  "no labels there was confirmed by its annotator and is labelled with nothing")
    ontology = serializers.FileField(required=False, help_text="WoS (dst) only: the ontology the dialogues come "
                                                               "with (wos-v1.1_ontology.json); it becomes the "
                                                               "project's, and its releases ship it")


class ReviewItemSerializer(serializers.ModelSerializer):
    flags = serializers.SerializerMethodField()
    source = serializers.CharField(source="source.name", default=None, read_only=True)

    class Meta:
        model = Item
        fields = ["id", "external_id", "payload", "screening_status", "pii_findings", "source", "flags"]
        read_only_fields = fields

    def get_flags(self, item: Item) -> list[dict[str, Any]]:
        return [{"id": f.id, "kind": f.kind, "note": f.note, "raised_by": f.user.username if f.user else None}
                for f in getattr(item, "open_flags", [])]


class ReviewDecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["keep", "drop"])
    reason = serializers.CharField(max_length=2000)
