"""This app's tabs on a project's pages (collected by ``annotation.tabs``)."""

from django.utils.translation import gettext_lazy as _

from annotation.permissions import CURATE
from annotation.tabs import ProjectTab

PROJECT_TABS = (
    ProjectTab("releases", _("Releases"), "exports:release-list", CURATE, 120),
    ProjectTab("suggester", _("Suggester"), "exports:suggester", CURATE, 130),
)
