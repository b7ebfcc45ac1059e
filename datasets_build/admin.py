"""Admin views of import jobs and near duplicates (read-mostly: imports are made through the pipeline)."""

from django.contrib import admin

from .models import ImportJob, NearDuplicate


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "file_name", "format", "status", "items_written", "created_by", "created_at")
    list_filter = ("status", "format")
    search_fields = ("file_name", "project__slug")
    readonly_fields = ("stored_path", "errors", "summary", "celery_task_id", "started_at", "finished_at")


@admin.register(NearDuplicate)
class NearDuplicateAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "group", "item", "duplicate_of", "similarity")
    list_filter = ("project",)
    search_fields = ("=group", "=item__id")
    raw_id_fields = ("item", "duplicate_of")
