"""The project's settings: one service (``services.project_update``) behind the API's PATCH and the settings
page, with options that cannot change once annotation has started locked, and every change audited."""

from __future__ import annotations

import html

import pytest

from annotation import services
from annotation.models import Annotation, AuditEvent, Project, Role
from tests.annotation.settings_form import manager_of, posted, settings_url
from tests.builders import client_for

pytestmark = pytest.mark.django_db




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


# -- the settings page ---------------------------------------------------------------------------------------






def test_the_page_shows_every_option_and_the_locked_task_type_in_korean(make_project):
    project = make_project("nli")
    page = html.unescape(client_for(manager_of(project)).get(settings_url(project),
                                                              HTTP_ACCEPT_LANGUAGE="ko").content.decode())
    for name in ("annotators_per_item", "lease_minutes", "gold_rule", "gold_min_votes", "assist_show",
                 "assist_percent", "queue_order", "pii_replacement", "pii_phone", "name_0_ko", "name_0_en",
                 "remove_0", "new_value"):
        assert f'name="{name}"' in page, name
    assert 'value="함의"' in page and 'value="entailment"' in page
    assert "설정" in page and "잠김" in page and "작업 유형" in page
    # Nothing is annotated yet: labels may still be removed, and only the task type is locked.
    assert "주석 작업이 시작되어" not in page


def test_a_manager_changes_every_safe_option_on_the_page_and_it_is_audited(make_project):
    project = make_project("nli")
    response = client_for(manager_of(project)).post(settings_url(project), posted(
        project, annotators_per_item=5, lease_minutes=45, gold_rule="dawid_skene", gold_min_votes=4,
        gold_on_failure="discarded", assist_show="on", assist_percent=50, queue_order="uncertainty",
        assist_uncertainty="entropy", assist_retrain_every=20, assist_target_score=80, pii_person="pseudonymize",
        pii_replacement="fake", name_1_ko="판단 불가", new_value="unrelated", new_name_ko="무관",
        new_name_en="unrelated"))
    assert response.status_code == 302, response.content.decode()
    project.refresh_from_db()
    assert project.annotators_per_item == 5
    assert project.options == {
        "lease_minutes": 45, "gold_rule": "dawid_skene", "gold_min_votes": 4, "gold_on_failure": "discarded",
        "queue_order": "uncertainty", "assist": {"show": True, "fraction": 0.5, "uncertainty": "entropy",
                                                 "retrain_every": 20, "target_score": 80.0},
        "pii": {"person": "pseudonymize", "replacement": "fake"}}
    assert project.label_schema["labels"] == ["entailment", "neutral", "contradiction", "unrelated"]
    assert project.label_schema["label_names"]["neutral"] == {"ko": "판단 불가", "en": "neutral"}
    assert project.label_schema["label_names"]["unrelated"] == {"ko": "무관", "en": "unrelated"}
    event = AuditEvent.objects.get(project=project, object_type="project")
    assert event.actor == manager_of(project) and event.action == "update"
    assert event.before["annotators_per_item"] == 3 and event.after["annotators_per_item"] == 5
    assert event.before["options"] == {} and event.after["options"]["lease_minutes"] == 45
    assert "unrelated" not in event.before["label_schema"]["labels"]
    assert "unrelated" in event.after["label_schema"]["labels"]
    assert "name" not in event.after  # only what changed


def test_saving_the_page_unchanged_changes_and_audits_nothing(make_project):
    project = make_project("re")
    before = (dict(project.label_schema), dict(project.options))
    response = client_for(manager_of(project)).post(settings_url(project), posted(project))
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.label_schema, project.options) == before
    assert not AuditEvent.objects.filter(project=project, object_type="project").exists()


def test_a_bad_value_is_shown_next_to_its_field_and_nothing_changes(make_project):
    project = make_project("tc")
    response = client_for(manager_of(project)).post(settings_url(project), posted(project, lease_minutes=0,
                                                                                  annotators_per_item=4))
    assert response.status_code == 200
    page = response.content.decode()
    assert 'class="field has-error"' in page and "lease_minutes" in page
    project.refresh_from_db()
    assert project.annotators_per_item == 3 and project.options == {}


def test_a_new_label_that_exists_already_is_refused_on_the_page(make_project):
    project = make_project("tc")
    response = client_for(manager_of(project)).post(settings_url(project), posted(project, new_value="경제"))
    assert response.status_code == 200 and "already a label of this project" in response.content.decode()


def annotate_once(project: Project, make_user, add_member) -> None:
    coder = add_member(project, make_user(), Role.ANNOTATOR)
    item = services.item_create(project=project, payload={"premise": "비가 온다.", "hypothesis": "날씨가 맑다."})
    Annotation.objects.create(item=item, annotator=coder, stage="validation", payload={"label": "contradiction"})


