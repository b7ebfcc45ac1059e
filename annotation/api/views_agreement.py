"""API of agreement, gold labels and adjudication; managers and maintainers only (annotators never see
agreement, other people's labels or gold)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors
from ..agreement import services as agreement_services
from ..gold import selectors as gold_selectors
from ..gold import services as gold_services
from ..models import AgreementReport, GoldLabel, GoldStatus, JobStatus
from ..permissions import CURATE, MANAGE
from .views import ProjectScoped


def _job(report: AgreementReport) -> dict[str, Any]:
    return {"report": report.pk, "status": report.status, "progress": report.progress, "note": report.progress_note,
            "annotation_count": report.annotation_count, "error": report.error or None}


def _report_or_job(view: ProjectScoped, request: Request) -> tuple[AgreementReport | None, Response | None]:
    """The valid report, or a 202 response with the job computing it (queued now if needed)."""
    report, _queued = agreement_services.report_request(project=view.project, by=request.user)
    report.refresh_from_db()
    if report.status == JobStatus.DONE:
        return report, None
    code = status.HTTP_500_INTERNAL_SERVER_ERROR if report.status == JobStatus.FAILED else status.HTTP_202_ACCEPTED
    return None, Response({"job": _job(report)}, status=code)


class AgreementView(ProjectScoped, APIView):
    """The agreement report: 200 with it when a valid one is cached, else 202 with the job computing it
    (poll the same URL)."""

    roles = {"get": CURATE}

    @extend_schema(responses={200: OpenApiResponse(description="The report (keys as `agreement --json`)."),
                              202: OpenApiResponse(description="Computing: {job: {status, progress}}.")})
    def get(self, request: Request, project_pk: int) -> Response:
        report, pending = _report_or_job(self, request)
        if pending is not None:
            return pending
        return Response({**report.data, "job": _job(report)})


class AgreementCsvView(ProjectScoped, APIView):
    """The report's numbers as CSV (:mod:`annotation.agreement.report_csv`): the same values as the JSON report,
    one row per coefficient, label, pair and guideline version; 202 while it computes, as the report."""

    roles = {"get": CURATE}

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[Any, str]:
        # the body is CSV whatever the client accepts (and the 202 job is JSON): a client asking for text/csv is
        # never refused as unacceptable
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(responses={(200, "text/csv"): OpenApiResponse(
                                  response=OpenApiTypes.STR, description="CSV: section, name, subject, value, "
                                  "ci95_low, ci95_high, items, annotations, note."),
                              202: OpenApiResponse(description="Computing: {job: {status, progress}}.")})
    def get(self, request: Request, project_pk: int) -> HttpResponse | Response:
        from ..agreement.report_csv import csv_response, report_csv

        report, pending = _report_or_job(self, request)
        if pending is not None:
            return pending
        return csv_response(report_csv(report.data), self.project.slug)


class AnnotatorQualityView(ProjectScoped, APIView):
    """Per annotator: volume, speed, agreement with the others, alpha without them, gold checks, flags."""

    roles = {"get": CURATE}

    @extend_schema(responses={200: OpenApiResponse(description="{annotators: [...]}"),
                              202: OpenApiResponse(description="Computing.")})
    def get(self, request: Request, project_pk: int) -> Response:
        report, pending = _report_or_job(self, request)
        if pending is not None:
            return pending
        return Response({"primary": report.data.get("primary"), "annotators": report.data["annotator_quality"]})


class DisagreementView(ProjectScoped, APIView):
    """Items sorted by disagreement (most first), filterable by label, source, annotator, annotator pair ("a,b":
    the items the two answered differently) and kind of span disagreement (``boundary_slip``, ``type_mismatch``,
    ``missed_span``; NER and MRC)."""

    roles = {"get": CURATE}

    @extend_schema(parameters=[OpenApiParameter(name, str, required=False) for name in
                               ("q", "label", "source", "annotator", "gold_status", "pair", "kind", "offset",
                                "limit")],
                   responses=OpenApiResponse(description="{measure, count, results: [...]}"))
    def get(self, request: Request, project_pk: int) -> Response:
        from ..agreement.disagreement import FilterError, items_by_disagreement  # numpy/pandas only when used

        params = request.query_params
        offset = int(params["offset"]) if params.get("offset", "").isdigit() else 0
        limit = min(int(params["limit"]), 500) if params.get("limit", "").isdigit() else 50
        if len(params.get("q", "")) > selectors.SEARCH_MAX_CHARS:
            raise ValidationError({"q": [f"at most {selectors.SEARCH_MAX_CHARS} characters"]})
        try:
            page = items_by_disagreement(
                self.project, label=params.get("label", ""), source=params.get("source", ""),
                annotator=params.get("annotator", ""), text=params.get("q", ""),
                gold_status=params.get("gold_status", ""), pair=params.get("pair", ""), kind=params.get("kind", ""),
                offset=offset, limit=limit)
        except FilterError as error:
            raise ValidationError({error.field: [str(error)]}) from error
        return Response({"measure": page.measure, "count": page.total, "results": page.rows,
                         "choices": {"labels": page.choices.labels, "sources": page.choices.sources,
                                     "annotators": page.choices.annotators,
                                     "pairs": [",".join(pair) for pair in page.choices.pairs],
                                     "kinds": page.choices.kinds}})


class GoldLabelSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(source="item.external_id", read_only=True)

    class Meta:
        model = GoldLabel
        fields = ["item", "external_id", "payload", "status", "rule", "detail", "annotation_count", "version",
                  "updated_at"]


class GoldLabelPageSerializer(serializers.Serializer):
    """One page of gold labels (the view paginates like the list endpoints)."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = GoldLabelSerializer(many=True)


