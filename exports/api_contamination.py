"""Contamination API: a project's references (upload a file, name another project, list, remove) and a release's
contamination (the build's result and the checks run on demand; POST runs one). Managers and maintainers only."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors as annotation_selectors
from annotation.api.parsers import CheckedJSONParser
from annotation.api.views import ProjectScoped
from annotation.permissions import CURATE
from annotation.services import ServiceError
from datasets_build.pipeline import FORMATS

from . import contamination_services, selectors
from .api import ReleaseScoped
from .models import ContaminationCheck, ContaminationReference
from .provenance import item_provenance


class ReferenceSerializer(serializers.ModelSerializer):
    other = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ContaminationReference
        fields = ["id", "name", "kind", "training", "other", "file_name", "format", "records", "skipped",
                  "created_by", "created_at"]
        read_only_fields = fields


class ReferenceCreateSerializer(serializers.Serializer):
    name = serializers.CharField(required=False, allow_blank=True, max_length=120, default="")
    training = serializers.BooleanField(required=False, default=True,
                                        help_text="Whether the reference is training data (the default "
                                                  "policy fails test items found in training data).")
    project = serializers.IntegerField(required=False, help_text="Another project's id: its items are the "
                                                                 "reference (you must manage it).")
    file = serializers.FileField(required=False, help_text="A reference file in one of the import's formats.")
    # A string (not an enum of its own: the import's format field has that name), checked by the service.
    format = serializers.CharField(required=False, help_text=f"The file's format: {', '.join(FORMATS)}.")


class CheckSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    status = serializers.CharField(read_only=True, help_text="queued, running, done or failed")

    class Meta:
        model = ContaminationCheck
        fields = ["id", "status", "result", "error", "requested_by", "created_at", "finished_at"]
        read_only_fields = fields


class ReferenceListView(ProjectScoped, APIView):
    """The project's contamination references; POST adds one: ``project`` (another project's id), or ``file``
    with its ``format`` (multipart)."""

    roles = {"get": CURATE, "post": CURATE}
    parser_classes = [MultiPartParser, FormParser, CheckedJSONParser]

    @extend_schema(responses=ReferenceSerializer(many=True))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(ReferenceSerializer(selectors.contamination_references(self.project), many=True).data)

    @extend_schema(request={"multipart/form-data": ReferenceCreateSerializer,
                            "application/json": ReferenceCreateSerializer},
                   responses={201: ReferenceSerializer, 400: OpenApiResponse(description="Unreadable file, bad "
                                                                                         "format or name."),
                              403: OpenApiResponse(description="You do not manage the named project."),
                              409: OpenApiResponse(description="The name is taken.")})
    def post(self, request: Request, project_pk: int) -> Response:
        serializer = ReferenceCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if ("project" in data) == ("file" in data):
            raise ServiceError("give either project (another project's id) or file (with its format)",
                               field="project")
        if "project" in data:
            other = selectors.lendable_projects(self.project, request.user).filter(pk=data["project"]).first()
            if other is None:
                raise ServiceError("no other project you manage has this id", field="project", code="forbidden")
            reference = contamination_services.reference_add_project(
                project=self.project, other=other, by=request.user, name=data["name"], training=data["training"])
        else:
            if "format" not in data:
                raise ServiceError("a reference file needs its format", field="format")
            reference = contamination_services.reference_add_file(
                project=self.project, upload=data["file"], file_name=data["file"].name, fmt=data["format"],
                by=request.user, name=data["name"], training=data["training"])
        return Response(ReferenceSerializer(reference).data, status=status.HTTP_201_CREATED)


class ReferenceDetailView(ProjectScoped, APIView):
    roles = {"delete": CURATE}

    @extend_schema(responses={204: None})
    def delete(self, request: Request, project_pk: int, pk: int) -> Response:
        reference = get_object_or_404(selectors.contamination_references(self.project), pk=pk)
        contamination_services.reference_delete(reference=reference, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReleaseContaminationView(ReleaseScoped, APIView):
    """What the build found (``build``) and the checks run since (``checks``, newest first); POST runs a check
    against the earlier releases and the project's current references (a background job: poll this)."""

    roles = {"get": CURATE, "post": CURATE}

    @extend_schema(responses=OpenApiResponse(description="{build: {...}, checks: [{id, status, result, ...}]}"))
    def get(self, request: Request, project_pk: int, pk: int) -> Response:
        release = self.release()
        checks = selectors.contamination_checks(release)[:20]
        return Response({"build": release.contamination, "checks": CheckSerializer(checks, many=True).data})

    @extend_schema(request=None, responses={202: CheckSerializer,
                                            409: OpenApiResponse(description="Not built, or no record of its "
                                                                             "items.")})
    def post(self, request: Request, project_pk: int, pk: int) -> Response:
        check = contamination_services.check_request(release=self.release(), by=request.user)
        check.refresh_from_db()
        return Response(CheckSerializer(check).data, status=status.HTTP_202_ACCEPTED)


class ItemProvenanceView(ProjectScoped, APIView):
    """One item's provenance: a timeline of its import (source, file, record), screening, annotations (rater
    ids, guideline versions), gold decisions and the releases that held it (split) or left it out (reason)."""

    roles = {"get": CURATE}

    @extend_schema(responses=OpenApiResponse(description="{item, external_id, split, screening_status, "
                                                         "events: [{kind, at, ...}]}"))
    def get(self, request: Request, project_pk: int, item_pk: int) -> Response:
        item = get_object_or_404(annotation_selectors.items_in(self.project).select_related("source"), pk=item_pk)
        return Response(item_provenance(item))
