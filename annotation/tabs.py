"""The project page's tabs, contributed by each app.

An app lists its tabs in a ``PROJECT_TABS`` sequence and names it in its AppConfig (``project_tabs =
"<app>.tabs.PROJECT_TABS"``); the shared project header (``annotation/project_base.html``) renders the
collected list, so the annotation app's templates name no other app's pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.apps import apps
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from .permissions import ANNOTATE, CURATE, MANAGE, MEMBERS


@dataclass(frozen=True)
class ProjectTab:
    #: The ``tab`` value a page puts in its context to mark this tab active.
    key: str
    label: str | Promise
    #: A namespaced URL name taking the project id.
    url_name: str
    #: Roles that see the tab (``annotation.permissions`` sets).
    roles: frozenset[str]
    #: Place among all apps' tabs, smallest first.
    order: int


PROJECT_TABS = (
    ProjectTab("overview", _("Overview"), "annotation:project-detail", MEMBERS, 0),
    ProjectTab("annotate", _("Annotate"), "annotation:annotate", ANNOTATE, 10),
    ProjectTab("mine", _("My submissions"), "annotation:my-submissions", ANNOTATE, 15),
    ProjectTab("read", _("Guideline"), "annotation:guideline-read", ANNOTATE, 20),
    ProjectTab("guideline", _("Guideline"), "annotation:project-guideline", CURATE, 30),
    ProjectTab("members", _("Members"), "annotation:project-members", CURATE, 40),
    ProjectTab("items", _("Items"), "annotation:project-items", CURATE, 50),
    ProjectTab("audit", _("Audit trail"), "annotation:project-audit", MANAGE, 80),
    ProjectTab("settings", _("Settings"), "annotation:project-settings", MANAGE, 85),
    ProjectTab("webhooks", _("Webhooks"), "annotation:project-webhooks", MANAGE, 88),
    ProjectTab("agreement", _("Agreement"), "annotation:review-dashboard", CURATE, 100),
    ProjectTab("gold", _("Gold"), "annotation:review-gold", CURATE, 110),
)


@cache
def all_project_tabs() -> tuple[ProjectTab, ...]:
    """Every installed app's tabs, in order."""
    found: list[ProjectTab] = []
    for config in apps.get_app_configs():
        path = getattr(config, "project_tabs", None)
        if path:
            found.extend(import_string(path))
    return tuple(sorted(found, key=lambda tab: tab.order))


def project_tabs(project_id: int, role: str | None, active: str) -> list[dict[str, object]]:
    """The tabs ``role`` sees on a project's pages: label, URL and whether it is the page shown."""
    return [{"key": tab.key, "label": tab.label, "url": reverse(tab.url_name, args=[project_id]),
             "active": tab.key == active}
            for tab in all_project_tabs() if role in tab.roles]


@dataclass(frozen=True)
class ItemLink:
    """A link another app adds to an item's page (``item_links`` in its AppConfig names a sequence of them)."""

    label: str | Promise
    #: A namespaced URL name taking the project id and the item id.
    url_name: str
    roles: frozenset[str]


@cache
def all_item_links() -> tuple[ItemLink, ...]:
    found: list[ItemLink] = []
    for config in apps.get_app_configs():
        path = getattr(config, "item_links", None)
        if path:
            found.extend(import_string(path))
    return tuple(found)


def item_links(project_id: int, item_id: int, role: str | None) -> list[dict[str, object]]:
    """The links ``role`` sees on an item's page: label and URL."""
    return [{"label": link.label, "url": reverse(link.url_name, args=[project_id, item_id])}
            for link in all_item_links() if role in link.roles]