class GoldListView(ProjectScoped, APIView):
    """Gold labels of the project (``?status=`` filters); POST recomputes them with the project's rule."""

    roles = {"get": CURATE, "post": MANAGE}

    @extend_schema(parameters=[OpenApiParameter("status", str, required=False, enum=GoldStatus.values)],
                   responses=GoldLabelPageSerializer)
    def get(self, request: Request, project_pk: int) -> Response:
        qs = gold_selectors.gold_list(self.project, status=request.query_params.get("status") or None)
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(qs.order_by("item_id"), request, view=self)
        return paginator.get_paginated_response(GoldLabelSerializer(page, many=True).data)

    @extend_schema(request=None, responses=OpenApiResponse(description="{statuses: {status: n}}"))
    def post(self, request: Request, project_pk: int) -> Response:
        statuses = gold_services.gold_compute(self.project)
        return Response({"statuses": statuses})


class AdjudicationSerializer(serializers.Serializer):
    annotation = serializers.IntegerField(required=False, help_text="Accept this annotation as gold.")
    payload = serializers.JSONField(required=False, help_text="Or a new payload, in the task's annotation shape.")
    reason = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField(required=False, allow_null=True,
                                       help_text="The gold version you looked at (conflict if it changed).")


class AdjudicateView(ProjectScoped, APIView):
    """Resolve an item: accept one annotation or post a new payload, with a reason. 409 when another manager
    changed the item's gold since the version you saw."""

    roles = {"post": MANAGE}

    @extend_schema(request=AdjudicationSerializer, responses={200: GoldLabelSerializer,
                                                               409: OpenApiResponse(description="Conflict.")})
    def post(self, request: Request, project_pk: int, item_pk: int) -> Response:
        item = get_object_or_404(selectors.items_in(self.project), pk=item_pk)
        serializer = AdjudicationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        annotation = None
        if data.get("annotation") is not None:
            annotation = selectors.item_annotation(item, data["annotation"])
            if annotation is None:
                return Response({"detail": f"annotation {data['annotation']} is not on item {item.pk}",
                                 "field": "annotation"}, status=status.HTTP_400_BAD_REQUEST)
        gold = gold_services.adjudicate(item=item, by=request.user, reason=data["reason"],
                                        payload=data.get("payload"), annotation=annotation,
                                        base_version=data.get("version"))
        return Response(GoldLabelSerializer(gold).data)


class KnownAnswerSerializer(serializers.Serializer):
    payload = serializers.JSONField()


class KnownAnswerView(ProjectScoped, APIView):
    """Make an item a gold / attention item with a known answer (POST), or an ordinary item again (DELETE)."""

    roles = {"post": MANAGE, "delete": MANAGE}

    @extend_schema(request=KnownAnswerSerializer, responses=GoldLabelSerializer)
    def post(self, request: Request, project_pk: int, item_pk: int) -> Response:
        item = get_object_or_404(selectors.items_in(self.project), pk=item_pk)
        serializer = KnownAnswerSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        gold = gold_services.gold_check_set(item=item, payload=serializer.validated_data["payload"],
                                            by=request.user)
        return Response(GoldLabelSerializer(gold).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, project_pk: int, item_pk: int) -> Response:
        item = get_object_or_404(selectors.items_in(self.project), pk=item_pk)
        gold_services.gold_check_clear(item=item, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
