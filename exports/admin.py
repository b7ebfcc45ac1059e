"""Admin views of releases and their files, read-only: releases are built and published through the
pipeline (build_release, the release pages, the API), and a published release must never change."""

from django.contrib import admin

from annotation.admin_base import ReadOnlyAdmin

from .models import ItemSplit, RaterId, Release, ReleaseFile, SuggesterRun


class ReleaseFileInline(admin.TabularInline):
    model = ReleaseFile
    fields = ("path", "kind", "split", "records", "size", "sha256")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


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


@admin.register(ItemSplit)
class ItemSplitAdmin(ReadOnlyAdmin):
    """The split a release chose for an item, written by the build."""

    list_display = ("item", "release", "split")
    list_filter = ("split",)
