"""Shapes of API requests and responses; validation of payloads is the task type's job."""

from __future__ import annotations

import copy
from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .. import selectors
from ..models import (
    Annotation,
    Assignment,
    AuditEvent,
    Flag,
    FlagKind,
    FlagResolution,
    Guideline,
    Item,
    Membership,
    Project,
    Role,
)
from ..project_settings import label_schema_validate, options_validate
from ..services import ServiceError, project_changes_checked
from ..task_types import slugs


class ProjectSerializer(serializers.ModelSerializer):
    task_type = serializers.ChoiceField(choices=[])
    annotators_per_item = serializers.IntegerField(min_value=1, max_value=50, default=3)

    class Meta:
        model = Project
        fields = ["id", "name", "slug", "description", "task_type", "annotators_per_item", "label_schema",
                  "options", "created_at"]
        read_only_fields = ["id", "created_at"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["task_type"].choices = slugs()
        if self.instance is not None:
            self.fields["task_type"].read_only = True
            self.fields["slug"].read_only = True

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Options and label schema checked as the services check them, the error keyed by the bad field
        (``options.lease_minutes``), so nothing that would break ``next/`` or a submission is stored. A change
        to a project is checked by the settings page's service (``services.project_changes_checked``), which
        also refuses what annotation has locked (a 409 with the reason)."""
        if self.instance is not None:
            try:
                project_changes_checked(self.instance, attrs)
            except ServiceError as error:
                if error.code != "invalid":
                    raise
                raise serializers.ValidationError({error.field: [error.message]}) from None
            return attrs
        task_type = attrs.get("task_type", "")
        try:
            if "options" in attrs:
                options_validate(attrs["options"])
            if "label_schema" in attrs and attrs["label_schema"] is not None and task_type in slugs():
                label_schema_validate(attrs["label_schema"], task_type=task_type)
        except ServiceError as error:
            raise serializers.ValidationError({error.field: [error.message]}) from None
        return attrs


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=Role.choices)

    class Meta:
        model = Membership
        fields = ["id", "username", "role", "created_at"]
        read_only_fields = ["id", "created_at"]


class MembershipUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class GuidelineSerializer(serializers.ModelSerializer):
    class Meta:
        model = Guideline
        fields = ["id", "version", "instructions", "ethics", "pii", "change_note", "published_at", "is_current",
                  "created_at"]
        read_only_fields = ["id", "version", "published_at", "is_current", "created_at"]


class GuidelineCreateSerializer(GuidelineSerializer):
    publish = serializers.BooleanField(default=False, write_only=True)

    class Meta(GuidelineSerializer.Meta):
        fields = [*GuidelineSerializer.Meta.fields, "publish"]


class AcknowledgementSerializer(serializers.Serializer):
    guideline = serializers.IntegerField(source="guideline.id")
    version = serializers.IntegerField(source="guideline.version")
    acknowledged_at = serializers.DateTimeField()


class ItemSerializer(serializers.ModelSerializer):
    source = serializers.CharField(source="source.name", read_only=True, allow_null=True, default=None)

    class Meta:
        model = Item
        fields = ["id", "external_id", "payload", "source", "split", "screening_status", "group_key",
                  "is_gold_check", "created_at"]
        read_only_fields = ["id", "source", "screening_status", "created_at"]


class ItemBriefSerializer(serializers.ModelSerializer):
    """What an annotator sees of an item: its text, nothing about other people's work."""

    class Meta:
        model = Item
        fields = ["id", "payload"]


class SuggestionSerializer(serializers.Serializer):
    """A model's suggestion shown with the item: pre-fills the widget, marked as suggested."""

    id = serializers.IntegerField()
    payload = serializers.JSONField()
    confidence = serializers.FloatField(allow_null=True)
    model = serializers.CharField(help_text="The suggester's model version.")
    source = serializers.CharField(help_text="baseline (trained on the project's gold) or upload.")


class NextItemSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(source="id")
    stage = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    item = serializers.SerializerMethodField()

    suggestion = serializers.SerializerMethodField()

    @extend_schema_field(ItemBriefSerializer)
    def get_item(self, assignment: Assignment) -> dict:
        item = assignment.item
        return {"id": item.id, "payload": item.project.task.annotator_view(item.payload, assignment.stage)}

    @extend_schema_field(SuggestionSerializer(allow_null=True))
    def get_suggestion(self, assignment: Assignment) -> dict | None:
        from ..assist import suggestion_view

        return suggestion_view(self.context.get("suggestion"))


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")


class AssignmentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Assignment
        fields = ["id", "item", "stage", "status", "lease_expires_at", "skip_reason"]


class FieldsBuiltOnce(serializers.ModelSerializer):
    """A ModelSerializer that builds its fields from the model once per class and copies them per instance,
    as DRF does for declared fields: building them introspects the model every time, a visible
    share of an annotation submission's CPU (docs/performance.md)."""

    _built: dict[str, Any] | None = None

    def get_fields(self) -> dict[str, Any]:
        cls = type(self)
        if cls.__dict__.get("_built") is None:
            cls._built = super().get_fields()
        return copy.deepcopy(cls._built)


class AnnotationSerializer(FieldsBuiltOnce):
    annotator = serializers.CharField(source="annotator.username", read_only=True)
    guideline_version = serializers.IntegerField(source="guideline.version", read_only=True, allow_null=True)

    class Meta:
        model = Annotation
        fields = ["id", "item", "annotator", "stage", "payload", "guideline_version", "seconds_spent", "imported",
                  "suggestion_shown", "suggestion_accepted", "suggestion_parts", "created_at", "updated_at"]
        read_only_fields = fields


class AnnotationSubmittedSerializer(AnnotationSerializer):
    """A submission's answer: the annotation and the caller's next assignment (null when nothing is left;
    absent when the client must ask ``next/``, e.g. after a guideline change)."""

    next = NextItemSerializer(allow_null=True, required=False, read_only=True)

    class Meta(AnnotationSerializer.Meta):
        fields = [*AnnotationSerializer.Meta.fields, "next"]
        read_only_fields = fields


class OwnAnnotationSerializer(AnnotationSerializer):
    """One of the caller's own submissions: ``revisable`` until its item's gold is decided, unless it is text
    written in a writing stage (``context["task"]``: the project's task type)."""

    revisable = serializers.SerializerMethodField()

    class Meta(AnnotationSerializer.Meta):
        fields = [*AnnotationSerializer.Meta.fields, "revisable"]
        read_only_fields = fields

    def get_revisable(self, annotation: Annotation) -> bool:
        return not annotation.gold_decided and not self.context["task"].stage(annotation.stage).produces


class AnnotationReviseSerializer(serializers.Serializer):
    payload = serializers.JSONField()


class AnnotationSubmitSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    payload = serializers.JSONField()
    stage = serializers.CharField(required=False, allow_blank=True)
    seconds_spent = serializers.FloatField(required=False, allow_null=True, min_value=0)


class FlagSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username", read_only=True, allow_null=True)
    kind = serializers.ChoiceField(choices=FlagKind.choices)

    class Meta:
        model = Flag
        fields = ["id", "item", "user", "kind", "note", "resolution", "resolution_note", "resolved_at",
                  "created_at"]
        read_only_fields = ["id", "user", "resolution", "resolution_note", "resolved_at", "created_at"]

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        project = self.context.get("project")
        if project is not None:
            # An item of another project is refused as a missing one is: the answer tells nothing about
            # projects the caller is not in.
            fields["item"] = serializers.PrimaryKeyRelatedField(
                queryset=selectors.items_in(project),
                error_messages={"does_not_exist": _("There is no item %(pk)s in this project.") % {"pk": "{pk_value}"},
                                "incorrect_type": _("An item is given by its id (a number).")})
        return fields


class FlagResolveSerializer(serializers.Serializer):
    resolution = serializers.ChoiceField(choices=[c for c in FlagResolution.choices if c[0] != "open"])
    note = serializers.CharField(required=False, allow_blank=True, default="")


class TaskTypeSerializer(serializers.Serializer):
    slug = serializers.CharField()
    klue_name = serializers.CharField()
    title = serializers.CharField()
    stages = serializers.ListField(child=serializers.DictField())
    default_schema = serializers.DictField()
    label_list = serializers.CharField(allow_null=True)


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", read_only=True, allow_null=True)

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "object_type", "object_id", "action", "before", "after"]
        read_only_fields = fields


class AssigneeCountSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    items = serializers.IntegerField()


class BudgetSummarySerializer(serializers.Serializer):
    """The project's budget as stored (``options.budget``) and how many items get each k under it."""

    default = serializers.IntegerField()
    splits = serializers.DictField(child=serializers.IntegerField())
    rules = serializers.ListField(child=serializers.DictField())
    items_by_k = serializers.DictField(child=serializers.IntegerField())
    assignees = AssigneeCountSerializer(many=True)


class AssignItemsSerializer(serializers.Serializer):
    """Items chosen by id (``items``) or by a budget rule's conditions (``where``: split, sample with seed, source,
    label), given exactly ``annotators`` (usernames; an empty list opens them to every annotator again)."""

    items = serializers.ListField(child=serializers.IntegerField(), required=False)
    where = serializers.DictField(required=False)
    annotators = serializers.ListField(child=serializers.CharField())


class AssignedSerializer(serializers.Serializer):
    items = serializers.IntegerField()
    annotators = serializers.ListField(child=serializers.CharField())
