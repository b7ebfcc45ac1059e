"""The project's settings: one service (``services.project_update``) behind the API's PATCH and the settings
page, with options that cannot change once annotation has started locked, and every change audited."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.models import Project, Role

pytestmark = pytest.mark.django_db


def manager_of(project: Project):
    return project.memberships.get(role=Role.MANAGER).user


def test_a_null_label_schema_is_a_field_error_not_a_database_failure(api, make_project):
    project = make_project("nli")
    response = api(manager_of(project)).patch(f"/api/projects/{project.id}/", {"label_schema": None},
                                               format="json")
    assert response.status_code == 400, response.content
    assert "label_schema" in response.json()
    project.refresh_from_db()
    assert project.label_schema["labels"] == ["entailment", "neutral", "contradiction"]


def test_the_service_refuses_a_null_label_schema_with_a_field_error(make_project):
    # The settings page calls the service directly: no serializer stands between it and the database.
    project = make_project("nli")
    with pytest.raises(services.ServiceError) as refused:
        services.project_update(project=project, changes={"label_schema": None})
    assert refused.value.field == "label_schema" and "object" in refused.value.message
    project.refresh_from_db()
    assert project.label_schema["labels"] == ["entailment", "neutral", "contradiction"]
