"""Django admin: every model, browsable without N+1 queries.

The admin is an escape hatch for staff, not the workflow. Where a plain model save would break an
invariant it either goes through the same services and task-type validation as the pages and the API
(a new project or guideline version, an item's content hash and payload shape) or is read-only
(``admin_base.ReadOnlyAdmin``): assignments, queue slots, annotations, suggestions, flags, memberships
and the audit trail are written only by the services that keep the queue's counters, the last-manager
rule and the audit trail consistent. docs/ARCHITECTURE.md ("The admin") lists every model's decision.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from . import services
from .admin_base import LargeTableAdmin, LargeTableAdminMixin, NoWritesMixin, ReadOnlyAdmin, ViewAndDeleteAdmin
from .models import (
    Annotation,
    Assignment,
    AuditEvent,
    Draft,
    Flag,
    Guideline,
    GuidelineAcknowledgement,
    Item,
    ItemAssignee,
    Membership,
    Project,
    QueueSlot,
    Source,
    SsoIdentity,
    Suggestion,
    User,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
)
from .project_settings import label_schema_validate, options_validate
from .services.projects import PROJECT_EDITABLE


@admin.register(User)
class GoldsetUserAdmin(LargeTableAdminMixin, UserAdmin):
    list_display = ("username", "email", "first_name", "last_name", "is_staff", "is_active", "is_imported")
    list_filter = ("is_imported", "is_staff", "is_superuser", "is_active", "groups")
    fieldsets = (*UserAdmin.fieldsets, (_("Goldset"), {"fields": ("is_imported",)}))
    # A corpus's imported annotator is made by the import (its save locks the account); a person's account
    # turned into one, or back, would mix corpus labels with people's work.
    readonly_fields = ("is_imported",)

    def has_delete_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        # Deleting a user cascades to their leased assignments, which the queue's slot counters still count;
        # deactivate the account instead (its leases run out and return to the queue).
        return False


class MembershipInline(NoWritesMixin, admin.TabularInline):
    """Shown, not edited: members change through the project's members page or API (see MembershipAdmin)."""

    model = Membership
    extra = 0
    readonly_fields = ("user", "role", "created_at")


class ProjectAdminForm(forms.ModelForm):
    """Options and label schema checked as the API checks them, so a bad value never reaches ``next/``."""

    class Meta:
        model = Project
        fields = ("name", "slug", "description", "task_type", "label_schema", "annotators_per_item", "options")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        task_type = cleaned.get("task_type") or getattr(self.instance, "task_type", "")
        try:
            if "options" in cleaned:
                options_validate(cleaned["options"])
            if cleaned.get("label_schema") is not None and task_type:
                label_schema_validate(cleaned["label_schema"], task_type=task_type)
        except services.ServiceError as error:
            field = error.field.split(".")[0]
            self.add_error(field if field in self.fields else None, f"{error.field}: {error.message}")
        return cleaned


@admin.register(Project)
class ProjectAdmin(LargeTableAdmin):
    form = ProjectAdminForm
    list_display = ("name", "slug", "task_type", "annotators_per_item", "created_by", "created_at")
    list_filter = ("task_type",)
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("created_by", "created_at", "updated_at")
    list_select_related = ("created_by",)
    inlines = (MembershipInline,)

    def get_readonly_fields(self, request: HttpRequest, obj: Project | None = None) -> tuple[str, ...]:
        # Items, annotations and gold are shaped by the task type: it is chosen once, when the project is made.
        return (*self.readonly_fields, "task_type") if obj is not None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: Project, form: forms.ModelForm, change: bool) -> None:
        if change:
            services.project_update(project=obj, changes={name: form.cleaned_data[name] for name in form.changed_data
                                                          if name in PROJECT_EDITABLE}, by=request.user)
            return
        # A new project gets its guideline v1 (and its creator's membership) from the service.
        created = services.project_create(
            name=obj.name, slug=obj.slug, task_type=obj.task_type, created_by=request.user,
            annotators_per_item=obj.annotators_per_item, label_schema=obj.label_schema or None,
            description=obj.description, options=obj.options or None,
        )
        obj.pk, obj.created_by, obj.created_at = created.pk, created.created_by, created.created_at
        obj.label_schema, obj.options = created.label_schema, created.options
        obj._state.adding = False

    def has_delete_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        # The confirmation page would list every item, assignment and annotation of the project (unbounded);
        # projects are deleted through the API or the service, which refuse annotated ones.
        return False


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin):
    """Read-only: ``services.membership_set`` / ``membership_remove`` keep a manager on every project, keep
    imported annotators out, and return a removed annotator's leases to the queue."""

    list_display = ("user", "project", "role", "created_at")
    list_filter = ("role", "project")
    search_fields = ("user__username", "project__name", "project__slug")
    autocomplete_fields = ("user", "project")
    list_select_related = ("user", "project")


