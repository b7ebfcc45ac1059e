"""Schemathesis against the OpenAPI schema: no 500s, no responses that break the schema.

Every operation of /api/schema/ is called with generated data as a project manager (token auth) against
the WSGI app in process, a bounded number of examples each so the run stays short in CI. Paths that take
a project id are pointed at the manager's real project half of the time, so the handlers behind the
permission checks are reached too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import checks

from annotation import services
from annotation.models import Role, User

MAX_EXAMPLES = 4
CHECKS = [checks.not_a_server_error, checks.response_schema_conformance, checks.content_type_conformance]


def _load_schema() -> schemathesis.BaseSchema:
    # pytest-django has configured Django before collection; serving the schema needs no database.
    from config.wsgi import application

    return schemathesis.openapi.from_wsgi("/api/schema/", application)


schema = _load_schema()


@pytest.fixture
def manager_token(db) -> tuple[str, int]:
    manager = User.objects.create_user("fuzz-manager", password="pw-goldset-123")
    from django.contrib.auth.models import Permission

    manager.user_permissions.add(Permission.objects.get(codename="add_project"))
    project = services.project_create(name="Fuzz", slug="fuzz", task_type="tc", created_by=manager,
                                      annotators_per_item=2)
    annotator = User.objects.create_user("fuzz-annotator", password="pw-goldset-123")
    services.membership_set(project=project, user=annotator, role=Role.ANNOTATOR)
    item = services.item_create(project=project, payload={"title": "퍼징 기사 제목"}, external_id="fuzz-1")
    services.guideline_acknowledge(user=annotator, project=project)
    services.assignment_next(project=project, user=annotator)
    services.annotation_submit(project=project, user=annotator, item_id=item.id, payload={"label": "사회"})
    return Token.objects.create(user=manager).key, project.id


FUZZ = settings(max_examples=MAX_EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.filter_too_much, HealthCheck.data_too_large])


@pytest.mark.django_db
@schema.parametrize()
@FUZZ
def test_api_never_fails_and_keeps_its_schema(case, manager_token) -> None:
    call(case, manager_token)


@pytest.fixture(autouse=True)
def _keep_test_connection_open() -> Iterator[None]:
    """Calling the WSGI app directly fires request_started/finished, whose handler would close the test's
    database connection mid-transaction; Django's own test client disconnects it the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def call(case: schemathesis.Case, manager_token: tuple[str, int]) -> None:
    token, project_id = manager_token
    params = case.path_parameters or {}
    if "project_pk" in params and hash(repr(case.body)) % 2 == 0:
        params["project_pk"] = project_id
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
