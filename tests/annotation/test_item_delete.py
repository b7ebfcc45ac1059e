"""Deleting an item: one service for the API and the admin, audited (never with the item's text), and refused
while a published release may hold the item (a published release must stay reproducible from its project)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from annotation import services
from annotation.models import Annotation, AuditEvent, Item
from exports.models import Release, ReleaseStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def annotated(make_project, annotator_in):
    project = make_project("tc", k=2)
    items = [services.item_create(project=project, payload={"title": f"개인 기사 {i}"}, external_id=f"d-{i}")
             for i in range(3)]
    Annotation.objects.create(item=items[0], annotator=annotator_in(project), stage="label",
                              payload={"label": "경제"})
    return project, items


def publish_release(project) -> Release:
    return Release.objects.create(project=project, version="1.0.0", status=ReleaseStatus.PUBLISHED,
                                  published_at=timezone.now(), created_by=project.created_by)


def test_a_manager_deletes_an_item_through_the_api_and_it_is_audited(api, annotated):
    project, items = annotated
    response = api(project.created_by).delete(f"/api/projects/{project.pk}/items/{items[0].pk}/")
    assert response.status_code == 204
    assert not Item.objects.filter(pk=items[0].pk).exists()
    assert not Annotation.objects.filter(item_id=items[0].pk).exists()
    event = AuditEvent.objects.get(project=project, object_type="item", action="delete")
    assert event.object_id == items[0].pk and event.actor == project.created_by
    assert event.before == {"external_id": "d-0", "content_hash": items[0].content_hash, "split": "",
                            "annotations": 1}
    assert "개인 기사" not in str(event.before)


def test_an_item_a_published_release_may_hold_stays(api, annotated):
    project, items = annotated
    publish_release(project)
    response = api(project.created_by).delete(f"/api/projects/{project.pk}/items/{items[0].pk}/")
    assert response.status_code == 409
    assert "1.0.0" in response.json()["detail"]
    assert Item.objects.filter(pk=items[0].pk).exists()
    assert not AuditEvent.objects.filter(object_type="item", action="delete").exists()
    # An item created after the release cannot be in it.
    later = services.item_create(project=project, payload={"title": "나중 기사"})
    assert api(project.created_by).delete(f"/api/projects/{project.pk}/items/{later.pk}/").status_code == 204


@pytest.fixture
def admin_client(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-1234567"))
    return client


def test_the_admin_deletes_through_the_service(admin_client, annotated):
    _, items = annotated
    url = f"/admin/annotation/item/{items[0].pk}/delete/"
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Item.objects.filter(pk=items[0].pk).exists()
    assert AuditEvent.objects.filter(object_type="item", object_id=items[0].pk, action="delete").exists()
    admin_client.post("/admin/annotation/item/", {"action": "delete_selected", "post": "yes",
                                                 "_selected_action": [items[1].pk, items[2].pk]})
    assert not Item.objects.filter(pk__in=[items[1].pk, items[2].pk]).exists()
    assert AuditEvent.objects.filter(object_type="item", action="delete").count() == 3


def test_the_admin_names_the_release_and_deletes_nothing(admin_client, annotated):
    project, items = annotated
    publish_release(project)
    url = f"/admin/annotation/item/{items[0].pk}/delete/"
    page = admin_client.get(url)
    assert page.status_code == 200 and "published release 1.0.0" in page.content.decode()
    admin_client.post(url, {"post": "yes"})
    admin_client.post("/admin/annotation/item/", {"action": "delete_selected", "post": "yes",
                                                 "_selected_action": [item.pk for item in items]})
    assert Item.objects.filter(project=project).count() == 3
    assert not AuditEvent.objects.filter(object_type="item", action="delete").exists()