@admin.register(Guideline)
class GuidelineAdmin(LargeTableAdmin):
    list_display = ("project", "version", "is_current", "published_at", "change_note", "created_by")
    list_filter = ("project", "is_current")
    search_fields = ("project__name", "change_note")
    # Numbering and the one-current-version rule belong to the services; see save_model and the action.
    readonly_fields = ("version", "is_current", "published_at", "created_by", "created_at")
    autocomplete_fields = ("project",)
    list_select_related = ("project", "created_by")
    actions = ("publish",)

    def has_delete_permission(self, request: HttpRequest, obj: Guideline | None = None) -> bool:
        # Versions are the project's history (annotations and acknowledgements name them); a draft nobody
        # wants is superseded by the next version.
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Guideline | None = None) -> tuple[str, ...]:
        if obj is not None and obj.is_published:
            # A published version is what annotators acknowledged; changing it would rewrite history.
            return (*self.readonly_fields, "project", "instructions", "ethics", "pii", "change_note")
        return self.readonly_fields

    def save_model(self, request: HttpRequest, obj: Guideline, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created = services.guideline_create(
            project=obj.project, instructions=obj.instructions, ethics=obj.ethics, pii=obj.pii,
            change_note=obj.change_note, created_by=request.user,
        )
        # The admin keeps using ``obj`` (log entry, redirect), so it must become the saved row.
        obj.pk, obj.version, obj.created_by, obj.created_at = (created.pk, created.version, created.created_by,
                                                               created.created_at)
        obj._state.adding = False

    @admin.action(description=_("Publish the selected drafts"))
    def publish(self, request: HttpRequest, queryset: QuerySet[Guideline]) -> None:
        for guideline in queryset.order_by("project_id", "version"):
            try:
                services.guideline_publish(guideline=guideline, by=request.user)
            except services.ServiceError as error:
                self.message_user(request, f"{guideline}: {error.message}", messages.WARNING)
            else:
                self.message_user(request, f"{guideline} published.", messages.SUCCESS)


@admin.register(GuidelineAcknowledgement)
class GuidelineAcknowledgementAdmin(ViewAndDeleteAdmin):
    """An acknowledgement is the annotator's own statement: never made here; deleting one asks again."""

    list_display = ("user", "guideline", "acknowledged_at")
    list_filter = ("guideline__project",)
    search_fields = ("user__username",)
    autocomplete_fields = ("user", "guideline")
    readonly_fields = ("acknowledged_at",)
    list_select_related = ("user", "guideline__project")


@admin.register(Source)
class SourceAdmin(LargeTableAdmin):
    list_display = ("name", "project", "license", "url", "created_at")
    list_filter = ("license",)
    search_fields = ("name", "license", "provenance", "project__slug")
    readonly_fields = ("created_at",)
    autocomplete_fields = ("project",)
    list_select_related = ("project",)

    def formfield_for_dbfield(self, db_field: models.Field, request: HttpRequest, **kwargs: Any) -> Any:
        if isinstance(db_field, models.URLField):
            kwargs["assume_scheme"] = "https"  # a licence page typed without a scheme is https today
        return super().formfield_for_dbfield(db_field, request, **kwargs)


class ItemAdminForm(forms.ModelForm):
    """Checks the payload against the project's task type and screens it, as every importer does (the screening's
    refusals are the form's errors); :class:`ItemAdmin` stores it through the item services."""

    class Meta:
        model = Item
        fields = ("project", "source", "external_id", "payload", "meta", "group_key", "split",
                  "screening_status", "is_gold_check")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        project = cleaned.get("project") or (self.instance.project if self.instance.pk else None)
        payload = cleaned.get("payload")
        unchanged = self.instance.pk and not {"payload", "external_id", "meta", "group_key"} & set(self.changed_data)
        if project is not None and payload is not None and not unchanged:
            try:  # a dry run: ItemAdmin.save_model stores it through the services, which screen it again
                services.item_screened(project, payload=payload, meta=cleaned.get("meta"),
                                       external_id=cleaned.get("external_id") or "",
                                       group_key=cleaned.get("group_key") or "")
            except services.ServiceError as error:
                self.add_error("payload", error.message if error.field in ("", "payload")
                               else f"{error.field.removeprefix('payload.')}: {error.message}")
        return cleaned


@admin.register(Item)
class ItemAdmin(LargeTableAdmin):
    form = ItemAdminForm
    list_display = ("__str__", "project", "split", "screening_status", "source", "is_gold_check", "created_at")
    list_filter = ("project", "split", "screening_status", "source", "is_gold_check")
    search_fields = ("external_id",)
    # Screening decisions and gold / attention items go through their services (audited; a gold item gets
    # its known answer); an item stays in its project, whose queue slots and annotations it shares.
    readonly_fields = ("content_hash", "created_at", "pii_findings", "screening_status", "is_gold_check")
    autocomplete_fields = ("project",)
    list_select_related = ("project", "source")

    def get_readonly_fields(self, request: HttpRequest, obj: Item | None = None) -> tuple[str, ...]:
        return (*self.readonly_fields, "project") if obj is not None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: Item, form: forms.ModelForm, change: bool) -> None:
        # Through the item services, which screen the item as an import does (PII, toxicity, flags, status)
        # and keep its content hash, which deduplication relies on, matching its text.
        fields = {"payload": form.cleaned_data["payload"], "external_id": obj.external_id, "meta": obj.meta,
                  "group_key": obj.group_key, "split": obj.split, "source": obj.source}
        if change:
            stored = services.item_update(item=obj, **fields)
        else:
            stored = services.item_create(project=obj.project, **fields)
        for name in ("pk", "payload", "external_id", "meta", "group_key", "content_hash", "pii_findings",
                     "screening_status", "created_at"):
            setattr(obj, name, getattr(stored, name))
        obj._state.adding = False

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, Any, list[Any]]:
        # The deletion service removes the item's annotations, assignments and gold itself (audited), so their
        # read-only admins' missing delete permission does not stand in the way. Items it refuses are listed as
        # protected: the confirmation page names them with the reason and deletes nothing.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        refused = [f"{item}: {reason}" for item in objs if (reason := services.item_delete_refusal(item))]
        return deleted, counts, set(), [*protected, *refused]

    def delete_model(self, request: HttpRequest, obj: Item) -> None:
        services.item_delete(item=obj, by=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Item]) -> None:
        for item in queryset:
            services.item_delete(item=item, by=request.user)


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    """Read-only: a status or lease changed here would leave the item's ``QueueSlot.live`` count wrong."""

    list_display = ("item", "annotator", "stage", "status", "lease_expires_at", "updated_at")
    list_filter = ("status", "stage", "item__project")
    search_fields = ("item__external_id", "annotator__username")
    raw_id_fields = ("item", "suggestion")  # projects hold many thousands of items: no giant <select>
    autocomplete_fields = ("annotator",)
    readonly_fields = ("created_at", "updated_at")
    list_select_related = ("item", "annotator")