def test_once_annotation_started_removing_a_label_is_locked_with_the_reason(api, make_project, make_user,
                                                                            add_member):
    project = make_project("nli")
    annotate_once(project, make_user, add_member)
    manager = manager_of(project)
    page = html.unescape(client_for(manager).get(settings_url(project), HTTP_ACCEPT_LANGUAGE="en").content.decode())
    assert "Annotation has started (1 annotation uses these labels)" in page
    assert 'name="remove_0"' not in page and 'name="new_value"' in page
    # Through the API (the same service): removing or renaming refused with the reason, nothing stored.
    schema = dict(project.label_schema)
    for labels in (["entailment", "neutral"], ["entailment", "neutral", "contradicts"]):
        response = api(manager).patch(f"/api/projects/{project.id}/", {"label_schema": {**schema, "labels": labels}},
                                      format="json")
        assert response.status_code == 409, response.content
        assert response.json()["field"] == "label_schema.labels"
        assert "contradiction cannot be removed or renamed: Annotation has started" in response.json()["detail"]
    other = api(manager).patch(f"/api/projects/{project.id}/", {"label_schema": {**schema, "gold_min_votes": 2,
                                                                                 "labels": [*schema["labels"], "x"]}},
                               format="json")
    assert other.status_code == 200, other.content  # a new label and a gold setting stay allowed
    project.refresh_from_db()
    assert project.label_schema["labels"] == ["entailment", "neutral", "contradiction", "x"]
    changed = api(manager).patch(f"/api/projects/{project.id}/", {"label_schema": {**schema, "score": 1}},
                                 format="json")
    assert changed.status_code == 409 and changed.json()["field"] == "label_schema.labels"


def test_the_task_type_cannot_change_and_the_reason_is_given(make_project):
    project = make_project("tc")
    with pytest.raises(services.ServiceError) as refused:
        services.project_update(project=project, changes={"task_type": "ner"})
    assert refused.value.field == "task_type" and "make a new project" in refused.value.message


def test_the_api_and_the_page_produce_the_same_project(api, make_project, make_user):
    manager = make_user(can_create=True)
    by_page, by_api = make_project("ner", manager=manager, slug="by-page"), make_project("ner", manager=manager,
                                                                                         slug="by-api")
    response = client_for(manager).post(settings_url(by_page), posted(
        by_page, annotators_per_item=2, lease_minutes=15, assist_show="on", pii_email="detect", name_0_en="human",
        new_value="EV", new_name_ko="사건", new_name_en="event"))
    assert response.status_code == 302, response.content.decode()
    by_page.refresh_from_db()
    names = {**by_api.label_schema["label_names"], "PS": {"ko": "인물", "en": "human"},
             "EV": {"ko": "사건", "en": "event"}}
    patched = api(manager).patch(f"/api/projects/{by_api.id}/", {
        "annotators_per_item": 2,
        "options": {"lease_minutes": 15, "assist": {"show": True}, "pii": {"email": "detect"}},
        "label_schema": {**by_api.label_schema, "labels": [*by_api.label_schema["labels"], "EV"],
                         "label_names": names}}, format="json")
    assert patched.status_code == 200, patched.content
    by_api.refresh_from_db()
    assert (by_api.annotators_per_item, by_api.options, by_api.label_schema) == (
        by_page.annotators_per_item, by_page.options, by_page.label_schema)
    events = AuditEvent.objects.filter(object_type="project").order_by("project_id")
    assert [e.after for e in events] == [{"annotators_per_item": 2, "options": by_api.options,
                                          "label_schema": by_api.label_schema}] * 2


def test_the_suggesters_record_survives_a_settings_change(make_project):
    project = make_project("tc")
    options = {"assist": {"show": True, "model_version": "baseline-3", "source": "baseline", "trained_on": 40}}
    services.project_update(project=project, changes={"options": options})
    response = client_for(manager_of(project)).post(settings_url(project), posted(project, assist_percent=25))
    assert response.status_code == 302, response.content.decode()
    project.refresh_from_db()
    assert project.options["assist"] == {**options["assist"], "fraction": 0.25}
    # In percent on the page, as on the suggester page.
    page = client_for(manager_of(project)).get(settings_url(project), HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert 'name="assist_percent" value="25.0"' in page and "제안을 띄울 배정 비율 (%)" in page


def test_annotators_and_maintainers_cannot_open_the_settings(make_project, make_user, add_member):
    project = make_project("tc")
    for role in (Role.ANNOTATOR, Role.MAINTAINER):
        member = add_member(project, make_user(), role)
        assert client_for(member).get(settings_url(project)).status_code == 403
        assert client_for(member).post(settings_url(project), posted(project, annotators_per_item=9)).status_code == 403
    project.refresh_from_db()
    assert project.annotators_per_item == 3


def test_before_annotation_starts_a_label_can_be_removed_on_the_page(make_project):
    project = make_project("tc")
    response = client_for(manager_of(project)).post(settings_url(project), posted(project, remove_6="on"))
    assert response.status_code == 302, response.content.decode()
    project.refresh_from_db()
    assert "정치" not in project.label_schema["labels"] and "정치" not in project.label_schema["label_names"]
    assert AuditEvent.objects.get(project=project, object_type="project").before["label_schema"]["labels"][-1] == "정치"
