"""API views: imports (upload → job → poll), sources and licences, the PII report, the review queue."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors as annotation_selectors
from annotation.api.parsers import CheckedJSONParser
from annotation.api.views import ProjectScoped
from annotation.permissions import CURATE, MANAGE

from . import selectors, services
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
        job = services.import_job_create(
            project=self.project, upload=data["file"], file_name=data["file"].name, fmt=data["format"],
            user=request.user, source=data["source"], license=data["license"], pii=data["pii"],
            encoding=data["encoding"], duplicates=data["duplicates"], approved_only=data["approved_only"],
            ontology=data.get("ontology"),
            ontology_file_name=data["ontology"].name if data.get("ontology") else "",
        )
        return Response(ImportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ImportDetailView(ProjectScoped, APIView):
    """One import: status, progress (records read, screened, written), errors and the screening summary."""

    roles = {"get": CURATE}

    @extend_schema(responses=ImportJobSerializer)
    def get(self, request: Request, project_pk: int, pk: int) -> Response:
        job = get_object_or_404(selectors.import_jobs(self.project), pk=pk)
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
    """Near-duplicate groups found at import (estimated Jaccard similarity of character shingles): items that
    are nearly the same, directly or through one another. ``?offset=&limit=`` (≤ 500) page through the groups."""

    roles = {"get": CURATE}

    @extend_schema(responses=OpenApiResponse(description="{count, groups, offset, results: [{group, items: "
                                                          "[{id, external_id, duplicate_of, similarity}]}]}"))
    def get(self, request: Request, project_pk: int) -> Response:
        paging = {}
        for name, default, top in (("offset", 0, None), ("limit", 100, 500)):
            value = request.query_params.get(name, str(default))
            if not value.isdigit() or (top is not None and not 1 <= int(value) <= top):
                bound = _("a whole number from 1 to %(top)d") % {"top": top} if top else _("a whole number from 0")
                return Response({name: [_("%(name)s must be %(bound)s.") % {"name": name, "bound": bound}]},
                                status=status.HTTP_400_BAD_REQUEST)
            paging[name] = int(value)
        counts = selectors.near_duplicate_counts(self.project)
        return Response({"count": counts["items"], "groups": counts["groups"], "offset": paging["offset"],
                         "results": selectors.near_duplicate_groups_page(self.project, **paging)})


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
        item = get_object_or_404(annotation_selectors.items_in(self.project), pk=item_pk)
        item = services.screening_review(item=item, decision=serializer.validated_data["decision"],
                                         reason=serializer.validated_data["reason"], by=request.user)
        return Response(ReviewItemSerializer(item).data)
