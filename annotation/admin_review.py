"""Admin for the agreement, gold and adjudication models (imported by ``annotation/admin.py``).

Gold decisions are made on the adjudication page, which locks, versions and audits them; here they are
inspected only. A cached agreement report may be deleted (the next request computes it again), and so may a
gold state (the next release computes the gold again).
"""

from __future__ import annotations

from django.contrib import admin

from .admin_base import ReadOnlyAdmin, ViewAndDeleteAdmin
from .models import Adjudication, AgreementReport, GoldLabel, GoldState


@admin.register(AgreementReport)
class AgreementReportAdmin(ViewAndDeleteAdmin):
    list_display = ("project", "status", "progress", "annotation_count", "seconds", "created_at", "finished_at")
    list_filter = ("status", "project")
    readonly_fields = ("created_at", "finished_at", "task_id", "seconds")
    list_select_related = ("project",)


@admin.register(GoldLabel)
class GoldLabelAdmin(ReadOnlyAdmin):
    list_display = ("item", "status", "rule", "annotation_count", "version", "updated_at")
    list_filter = ("status", "rule", "item__project")
    search_fields = ("item__external_id",)
    raw_id_fields = ("item",)
    readonly_fields = ("version", "updated_at")
    list_select_related = ("item",)


@admin.register(GoldState)
class GoldStateAdmin(ViewAndDeleteAdmin):
    list_display = ("project", "fingerprint", "computed_at")
    readonly_fields = ("computed_at",)
    list_select_related = ("project",)


@admin.register(Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    list_display = ("item", "decided_by", "previous_status", "decided_at")
    list_filter = ("item__project",)
    search_fields = ("item__external_id", "reason")
    raw_id_fields = ("item", "source_annotation", "decided_by")
    readonly_fields = ("decided_at",)
    list_select_related = ("item", "decided_by")
