"""What the project settings page posts, for the tests that change settings through it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.urls import reverse

from annotation import services
from annotation.forms import ProjectSettingsForm
from annotation.models import Project, Role


def manager_of(project: Project):
    return project.memberships.get(role=Role.MANAGER).user


def settings_url(project: Project) -> str:
    return reverse("annotation:project-settings", args=[project.pk])


def posted(project: Project, **changes: Any) -> dict[str, Any]:
    """What the page posts when the manager changes ``changes`` and leaves the rest as shown."""
    form = ProjectSettingsForm(project=project, locks=services.project_locks(project))
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if isinstance(field.widget, forms.CheckboxInput):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    data.update(changes)
    return {k: v for k, v in data.items() if v is not False}