@admin.register(QueueSlot)
class QueueSlotAdmin(ReadOnlyAdmin):
    """Read-only: the counter is maintained by the queue services; an edit here would break k."""

    list_display = ("item", "project", "stage", "live", "needed", "priority")
    list_filter = ("stage", "project")
    search_fields = ("item__external_id",)
    list_select_related = ("item", "project")


@admin.register(ItemAssignee)
class ItemAssigneeAdmin(ReadOnlyAdmin):
    """Read-only: ``services.items_assign`` checks the annotators are the project's and enough for each item's k,
    and audits the change."""

    list_display = ("item", "annotator", "assigned_by", "created_at")
    search_fields = ("item__external_id", "annotator__username")
    list_select_related = ("item", "annotator", "assigned_by")


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdmin):
    """Read-only: ``services.annotation_submit`` validates, audits and counts them (imported ones hold
    queue places)."""

    list_display = ("item", "annotator", "stage", "imported", "suggestion_shown", "suggestion_accepted", "guideline",
                    "created_at")
    list_filter = ("item__project", "stage", "imported", "suggestion_shown", "suggestion_accepted")
    search_fields = ("item__external_id", "annotator__username")
    raw_id_fields = ("item", "guideline", "suggestion")
    autocomplete_fields = ("annotator",)
    readonly_fields = ("created_at", "updated_at")
    list_select_related = ("item", "annotator", "guideline__project")


