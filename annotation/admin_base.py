"""What keeps every admin page fast on a project of hundreds of thousands of items.

- A foreign key shown as a ``<select>`` lists every row of the related table (600,000 items rendered into one
  change page ran past gunicorn's 30 s timeout). Every foreign key of these admins that is not an
  ``autocomplete_fields`` entry gets the raw-id widget: a text box with a lookup link, one query for the
  current value. This holds for any foreign key a model gains later, without listing it here.
- A list filter on a plain text or number field (``stage``, ``action``) offers the values found with
  ``SELECT DISTINCT`` over the whole table, a full scan of millions of rows on every list view; here it offers
  the values of the latest ``RECENT_ROWS`` rows instead.
- A change list counts its rows twice (the filtered count and the unfiltered total); the total is not shown
  (``show_full_result_count = False``) and the filtered count stops at ``COUNT_CAP`` rows, so it is bounded
  work however large the table (the pagination then shows the first ``COUNT_CAP`` rows; filter or search to
  narrow further).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.widgets import ForeignKeyRawIdWidget
from django.core.paginator import Paginator
from django.db import models
from django.http import HttpRequest
from django.utils.functional import cached_property

#: The most rows a change list counts.
COUNT_CAP = 10_000
#: How many of the latest rows a plain-value list filter takes its values from.
RECENT_ROWS = 1_000


class CappedCountPaginator(Paginator):
    @cached_property
    def count(self) -> int:
        return self.object_list.order_by()[: COUNT_CAP + 1].count()


class RecentValuesFieldListFilter(admin.AllValuesFieldListFilter):
    """Django's all-values filter, with the values taken from the latest rows rather than the whole table."""

    def __init__(self, field: models.Field, request: HttpRequest, params: dict[str, Any], model: type[models.Model],
                 model_admin: admin.ModelAdmin, field_path: str) -> None:
        super().__init__(field, request, params, model, model_admin, field_path)
        recent = model_admin.get_queryset(request).order_by("-pk").values_list(field_path, flat=True)[:RECENT_ROWS]
        self.lookup_choices = sorted({value for value in recent if value is not None}, key=str)


class LargeTableAdminMixin:
    """Mix into a ``ModelAdmin`` (before it); see the module docstring."""

    show_full_result_count = False
    paginator = CappedCountPaginator

    def get_list_filter(self, request: HttpRequest) -> list[Any]:
        filters: list[Any] = []
        for entry in super().get_list_filter(request):  # type: ignore[misc]
            if isinstance(entry, str) and "__" not in entry:
                field = self.model._meta.get_field(entry)  # type: ignore[attr-defined]
                if isinstance(field, models.CharField | models.IntegerField) and not field.choices:
                    entry = (entry, RecentValuesFieldListFilter)
            filters.append(entry)
        return filters

    def formfield_for_foreignkey(self, db_field: models.ForeignKey, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name not in self.autocomplete_fields and "widget" not in kwargs:  # type: ignore[attr-defined]
            kwargs["widget"] = ForeignKeyRawIdWidget(db_field.remote_field, self.admin_site,  # type: ignore[attr-defined]
                                                     using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]


class LargeTableAdmin(LargeTableAdminMixin, admin.ModelAdmin):
    pass


class NoWritesMixin:
    """No add, change or delete permission: for an admin or an inline of rows only the services write."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(NoWritesMixin, LargeTableAdmin):
    """Rows the services write and keep consistent with others (the queue's slot counters, the audit trail,
    gold versions, releases): staff may list and view them, never add, change or delete them here, where a
    plain save would skip the service that keeps the invariant (docs/ARCHITECTURE.md, "The admin")."""


class ViewAndDeleteAdmin(LargeTableAdmin):
    """Rows nobody edits by hand but whose deletion is harmless (the row is derived, or asked for again):
    list, view and delete only."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
