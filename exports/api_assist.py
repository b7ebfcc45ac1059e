"""Suggester API: the project's assist settings and suggestions overview, retraining (a background job to
poll), uploading a predictions file, and the runs. Managers change things; maintainers may look; annotators
never reach it (they only see a suggestion with their item, through ``next/``)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import assist as annotation_assist
from annotation import services as annotation_services
from annotation.api.parsers import CheckedJSONParser
from annotation.api.views import ProjectScoped
from annotation.models import Project
from annotation.permissions import CURATE, MANAGE

from . import assist, selectors, suggester_services
from .models import SuggesterRun


class SuggesterRunSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = SuggesterRun
        fields = ["id", "kind", "status", "progress", "progress_note", "trigger", "model_version", "gold_items",
                  "suggestions", "metrics", "file_name", "format", "error", "requested_by", "created_at",
                  "started_at", "finished_at"]
        read_only_fields = fields


class AssistSettingsSerializer(serializers.Serializer):
    show = serializers.BooleanField(required=False)
    fraction = serializers.JSONField(required=False, help_text="0..1: share of eligible assignments shown a "
                                                               "suggestion (the rest are the control share)")
    seed = serializers.JSONField(required=False)
    queue_order = serializers.ChoiceField(choices=annotation_assist.QUEUE_ORDERS, required=False)
    uncertainty = serializers.ChoiceField(choices=annotation_assist.UNCERTAINTY_MEASURES, required=False)
    retrain_every = serializers.JSONField(required=False)
    target_score = serializers.JSONField(required=False)


class PredictionsUploadSerializer(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=assist.UPLOAD_FORMATS)
    model = serializers.CharField(required=False, allow_blank=True, max_length=80, default="")


def overview(project: Project) -> dict[str, Any]:
    latest = selectors.suggester_runs(project).first()
    return {**annotation_assist.suggestion_summary(project),
            "latest_run": SuggesterRunSerializer(latest).data if latest else None,
            "expected_effect": assist.expected_effect(project)}


class SuggesterView(ProjectScoped, APIView):
    """GET the settings, the current suggestions and what annotators did with them; PATCH the settings."""

    roles = {"get": CURATE, "patch": MANAGE}

    @extend_schema(responses=OpenApiResponse(description="{settings, current, annotations, assignments_by_arm, "
                                                         "latest_run, expected_effect}"))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(overview(self.project))

    @extend_schema(request=AssistSettingsSerializer,
                   responses={200: OpenApiResponse(description="The overview, as GET."),
                              400: OpenApiResponse(description="A setting out of range.")})
    def patch(self, request: Request, project_pk: int) -> Response:
        if not isinstance(request.data, dict):
            return Response({"detail": "send a JSON object of settings", "code": "invalid"}, status=400)
        annotation_services.assist_settings_update(project=self.project, **dict(request.data))
        return Response(overview(self.project))


class SuggesterTrainView(ProjectScoped, APIView):
    """Queue a retraining of the project's baseline on its current gold (poll the run for progress)."""

    roles = {"post": MANAGE}

    @extend_schema(request=None, responses={202: SuggesterRunSerializer})
    def post(self, request: Request, project_pk: int) -> Response:
        run = suggester_services.suggester_request(project=self.project, user=request.user)
        run.refresh_from_db()
        return Response(SuggesterRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class SuggesterUploadView(ProjectScoped, APIView):
    """Upload a predictions file (KLUE format of the task, or JSONL of ``{external_id|item, payload,
    confidence?}``); it is read into suggestions by a background job."""

    roles = {"post": MANAGE}
    parser_classes = [MultiPartParser, FormParser, CheckedJSONParser]

    @extend_schema(request={"multipart/form-data": PredictionsUploadSerializer},
                   responses={202: SuggesterRunSerializer})
    def post(self, request: Request, project_pk: int) -> Response:
        serializer = PredictionsUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = suggester_services.predictions_upload(project=self.project, upload=data["file"],
                                                    file_name=data["file"].name, fmt=data["format"],
                                                    user=request.user, model=data["model"])
        run.refresh_from_db()
        return Response(SuggesterRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class SuggesterRunListView(ProjectScoped, APIView):
    roles = {"get": CURATE}

    @extend_schema(responses=SuggesterRunSerializer(many=True))
    def get(self, request: Request, project_pk: int) -> Response:
        runs = selectors.suggester_runs(self.project)[:100]
        return Response(SuggesterRunSerializer(runs, many=True).data)


class SuggesterRunDetailView(ProjectScoped, APIView):
    """One run: status and progress while it runs, then its model version, counts and learning curve."""

    roles = {"get": CURATE}

    @extend_schema(responses=SuggesterRunSerializer)
    def get(self, request: Request, project_pk: int, pk: int) -> Response:
        return Response(SuggesterRunSerializer(get_object_or_404(selectors.suggester_runs(self.project), pk=pk)).data)
