"""Jobs through a live Celery worker on the real broker and the PostgreSQL test database."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.models import Assignment, AssignmentStatus
from annotation.tasks import expire_leases

pytestmark = [pytest.mark.worker, pytest.mark.postgres]


@pytest.mark.django_db(transaction=True)
def test_expire_leases_runs_on_the_live_worker(live_worker, make_project, annotator_in):
    project = make_project("tc", k=1)
    services.item_create(project=project, payload={"title": "워커가 처리할 기사"})
    annotator = annotator_in(project)
    assignment = services.assignment_next(project=project, user=annotator)
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at="2000-01-01T00:00:00Z")

    result = expire_leases.delay()
    assert result.get(timeout=60) == 1
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.EXPIRED
    assert live_worker.poll() is None  # the worker is still alive after the job
