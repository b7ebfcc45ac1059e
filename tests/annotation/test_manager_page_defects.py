"""Rough edges of the manager pages found by trying the product as a new user (issue 22): the favicon,
the Items tab, the screening review's Drop button, the Gold page's filter, and the agreement dashboard's
chart labels, flags and signed α change."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.agreement import plots
from annotation.models import Annotation, GoldLabel, GoldStatus, Role, ScreeningStatus
from annotation.views_review import annotator_rows
from tests.builders import client_for


@pytest.mark.django_db
def test_favicon_is_served(client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("annotation/favicon.svg")
    home = client.get(reverse("annotation:login")).content.decode()
    assert 'rel="icon"' in home


@pytest.mark.django_db
def test_items_tab_links_each_item_and_names_the_count_column(make_project, make_user, add_member) -> None:
    project = make_project("tc", slug="items-tab")
    coder = add_member(project, make_user("items-coder"), Role.ANNOTATOR)
    item = services.item_create(project=project, payload={"title": "기사 하나"}, external_id="art-1")
    Annotation.objects.create(item=item, annotator=coder, stage="label", payload={"label": "사회"})
    page = client_for(project.created_by).get(reverse("annotation:project-items", args=[project.pk])).content.decode()
    link = reverse("annotation:review-item", args=[project.pk, item.pk])
    assert f'<a href="{link}">art-1</a>' in page
    headers = re.findall(r"<th[^>]*>(.*?)</th>", page)
    assert "Annotations (Label)" in headers and "Label" not in headers


@pytest.mark.django_db
def test_screening_review_drop_button_looks_destructive(make_project) -> None:
    project = make_project("tc", slug="drop-look")
    item = services.item_create(project=project, payload={"title": "검토할 기사"}, external_id="held")
    item.screening_status = ScreeningStatus.NEEDS_REVIEW
    item.save(update_fields=["screening_status"])
    page = client_for(project.created_by).get(reverse("datasets_build:project-review",
                                                      args=[project.pk])).content.decode()
    keep = re.search(r'<button[^>]*value="keep"[^>]*>', page).group(0)
    drop = re.search(r'<button[^>]*value="drop"[^>]*>', page).group(0)
    assert "danger" in drop and "danger" not in keep


@pytest.mark.django_db
def test_gold_page_says_which_status_it_shows_and_opens_on_a_non_empty_one(make_project) -> None:
    project = make_project("tc", slug="gold-filter")
    item = services.item_create(project=project, payload={"title": "기사"}, external_id="g1")
    GoldLabel.objects.create(item=item, status=GoldStatus.RESOLVED, payload={"label": "사회"}, rule="majority")
    client = client_for(project.created_by)
    page = client.get(reverse("annotation:review-gold", args=[project.pk])).content.decode()
    assert "Showing: Resolved by the gold rule (1)" in page and ">g1<" in page
    empty = client.get(reverse("annotation:review-gold", args=[project.pk]),
                       {"status": "needs_adjudication"}).content.decode()
    assert "Showing: Needs adjudication (0)" in empty
    assert "No items have the status “Needs adjudication”" in empty


def test_chart_margins_fit_the_longest_label() -> None:
    long = "org:number_of_employees/members"
    bar = plots.bar_chart(["no_relation", long], [0.5, 0.2], title="t", value_label="v")
    x = float(re.search(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="end">' + re.escape(long), bar).group(1))
    assert x >= plots._text_width(long)  # the label, right-aligned at x, starts inside the chart
    heat = plots.heatmap(["가상전자 연구소 소속 평가자", "b"], ["a", long], [[1, 0], [0, 1]], title="t",
                         x_label="x", y_label="y")
    x = float(re.search(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="end">가상전자', heat).group(1))
    assert x >= plots._text_width("가상전자 연구소 소속 평가자")
    width, height = (int(v) for v in re.search(r'width="(\d+)" height="(\d+)"', heat).groups())
    turned = re.search(r'translate\(([\d.]+) ([\d.]+)\) rotate\(45\)[^>]*>' + re.escape(long), heat)
    reach = 0.7 * plots._text_width(long)
    assert float(turned.group(1)) + reach <= width and float(turned.group(2)) + reach <= height


def test_annotators_table_names_flags_in_words_and_signs_the_alpha_change() -> None:
    rows = annotator_rows({"annotator_quality": [
        {"username": "a", "flags": ["removal_raises_alpha", "too_fast"], "alpha_change_if_removed": 0.0891},
        {"username": "b", "flags": [], "alpha_change_if_removed": -0.058},
        {"username": "c", "flags": [], "alpha_change_if_removed": None}]})
    assert rows[0]["flag_words"] == ["agreement rises without them", "much faster than the others"]
    assert [r["alpha_change"] for r in rows] == ["+0.089", "-0.058", None]
