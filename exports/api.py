"""Release API: create (a background build), poll, list files, download, verify, publish, delete.

Only a project's managers and maintainers (and superusers) reach releases; annotators never do.
Publishing is the maintainers' call. Release folders are written to the ``releases`` storage (a folder
under ``GOLDSET_RELEASE_ROOT``, or a bucket) — an API caller never chooses a path on the server.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.views import ProjectScoped
from annotation.models import Role
from annotation.permissions import CURATE, MANAGE

from . import diff, selectors, services
from .archive import archive_response
from .models import BUILT, Release, ReleaseFile
from .writers import DEFAULT_FORMATS, FORMATS

#: Publishing freezes a release for good: the project's dataset maintainers decide it.
PUBLISH = frozenset({Role.MAINTAINER.value, "superuser"})
#: Statuses whose files are complete and may be downloaded.
DOWNLOADABLE = BUILT


class ReleaseFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReleaseFile
        fields = ["id", "path", "kind", "split", "records", "size", "sha256"]


class ReleaseSerializer(serializers.ModelSerializer):
    splits = serializers.JSONField(source="split_counts", read_only=True)
    check = serializers.JSONField(source="baseline_check", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    published_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    folder = serializers.SerializerMethodField()
    reasons = serializers.SerializerMethodField(help_text="Why the release is not passed, in words.")

    class Meta:
        model = Release
        fields = ["id", "version", "status", "reasons", "progress", "error", "split_spec", "seed", "formats",
                  "splits", "label_counts", "excluded", "leakage", "contamination", "check", "gold",
                  "guideline_versions", "annotators", "agreement", "screening", "sources", "folder", "created_by",
                  "created_at", "finished_at", "published_by", "published_at", "publish_override"]
        read_only_fields = fields

    def get_folder(self, release: Release) -> str:
        return PurePosixPath(release.out_dir).name

    def get_reasons(self, release: Release) -> list[str]:
        return [str(reason) for reason in selectors.status_reasons(release)]


class ReleasePublishSerializer(serializers.Serializer):
    override_reason = serializers.CharField(required=False, allow_blank=True, max_length=2000,
                                            help_text="Required to publish an inconclusive release: why it is "
                                                      "published without a verdict (kept in the audit trail).")


class ReleaseCreateSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=64)
    splits = serializers.CharField(required=False, allow_blank=True,
                                   help_text="train,dev[,test] ratios, e.g. 0.8,0.1,0.1 (the default)")
    seed = serializers.IntegerField(required=False, allow_null=True)
    keep_splits = serializers.BooleanField(default=False)
    formats = serializers.ListField(child=serializers.ChoiceField(choices=FORMATS), required=False,
                                    default=list(DEFAULT_FORMATS),
                                    help_text="klue, jsonl, csv, parquet (the default: all four); conllu (DP), conll "
                                              "(NER), squad (MRC), doccano (NER, RE)")
    soft_labels = serializers.BooleanField(
        default=False, help_text="Add each item's label votes and the annotator model's posteriors (tc, nli, re) to "
                                 "the JSONL, CSV and Parquet files.")


class ReleaseListView(ProjectScoped, APIView):
    """The project's releases, newest first; POST queues a new build (poll the release for progress)."""

    roles = {"get": CURATE, "post": CURATE}

    @extend_schema(responses=ReleaseSerializer(many=True))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(ReleaseSerializer(selectors.releases_of(self.project)[:100], many=True).data)

    @extend_schema(request=ReleaseCreateSerializer,
                   responses={202: ReleaseSerializer, 400: OpenApiResponse(description="Bad specification."),
                              409: OpenApiResponse(description="The version exists.")})
    def post(self, request: Request, project_pk: int) -> Response:
        serializer = ReleaseCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        release = services.release_request(
            project=self.project, version=data["version"], splits=data.get("splits") or None,
            seed=data.get("seed"), keep_splits=data["keep_splits"], formats=data["formats"], user=request.user,
            soft_labels=data["soft_labels"],
        )
        return Response(ReleaseSerializer(release).data, status=status.HTTP_202_ACCEPTED)


class ReleaseScoped(ProjectScoped):
    def release(self) -> Release:
        return get_object_or_404(selectors.releases_of(self.project), pk=self.kwargs["pk"])


class ReleaseDetailView(ReleaseScoped, APIView):
    """One release: status and progress while it builds, then its counts, checks and provenance."""

    roles = {"get": CURATE, "delete": CURATE}

    @extend_schema(responses=ReleaseSerializer)
    def get(self, request: Request, project_pk: int, pk: int) -> Response:
        return Response(ReleaseSerializer(self.release()).data)

    @extend_schema(responses={204: None, 409: OpenApiResponse(description="Published or still building.")})
    def delete(self, request: Request, project_pk: int, pk: int) -> Response:
        services.release_delete(release=self.release(), by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReleaseFilesView(ReleaseScoped, APIView):
    roles = {"get": CURATE}

    @extend_schema(responses=ReleaseFileSerializer(many=True))
    def get(self, request: Request, project_pk: int, pk: int) -> Response:
        return Response(ReleaseFileSerializer(selectors.release_files(self.release()), many=True).data)


class ReleaseFileDownloadView(ReleaseScoped, APIView):
    roles = {"get": CURATE}

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiResponse(description="The file.")})
    def get(self, request: Request, project_pk: int, pk: int, file_pk: int) -> FileResponse:
        release = self.release()
        return file_response(release, get_object_or_404(selectors.release_files(release), pk=file_pk))


