"""Admin views of import jobs and near duplicates, read-only: imports are made and tracked through the
pipeline, and near-duplicate groups are built by it (union-find over the whole project)."""

from django.contrib import admin

from annotation.admin_base import ReadOnlyAdmin

from .models import ImportJob, NearDuplicate


@admin.register(ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    list_display = ("id", "project", "file_name", "format", "status", "items_written", "created_by", "created_at")
    list_filter = ("status", "format")
    search_fields = ("file_name", "project__slug")
    readonly_fields = ("stored_path", "errors", "summary", "celery_task_id", "started_at", "finished_at")
    list_select_related = ("project", "created_by")


@admin.register(NearDuplicate)
class NearDuplicateAdmin(ReadOnlyAdmin):
    list_display = ("id", "project", "group", "item", "duplicate_of", "similarity")
    list_filter = ("project",)
    list_select_related = ("project", "item", "duplicate_of")
    search_fields = ("=group", "=item__id")
    raw_id_fields = ("item", "duplicate_of")
