"""API views: imports (upload → job → poll), sources and licences, the PII report, the review queue."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.parsers import CheckedJSONParser
from annotation.api.views import ProjectScoped, service_error_response
from annotation.models import Item
from annotation.permissions import CURATE, MANAGE
from annotation.services import ServiceError

from . import selectors, services
from .models import ImportJob
from .serializers import ImportCreateSerializer, ImportJobSerializer, ReviewDecisionSerializer, ReviewItemSerializer


class ImportListView(ProjectScoped, APIView):
    """Upload a file to import (multipart); the import runs as a job whose progress you poll."""

    roles = {"get": CURATE, "post": MANAGE}
    parser_classes = [MultiPartParser, FormParser, CheckedJSONParser]

    @extend_schema(responses=ImportJobSerializer(many=True))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(ImportJobSerializer(selectors.import_jobs(self.project)[:100], many=True).data)

    @extend_schema(request={"multipart/form-data": ImportCreateSerializer},
                   responses={202: ImportJobSerializer, 400: OpenApiResponse(description="Bad file or options.")})
    def post(self, request: Request, project_pk: int) -> Response:
        serializer = ImportCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            job = services.import_job_create(
                project=self.project, upload=data["file"], file_name=data["file"].name, fmt=data["format"],
                user=request.user, source=data["source"], license=data["license"], pii=data["pii"],
                encoding=data["encoding"], duplicates=data["duplicates"],
            )
        except ServiceError as error:
            return service_error_response(error)
        return Response(ImportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ImportDetailView(ProjectScoped, APIView):
    """One import: status, progress (records read, screened, written), errors and the screening summary."""

    roles = {"get": CURATE}

    @extend_schema(responses=ImportJobSerializer)
    def get(self, request: Request, project_pk: int, pk: int) -> Response:
        job = get_object_or_404(ImportJob, pk=pk, project=self.project)
        job.refresh_from_db()
        return Response(ImportJobSerializer(job).data)


class SourceListView(ProjectScoped, APIView):
    """The project's sources with item counts, licences and release warnings."""

    roles = {"get": CURATE}

    @extend_schema(responses=OpenApiResponse(description="[{id, name, license, items, warnings, …}]"))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(selectors.sources_report(self.project))


class PiiReportView(ProjectScoped, APIView):
    """PII findings counted by type and action (never a value)."""

    roles = {"get": CURATE}

    @extend_schema(responses=OpenApiResponse(description="{items, items_with_pii, findings, types: {type: {…}}}"))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(selectors.pii_report(self.project))


class NearDuplicateListView(ProjectScoped, APIView):
    """Near-duplicate pairs found at import (estimated Jaccard similarity of character shingles)."""

    roles = {"get": CURATE}

    @extend_schema(responses=OpenApiResponse(description="{count, pairs: [{item, duplicate_of, similarity}]}"))
    def get(self, request: Request, project_pk: int) -> Response:
        pairs = selectors.near_duplicates(self.project)
        return Response({"count": pairs.count(), "pairs": [
            {"item": p.item_id, "item_external_id": p.item.external_id, "duplicate_of": p.duplicate_of_id,
             "duplicate_of_external_id": p.duplicate_of.external_id, "similarity": round(p.similarity, 4)}
            for p in pairs[:500]
        ]})


class ReviewQueueView(ProjectScoped, APIView):
    """Items screened as needing review or carrying open flags."""

    roles = {"get": CURATE}

    @extend_schema(responses=ReviewItemSerializer(many=True))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(ReviewItemSerializer(selectors.review_queue(self.project)[:200], many=True).data)


class ReviewDecisionView(ProjectScoped, APIView):
    """Keep or drop a screened item, with a reason; resolves its open flags."""

    roles = {"post": MANAGE}

    @extend_schema(request=ReviewDecisionSerializer, responses=ReviewItemSerializer)
    def post(self, request: Request, project_pk: int, item_pk: int) -> Response:
        serializer = ReviewDecisionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        item = get_object_or_404(Item, pk=item_pk, project=self.project)
        try:
            item = services.screening_review(item=item, decision=serializer.validated_data["decision"],
                                             reason=serializer.validated_data["reason"], by=request.user)
        except ServiceError as error:
            return service_error_response(error)
        return Response(ReviewItemSerializer(item).data)
