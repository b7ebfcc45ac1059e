"""The admin never writes what the services keep consistent: every registered model has a decision (read-only,
view-and-delete, or editable with the named limits), and the admin pages answer 403 for the refused writes —
so the queue's slot counters stay right whatever a superuser clicks."""

from __future__ import annotations

from collections import Counter

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.gold.services import gold_compute
from annotation.models import Assignment, AssignmentStatus, Item, Project, QueueSlot, User
from tests.builders import client_for

#: Rows only the services write: list and view, never add, change or delete.
READ_ONLY = {
    "annotation.Assignment", "annotation.QueueSlot", "annotation.ItemAssignee", "annotation.Annotation",
    "annotation.Suggestion",
    "annotation.Flag", "annotation.Membership", "annotation.AuditEvent", "annotation.GoldLabel",
    "annotation.Adjudication", "datasets_build.ImportJob", "datasets_build.NearDuplicate", "exports.Release",
    "exports.ReleaseFile", "exports.SuggesterRun", "exports.RaterId", "exports.ReleaseSplits", "exports.ReleaseItems",
    "exports.ContaminationReference", "exports.ContaminationCheck",
    "annotation.WebhookDelivery", "annotation.WebhookAttempt",
}
#: Derived or asked-for-again rows: view and delete only.
VIEW_AND_DELETE = {"annotation.GuidelineAcknowledgement", "annotation.AgreementReport", "annotation.GoldState",
                   "annotation.WebhookEndpoint"}
#: Edited in the admin, without deletion (users are deactivated; projects and guideline versions are history).
NO_DELETE = {"annotation.User", "annotation.Project", "annotation.Guideline"}
#: Plain rows no service keeps consistent with others.
EDITABLE = {"auth.Group", "annotation.Source", "annotation.Item", "annotation.Draft", "authtoken.TokenProxy",
            "annotation.SsoIdentity"}


def _url(label: str, view: str, *args: object) -> str:
    app, model = label.split(".")
    return reverse(f"admin:{app}_{model.lower()}_{view}", args=args)


def _live_by_assignments() -> dict[tuple[int, str], int]:
    """What ``QueueSlot.live`` must be: leased or submitted assignments per item and stage."""
    return dict(Counter((a.item_id, a.stage) for a in Assignment.objects.filter(
        status__in=[AssignmentStatus.LEASED, AssignmentStatus.SUBMITTED])))


@pytest.fixture
def worked(make_project, annotator_in) -> tuple[Client, Assignment]:
    """A project with one submitted annotation, one live lease, a flag and gold, and a superuser's client."""
    project = make_project("tc", k=3)
    for i in range(3):
        services.item_create(project=project, payload={"title": f"헤드라인 {i}번 기사"}, external_id=f"ynat-{i}")
    annotator, other = annotator_in(project), annotator_in(project)
    label = project.label_schema["labels"][0]
    for user in (annotator, other):
        services.guideline_acknowledge(user=user, project=project)
    first = services.assignment_next(project=project, user=annotator)
    services.annotation_submit(project=project, user=annotator, item_id=first.item_id, payload={"label": label})
    leased = services.assignment_next(project=project, user=annotator)
    services.flag_create(item=Item.objects.filter(project=project).last(), user=None, kind="other", note="?")
    services.assignment_next(project=project, user=other)
    gold_compute(project)
    root = User.objects.create_user("admin-root", is_staff=True, is_superuser=True)
    return client_for(root), leased


@pytest.mark.django_db
def test_every_admin_registration_has_a_write_decision_the_pages_enforce(worked) -> None:
    client, _ = worked
    registered = {model._meta.label: model for model in admin.site._registry}
    assert set(registered) == READ_ONLY | VIEW_AND_DELETE | NO_DELETE | EDITABLE, (
        "a model admin without a decision: classify it here and in docs/ARCHITECTURE.md ('The admin')")
    for label, model in registered.items():
        obj = model._default_manager.first()
        add = client.get(_url(label, "add")).status_code
        assert add == (403 if label in READ_ONLY | VIEW_AND_DELETE else 200), label
        if obj is None:
            continue
        change, delete = _url(label, "change", obj.pk), _url(label, "delete", obj.pk)
        # The change page still shows the row (view permission); saving it is refused.
        assert client.get(change).status_code == 200, label
        if label in READ_ONLY | VIEW_AND_DELETE:
            assert client.post(change, {}).status_code == 403, label
        refused = label in READ_ONLY | NO_DELETE
        assert client.get(delete).status_code == (403 if refused else 200), label
        if refused:
            assert client.post(delete, {"post": "yes"}).status_code == 403, label
            assert model._default_manager.filter(pk=obj.pk).exists(), label


@pytest.mark.django_db
def test_the_admin_cannot_change_or_delete_an_assignment_and_the_slot_counter_stays_right(worked) -> None:
    client, leased = worked
    expected = _live_by_assignments()
    assert dict(((s.item_id, s.stage), s.live) for s in QueueSlot.objects.filter(live__gt=0)) == expected
    label = "annotation.Assignment"
    change = client.post(_url(label, "change", leased.pk), {
        "item": leased.item_id, "annotator": leased.annotator_id, "stage": leased.stage,
        "status": AssignmentStatus.EXPIRED, "suggestion_arm": leased.suggestion_arm})
    assert change.status_code == 403
    assert client.post(_url(label, "delete", leased.pk), {"post": "yes"}).status_code == 403
    # The change list's bulk delete is not offered either: the action is refused and nothing goes.
    client.post(_url(label, "changelist"), {"action": "delete_selected", "_selected_action": [leased.pk],
                                            "post": "yes"})
    slot = _url("annotation.QueueSlot", "change", QueueSlot.objects.get(item_id=leased.item_id).pk)
    assert client.post(slot, {"live": 0}).status_code == 403
    assert client.post(_url("annotation.User", "delete", leased.annotator_id), {"post": "yes"}).status_code == 403
    leased.refresh_from_db()
    assert leased.status == AssignmentStatus.LEASED
    assert Assignment.objects.count() == 3
    assert dict(((s.item_id, s.stage), s.live) for s in QueueSlot.objects.filter(live__gt=0)) == expected


@pytest.mark.django_db
def test_a_project_added_in_the_admin_is_made_by_the_service(worked) -> None:
    client, _ = worked
    response = client.post(_url("annotation.Project", "add"), {
        "name": "Admin TC", "slug": "admin-tc", "description": "", "task_type": "tc", "label_schema": "null",
        "annotators_per_item": "3", "options": "{}", "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0"})
    assert response.status_code == 302, response.content.decode()[:2000]
    project = Project.objects.get(slug="admin-tc")
    # The service's work: the task's schema and its guideline v1, published.
    assert project.label_schema == project.task.default_schema()
    assert [(g.version, g.is_current) for g in project.guidelines.all()] == [(1, True)]