class ReleaseArchiveView(ReleaseScoped, APIView):
    """The whole release folder as one ``.tar.gz`` (every file and ``SHA256SUMS``), streamed."""

    roles = {"get": CURATE}

    @extend_schema(responses={(200, "application/gzip"): OpenApiResponse(description="The release archive.")})
    def get(self, request: Request, project_pk: int, pk: int) -> Any:
        release = self.release()
        if release.status not in DOWNLOADABLE:
            raise NotFound("This release has no finished files.")
        return archive_response(release)


class RaterIdsView(ProjectScoped, APIView):
    """The project's opaque rater ids and the accounts behind them: managers only."""

    roles = {"get": MANAGE}

    @extend_schema(responses=OpenApiResponse(description="[{rater, username, imported, since}]"))
    def get(self, request: Request, project_pk: int) -> Response:
        return Response(selectors.rater_ids(self.project))


#: The media type of a release file by its suffix. Every release file but Parquet is UTF-8 text and says so:
#: without a charset a client guesses the encoding of the Korean text (``SHA256SUMS`` has no suffix).
_TEXT_TYPES = {".md": "text/markdown", ".json": "application/json", ".jsonl": "application/jsonl",
               ".csv": "text/csv", ".tsv": "text/tab-separated-values", ".txt": "text/plain",
               ".conllu": "text/plain", ".xml": "application/xml", "": "text/plain"}


def download_type(path: str) -> str:
    """The ``Content-Type`` of a release file's download."""
    suffix = PurePosixPath(path).suffix
    if suffix in _TEXT_TYPES:
        return f"{_TEXT_TYPES[suffix]}; charset=utf-8"
    return "application/vnd.apache.parquet" if suffix == ".parquet" else "application/octet-stream"


def file_response(release: Release, file: ReleaseFile) -> FileResponse:
    """The file as a download streamed in blocks from the release's storage (a folder on disk or a bucket),
    refusing anything outside the release folder or a build still in progress."""
    if release.status not in DOWNLOADABLE:
        raise NotFound("This release has no finished files.")
    try:
        stream = selectors.release_file_open(release, file.path)
    except FileNotFoundError:
        raise NotFound("This file is not in the release folder.") from None
    return FileResponse(stream, as_attachment=True, filename=PurePosixPath(file.path).name,
                        content_type=download_type(file.path))


class ReleaseVerifyView(ReleaseScoped, APIView):
    """Re-hash the release folder against SHA256SUMS and the checksums recorded at build time."""

    roles = {"post": CURATE}

    @extend_schema(request=None, responses=OpenApiResponse(description="{ok, files, missing, changed, unlisted}"))
    def post(self, request: Request, project_pk: int, pk: int) -> Response:
        return Response(services.release_verify(self.release()))


class ReleaseDiffView(ReleaseScoped, APIView):
    """What changed from this release to release ``other`` of the project: items added, dropped (with the
    reason), relabelled (with the adjudication or rule behind it), moved between splits, with changed text;
    the label distribution per split and the agreement in both. ``?kind=`` keeps one kind of change."""

    roles = {"get": CURATE}

    @extend_schema(responses={200: OpenApiResponse(description="{a, b, counts, label_distribution, agreement, "
                                                               "changes: {kind: [{item, external_id, …}]}}"),
                              400: OpenApiResponse(description="Unknown kind of change."),
                              409: OpenApiResponse(description="A release without a record of its items.")})
    def get(self, request: Request, project_pk: int, pk: int, other: int) -> Response:
        release = self.release()
        other_release = get_object_or_404(selectors.releases_of(self.project), pk=other)
        return Response(diff.release_diff(release, other_release, kind=request.query_params.get("kind") or None))


class ReleasePublishView(ReleaseScoped, APIView):
    """Publish a release that passed its checks; it is immutable from then on."""

    roles = {"post": PUBLISH}

    @extend_schema(request=ReleasePublishSerializer,
                   responses={200: ReleaseSerializer,
                              409: OpenApiResponse(description="Not passed (an inconclusive release without an "
                                                               "override reason), or already published.")})
    def post(self, request: Request, project_pk: int, pk: int) -> Response:
        serializer = ReleasePublishSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        release = services.release_publish(release=self.release(), user=request.user,
                                           override_reason=serializer.validated_data.get("override_reason", ""))
        return Response(ReleaseSerializer(release).data)
