"""This app's tabs on a project's pages (collected by ``annotation.tabs``)."""

from django.utils.translation import gettext_lazy as _

from annotation.permissions import CURATE, MANAGE
from annotation.tabs import ProjectTab

PROJECT_TABS = (
    ProjectTab("import", _("Import"), "datasets_build:project-import", MANAGE, 60),
    ProjectTab("review", _("Screening review"), "datasets_build:project-review", MANAGE, 70),
    ProjectTab("sources", _("Sources"), "datasets_build:project-sources", CURATE, 90),
)
