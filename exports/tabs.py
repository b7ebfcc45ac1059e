"""This app's tabs on a project's pages and its links on an item's page (collected by ``annotation.tabs``)."""

from django.utils.translation import gettext_lazy as _

from annotation.permissions import CURATE
from annotation.tabs import ItemLink, ProjectTab

PROJECT_TABS = (
    ProjectTab("releases", _("Releases"), "exports:release-list", CURATE, 120),
    ProjectTab("suggester", _("Suggester"), "exports:suggester", CURATE, 130),
)

ITEM_LINKS = (
    ItemLink(_("The item's history: import, screening, annotations, gold and releases"), "exports:item-provenance",
             CURATE),
)
