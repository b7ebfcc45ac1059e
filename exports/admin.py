"""Admin views of releases and their files, read-only: releases are built and published through the
pipeline (build_release, the release pages, the API), and a published release must never change."""

from collections import Counter

from django.contrib import admin

from annotation.admin_base import NoWritesMixin, ReadOnlyAdmin

from .models import (
    ContaminationCheck,
    ContaminationReference,
    RaterId,
    Release,
    ReleaseFile,
    ReleaseItems,
    ReleaseSplits,
    SuggesterRun,
)


class ReleaseFileInline(NoWritesMixin, admin.TabularInline):
    model = ReleaseFile
    fields = ("path", "kind", "split", "records", "size", "sha256")
    readonly_fields = fields
    extra = 0


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    list_display = ("id", "project", "version", "status", "seed", "created_by", "created_at", "published_at")
    list_filter = ("status",)
    search_fields = ("version", "project__slug")
    inlines = (ReleaseFileInline,)
    list_select_related = ("project", "created_by")


@admin.register(ReleaseFile)
class ReleaseFileAdmin(ReadOnlyAdmin):
    list_display = ("id", "release", "path", "kind", "split", "records", "size")
    list_filter = ("kind", "split")
    search_fields = ("path", "release__version", "release__project__slug")
    list_select_related = ("release__project",)


@admin.register(SuggesterRun)
class SuggesterRunAdmin(ReadOnlyAdmin):
    """Suggester runs are started from the suggester page or API and written by the job."""

    list_display = ("id", "project", "kind", "status", "progress", "model_version", "gold_items", "suggestions",
                    "created_at", "finished_at")
    list_filter = ("kind", "status")
    search_fields = ("model_version", "project__slug", "file_name")
    list_select_related = ("project",)


@admin.register(RaterId)
class RaterIdAdmin(ReadOnlyAdmin):
    """Rater ids are given by release builds and never change."""

    list_display = ("id", "project", "number", "user", "created_at")
    search_fields = ("project__slug", "user__username")


@admin.register(ReleaseItems)
class ReleaseItemsAdmin(ReadOnlyAdmin):
    """What each release held (its items, splits, labels, gold digests, exclusions), written by the build."""

    list_display = ("release", "held", "left_out")
    fields = ("release", "split_names", "reason_names", "held", "left_out")
    readonly_fields = fields

    @admin.display(description="items held")
    def held(self, row: ReleaseItems) -> int:
        return len(row.unpacked()["ids"])

    @admin.display(description="items left out")
    def left_out(self, row: ReleaseItems) -> int:
        return len(row.unpacked()["excluded_ids"])


@admin.register(ReleaseSplits)
class ReleaseSplitsAdmin(ReadOnlyAdmin):
    """The splits a ratio release chose for its items, written by the build."""

    list_display = ("release", "items_per_split")
    fields = ("release", "names", "items_per_split")
    readonly_fields = fields

    @admin.display(description="items per split")
    def items_per_split(self, row: ReleaseSplits) -> str:
        counts = Counter(row.as_dict().values())
        return ", ".join(f"{name}: {counts[name]}" for name in row.names)


@admin.register(ContaminationReference)
class ContaminationReferenceAdmin(ReadOnlyAdmin):
    """A project's contamination references are added and removed through the references page, the API or the
    command, which read the file and audit the change."""

    list_display = ("id", "project", "kind", "name", "training", "records", "created_by", "created_at")
    list_filter = ("kind", "training")
    search_fields = ("name", "project__slug", "file_name")
    list_select_related = ("project", "created_by")


@admin.register(ContaminationCheck)
class ContaminationCheckAdmin(ReadOnlyAdmin):
    """On-demand contamination checks of a release, asked for on its page, the API or the command, written by the
    job."""

    list_display = ("id", "release", "status", "requested_by", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("release__version", "release__project__slug")
    list_select_related = ("release__project", "requested_by")