@admin.register(Suggestion)
class SuggestionAdmin(ReadOnlyAdmin):
    """Read-only: suggestions come from the suggester (a retraining or an uploaded file), and an annotation
    records the one it was shown."""

    list_display = ("item", "stage", "model_version", "source", "confidence", "uncertainty", "is_current",
                    "created_at")
    list_filter = ("is_current", "source", "item__project")
    search_fields = ("item__external_id", "model_version")
    raw_id_fields = ("item",)
    readonly_fields = ("created_at",)
    list_select_related = ("item",)


@admin.register(Flag)
class FlagAdmin(ReadOnlyAdmin):
    """Read-only: raising a flag takes the item out of the queue and resolving it puts it back
    (``services.flag_create`` / ``flag_resolve``, and the screening review)."""

    list_display = ("item", "kind", "resolution", "user", "created_at", "resolved_by", "resolved_at")
    list_filter = ("kind", "resolution", "item__project")
    search_fields = ("item__external_id", "note", "resolution_note")
    raw_id_fields = ("item",)
    autocomplete_fields = ("user", "resolved_by")
    readonly_fields = ("created_at",)
    list_select_related = ("item", "user", "resolved_by")


@admin.register(Draft)
class DraftAdmin(LargeTableAdmin):
    list_display = ("assignment", "seconds_spent", "updated_at")
    list_filter = ("assignment__item__project",)
    search_fields = ("assignment__item__external_id", "assignment__annotator__username")
    raw_id_fields = ("assignment",)
    readonly_fields = ("updated_at",)
    list_select_related = ("assignment__item", "assignment__annotator")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """Read-only: the trail is written by the services and never edited."""

    list_display = ("at", "project", "actor", "object_type", "object_id", "action")
    list_filter = ("object_type", "action", "project")
    search_fields = ("actor__username",)
    list_select_related = ("project", "actor")


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ViewAndDeleteAdmin):
    """Registered through the project's Webhooks page or the API (which check the address); the secret is never
    shown here."""

    exclude = ("secret",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_display = ("url", "project", "events", "active", "created_at")
    list_filter = ("active", "project")
    list_select_related = ("project",)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "event", "endpoint", "status")
    list_filter = ("status", "event")
    list_select_related = ("endpoint",)


@admin.register(WebhookAttempt)
class WebhookAttemptAdmin(ReadOnlyAdmin):
    list_display = ("at", "delivery", "status_code", "duration_ms", "ok")
    list_filter = ("ok",)


@admin.register(SsoIdentity)
class SsoIdentityAdmin(LargeTableAdmin):
    """A person's account at the SSO provider linked to a Goldset user: added by hand for a provider that does not
    vouch for emails (docs/deployment.md, "Single sign-on"), deleted to unlink."""

    list_display = ("user", "issuer", "subject", "created_at", "last_login_at")
    search_fields = ("user__username", "subject")
    list_select_related = ("user",)
    fields = ("user", "issuer", "subject")


# DRF's token admin, bounded like ours (one token per user: as many rows as users).
admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class BoundedTokenAdmin(LargeTableAdminMixin, TokenAdmin):
    pass


# Agreement, gold and adjudication models are registered in their own module.
from . import admin_review  # noqa: E402, F401
