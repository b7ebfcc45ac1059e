"""Labels in the reader's language: the label schema's display names (``label_names``) on the workspace,
review, adjudication and gold pages, while payloads, files and the API keep the label values."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from django.urls import reverse

from annotation import services
from annotation.gold.services import gold_compute
from annotation.models import Annotation, Project, Role
from tests.builders import client_for

pytestmark = pytest.mark.django_db


def workspace_config(page: str) -> dict[str, Any]:
    return json.loads(page.split('id="workspace-config" type="application/json">')[1].split("</script>")[0])


def page(user, url: str, language: str) -> str:
    return html.unescape(client_for(user).get(url, HTTP_ACCEPT_LANGUAGE=language).content.decode())


@pytest.fixture
def voted(make_project, make_user, add_member) -> tuple[Project, Any]:
    """An NLI project with one item four validators labelled (three entailment, one contradiction)."""
    project = make_project("nli", k=3, slug="names-nli")
    item = services.item_create(project=project, payload={"premise": "숙소는 역에서 가깝다.",
                                                          "hypothesis": "숙소는 역과 멀다."}, external_id="p1")
    for i, label in enumerate(["entailment", "entailment", "entailment", "contradiction"]):
        coder = add_member(project, make_user(f"names-coder{i}"), Role.ANNOTATOR)
        Annotation.objects.create(item=item, annotator=coder, stage="validation", payload={"label": label})
    return project, item


@pytest.mark.parametrize(("language", "names"), [("ko", ["함의", "중립", "모순"]),
                                                 ("en", ["entailment", "neutral", "contradiction"])])
def test_the_workspace_hands_the_widget_the_names_in_the_readers_language(language, names, make_project,
                                                                          annotator_in):
    project = make_project("nli")
    config = workspace_config(page(annotator_in(project), reverse("annotation:annotate", args=[project.pk]),
                                   language))
    assert config["label_names"] == dict(zip(["entailment", "neutral", "contradiction"], names, strict=True))
    # The widget still offers (and submits) the values.
    assert config["schema"]["labels"] == ["entailment", "neutral", "contradiction"]


def test_an_annotation_submitted_through_the_api_keeps_the_label_value(api, make_project, annotator_in):
    project = make_project("tc")
    item = services.item_create(project=project, payload={"title": "반도체 수출 늘어"}, external_id="t1")
    annotator = annotator_in(project)
    taken = api(annotator).get(f"/api/projects/{project.id}/next/", HTTP_ACCEPT_LANGUAGE="en").json()
    response = api(annotator).post(f"/api/projects/{project.id}/annotations/",
                                   {"item": item.id, "assignment": taken["assignment"],
                                    "payload": {"label": "경제", "second": None, "third": None}},
                                   format="json", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 201, response.content
    assert Annotation.objects.get(item=item).payload == {"label": "경제", "second": None, "third": None}
    body = api(project.created_by).get(f"/api/projects/{project.id}/", HTTP_ACCEPT_LANGUAGE="en").json()
    assert body["label_schema"]["labels"][1] == "경제"
    assert body["label_schema"]["label_names"]["경제"] == {"ko": "경제", "en": "economy"}


@pytest.mark.parametrize(("language", "shown", "hidden"), [("ko", ["함의", "모순"], ["entailment"]),
                                                           ("en", ["entailment", "contradiction"], ["함의"])])
def test_review_adjudication_and_gold_pages_show_the_names(language, shown, hidden, voted):
    project, item = voted
    manager = project.created_by
    gold_compute(project)
    compare = page(manager, reverse("annotation:review-item", args=[project.pk, item.pk]), language)
    adjudicate = page(manager, reverse("annotation:review-adjudicate", args=[project.pk, item.pk]), language)
    gold = page(manager, reverse("annotation:review-gold", args=[project.pk]) + "?status=resolved", language)
    listing = page(manager, reverse("annotation:review-items", args=[project.pk]), language)
    for text in (compare, adjudicate, gold):
        visible = text.split('id="adjudicate-config"')[0]  # the widget's JSON carries the values it submits
        assert all(f'<span class="chip">{name}</span>' in visible or f": {name}</label>" in visible
                   or f"<td>{name}</td>" in visible for name in shown[:1]), visible
        assert not any(f">{value}<" in visible for value in hidden)
    assert f"names-coder3: {shown[1]}</label>" in adjudicate
    assert f"<td>{shown[0]}</td>" in gold
    assert f'<span class="chip">{shown[0]} × 3</span>' in listing
    config = json.loads(adjudicate.split('id="adjudicate-config" type="application/json">')[1].split("</script>")[0])
    assert config["label_names"]["entailment"] == shown[0]
    assert config["annotations"] and all(p["label"] in {"entailment", "contradiction"}
                                         for p in config["annotations"].values())


def test_a_managers_names_replace_the_shipped_ones(api, make_project):
    project = make_project("nli")
    schema = {**project.label_schema, "label_names": {**project.label_schema["label_names"],
                                                      "neutral": {"ko": "판단 불가", "en": "undecidable"}}}
    response = api(project.created_by).patch(f"/api/projects/{project.id}/", {"label_schema": schema},
                                             format="json")
    assert response.status_code == 200, response.content
    project.refresh_from_db()
    assert project.task.label_display(project.label_schema, "ko")["neutral"] == "판단 불가"
    assert project.task.label_display(project.label_schema, "en")["entailment"] == "entailment"


def test_a_schema_from_before_names_shows_the_shipped_ones_and_still_saves(api, make_project):
    project = make_project("mrc")
    without = {k: v for k, v in project.label_schema.items() if k != "label_names"}
    Project.objects.filter(pk=project.pk).update(label_schema=without)
    project.refresh_from_db()
    assert project.task.label_display(project.label_schema, "ko") == {"1": "바꿔 쓰기", "2": "여러 문장 추론",
                                                                      "3": "답할 수 없음"}
    response = api(project.created_by).patch(f"/api/projects/{project.id}/", {"label_schema": without},
                                             format="json")
    assert response.status_code == 200, response.content


@pytest.mark.parametrize(("names", "field", "words"), [
    ([], "label_schema.label_names", "must be an object"),
    ({"maybe": {"ko": "아마도"}}, "label_schema.label_names.maybe", "not a label of this schema"),
    ({"neutral": "중립"}, "label_schema.label_names.neutral", "language → name"),
    ({"neutral": {"fr": "neutre"}}, "label_schema.label_names.neutral.fr", "unknown language"),
    ({"neutral": {"ko": "  "}}, "label_schema.label_names.neutral.ko", "one line of 1 to 80 characters"),
    ({"neutral": {"ko": "x" * 81}}, "label_schema.label_names.neutral.ko", "one line of 1 to 80 characters"),
])
def test_malformed_names_are_refused_with_the_field_and_nothing_changes(names, field, words, api, make_project):
    project = make_project("nli")
    before = dict(project.label_schema)
    response = api(project.created_by).patch(f"/api/projects/{project.id}/",
                                             {"label_schema": {**before, "label_names": names}}, format="json")
    assert response.status_code == 400
    assert words in response.json()[field][0]
    project.refresh_from_db()
    assert project.label_schema == before


def test_the_dashboards_label_charts_name_the_labels():
    from annotation.views_review import dashboard_plots

    report = {"confusion": {"labels": ["entailment", "contradiction"], "matrix": [[2, 1], [1, 0]]},
              "distribution": {"labels": ["entailment", "contradiction"], "project": [3, 1]}}
    charts = dashboard_plots(report, {"entailment": "함의", "contradiction": "모순"})
    assert "함의" in charts["confusion"] and "모순" in charts["distribution"]
    assert "entailment" not in charts["confusion"] + charts["distribution"]


def test_a_release_keeps_the_label_values_whatever_the_names(make_project, tmp_path):
    from tests.builders import build_release, load_records, sample_records

    project = make_project("nli")
    names = {value: {"ko": f"이름-{value}", "en": f"name-{value}"} for value in project.label_schema["labels"]}
    services.project_update(project=project, changes={"label_schema": {**project.label_schema, "label_names": names}})
    load_records(project, sample_records("nli", 20))
    result = build_release(project, tmp_path, "--version", "1.0.0", "--splits", "0.8,0.1,0.1", "--seed", "1")
    text = "".join(path.read_text(encoding="utf-8") for path in (tmp_path / f"{project.slug}-1.0.0").rglob("*")
                   if path.is_file() and path.suffix in {".json", ".jsonl", ".csv", ".md"})
    assert result["splits"] and "entailment" in text and "이름-" not in text and "name-entailment" not in text


def test_a_smaller_ontology_keeps_the_shipped_names_valid(api, make_project):
    # An ontology of the corpus's own (fewer slots) leaves the shipped names of the others in the schema.
    project = make_project("dst")
    ontology = {slot: values for slot, values in project.label_schema["ontology"].items() if slot.startswith("숙소")}
    schema = {**project.label_schema, "ontology": ontology,
              "free_value_slots": [s for s in project.label_schema["free_value_slots"] if s in ontology]}
    response = api(project.created_by).patch(f"/api/projects/{project.id}/", {"label_schema": schema}, format="json")
    assert response.status_code == 200, response.content
    project.refresh_from_db()
    assert project.task.label_display(project.label_schema, "en")["숙소-가격대"] == "hotel – price range"
