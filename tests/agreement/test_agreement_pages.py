"""Manager pages of agreement, gold and adjudication through the test client, and the SVG plot helpers."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.agreement import plots
from annotation.gold.services import gold_for_item
from annotation.models import Adjudication, Annotation, GoldLabel, Role
from tests.builders import client_for

VOTES = {**{f"same{n}": ["사회", "사회", "사회"] for n in range(9)}, "split": ["사회", "경제", "정치"],
         "pair": ["경제", "경제", "사회"]}


@pytest.fixture
def reviewed(make_project, make_user, add_member):
    project = make_project("tc", k=3, slug="pages-agree")
    coders = [add_member(project, make_user(f"page-coder{i}"), Role.ANNOTATOR) for i in range(3)]
    items = {}
    for key, labels in VOTES.items():
        item = services.item_create(project=project, payload={"title": f"기사 {key}"}, external_id=key)
        items[key] = item
        for coder, label in zip(coders, labels, strict=True):
            Annotation.objects.create(item=item, annotator=coder, stage="label", payload={"label": label},
                                      seconds_spent=8.0)
    return project, project.created_by, coders, items


@pytest.mark.django_db
def test_dashboard_computes_then_shows_numbers_and_plots(reviewed, django_capture_on_commit_callbacks):
    project, manager, coders, _ = reviewed
    url = reverse("annotation:review-dashboard", args=[project.pk])
    with django_capture_on_commit_callbacks(execute=True):
        first = client_for(manager).get(url)
    assert first.status_code == 200 and 'http-equiv="refresh"' in first.content.decode()
    page = client_for(manager).get(url).content.decode()
    # coefficients by their names, not their identifiers (which stay in the API and the JSON)
    assert "Krippendorff&#x27;s alpha" in page and "Fleiss&#x27; kappa" in page and "nominal" in page
    assert "krippendorff_alpha" not in page and "fleiss_kappa" not in page
    # progress, alpha over time, annotators, confusion, distribution, per-label alpha, per-pair kappa (which
    # replaces the plain annotator × annotator heatmap for categorical tasks)
    assert page.count("<svg") == 7
    for text in ("Progress over time", "over time, with its 95% bootstrap interval",
                 "Agreement of each annotator with the others", "Cohen&#x27;s kappa of each pair of annotators",
                 "Label confusion between annotators", "Label distribution", "share of all labels (%)",
                 "annotations received"):
        assert text in page, text
    assert "page-coder0" in page
    # The number of resamples reads as a number in each language, with its thousands separator.
    assert "95% intervals from 1,000 bootstrap resamples of items" in page
    korean = client_for(manager).get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "항목을 1,000번 부트스트랩 재표집해" in korean
    assert client_for(coders[0]).get(url).status_code == 403


@pytest.mark.django_db
def test_dashboard_of_a_project_without_annotations_draws_no_empty_charts(make_project, make_user,
                                                                           django_capture_on_commit_callbacks):
    """Items but no annotation yet: no all-zero confusion matrix and no bars of nothing on an axis in 1e-09."""
    project = make_project("re", k=3, slug="pages-empty")
    services.item_create(project=project, payload={"sentence": "카카오는 2010년 김범수가 설립했다.",
                                                   "subject_entity": {"word": "카카오", "start_idx": 0,
                                                                      "end_idx": 2, "type": "ORG"},
                                                   "object_entity": {"word": "김범수", "start_idx": 11,
                                                                     "end_idx": 13, "type": "PER"}},
                         external_id="re-1")
    url = reverse("annotation:review-dashboard", args=[project.pk])
    with django_capture_on_commit_callbacks(execute=True):
        client_for(project.created_by).get(url)
    page = client_for(project.created_by).get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "<title>주석자 간 라벨 혼동" not in page and "<title>라벨 분포</title>" not in page
    assert not re.search(r"\de-\d", page)
    assert '<p class="empty" id="no-annotators">아직 주석을 제출한 주석자가 없습니다.' in page
    assert 'class="table quality"' not in page
    # The disagreement list names no measure it has not used ("불일치도 =" and nothing after it).
    listing = client_for(project.created_by).get(reverse("annotation:review-items", args=[project.pk]),
                                                 HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "<p class=\"muted\">항목 0개</p>" in listing and "불일치도 =" not in listing


def test_an_all_zero_bar_chart_has_a_zero_to_one_axis():
    bars = str(plots.bar_chart(["a", "b"], [0.0, 0.0], title="T", value_label="share (%)"))
    assert re.findall(r'text-anchor="middle">([^<]*)</text>', bars) == ["0", "0.2", "0.4", "0.6", "0.8", "1",
                                                                         "share (%)"]


@pytest.mark.django_db
def test_dashboard_is_hidden_from_outsiders(reviewed, make_user):
    project, *_ = reviewed
    assert client_for(make_user("nosy")).get(reverse("annotation:review-dashboard",
                                                     args=[project.pk])).status_code == 404


@pytest.mark.django_db
def test_items_by_disagreement_page_and_comparison(reviewed):
    project, manager, coders, items = reviewed
    page = client_for(manager).get(reverse("annotation:review-items", args=[project.pk])).content.decode()
    assert page.index(">split<") < page.index(">pair<") < page.index(">same0<")
    filtered = client_for(manager).get(reverse("annotation:review-items", args=[project.pk]),
                                       {"label": "정치"}).content.decode()
    assert ">split<" in filtered and ">pair<" not in filtered
    compare = client_for(manager).get(reverse("annotation:review-item", args=[project.pk,
                                                                              items["split"].pk])).content.decode()
    assert all(f"page-coder{i}" in compare for i in range(3))
    # The label by its English name on an English page (its Korean one in tests/annotation/test_label_names.py).
    assert '<span class="chip">politics</span>' in compare and "{&quot;label&quot;" not in compare
    assert client_for(coders[1]).get(reverse("annotation:review-item", args=[project.pk,
                                                                             items["split"].pk])).status_code == 403


@pytest.mark.django_db
def test_adjudication_page_accepts_an_annotation_and_reports_conflicts(reviewed, make_user, add_member):
    project, manager, coders, items = reviewed
    other = add_member(project, make_user("page-manager2"), Role.MANAGER)
    url = reverse("annotation:review-adjudicate", args=[project.pk, items["split"].pk])
    form = client_for(manager).get(url)
    assert form.status_code == 200 and 'name="version"' in form.content.decode()
    version = gold_for_item(items["split"]).version
    chosen = Annotation.objects.get(item=items["split"], annotator=coders[2])
    done = client_for(manager).post(url, {"choice": str(chosen.pk), "reason": "정치 기사", "version": version})
    assert done.status_code == 302
    late = client_for(other).post(url, {"choice": "edit", "payload": '{"label": "경제"}', "reason": "경제",
                                        "version": version})
    assert late.status_code == 409 and "changed" in late.content.decode()
    bad = client_for(other).post(url, {"choice": "edit", "payload": "{not json", "reason": "x",
                                       "version": GoldLabel.objects.get(item=items["split"]).version})
    assert bad.status_code == 400 and "not valid JSON (line 1, column 2)" in bad.content.decode()
    assert GoldLabel.objects.get(item=items["split"]).payload == {"label": "정치"}
    assert Adjudication.objects.get(item=items["split"]).decided_by == manager
    detail = client_for(manager).get(reverse("annotation:review-item", args=[project.pk,
                                                                             items["split"].pk])).content.decode()
    assert "정치 기사" in detail
    maintainer = add_member(project, make_user("page-maintainer"), Role.MAINTAINER)
    assert client_for(maintainer).get(url).status_code == 403


@pytest.mark.django_db
def test_adjudicating_a_decided_item_says_it_replaces_the_decision(reviewed):
    """Before a decision, the form says nothing of replacing; once a person decided, it says the next releases get
    the new one and where the earlier stays, in the reader's language; the gold card names the status once."""
    project, manager, coders, items = reviewed
    url = reverse("annotation:review-adjudicate", args=[project.pk, items["split"].pk])
    client = client_for(manager)
    assert 'id="adj-replaces"' not in client.get(url).content.decode()
    chosen = Annotation.objects.get(item=items["split"], annotator=coders[2])
    client.post(url, {"choice": str(chosen.pk), "reason": "정치 기사",
                      "version": gold_for_item(items["split"]).version})
    korean = client.get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "이 항목의 정답은 이미 정해져 있습니다(관리자가 판정). 저장하면 다음 배포부터 새 결정으로 바뀝니다." \
        in korean
    assert "이전 결정은 ‘결정’ 목록과 감사 기록에 남습니다." in korean
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "already decided (Adjudicated by a manager): saving replaces it in the next releases." in english
    # "Adjudicated by a manager · adjudication" said it twice.
    assert "Adjudicated by a manager · version" in english and "· adjudication ·" not in english


@pytest.mark.django_db
def test_gold_page_recomputes(reviewed):
    project, manager, *_ = reviewed
    client = client_for(manager)
    response = client.post(reverse("annotation:review-gold-compute", args=[project.pk]))
    assert response.status_code == 302
    page = client.get(reverse("annotation:review-gold", args=[project.pk])).content.decode()
    assert ">split<" in page and "Needs adjudication" in page


@pytest.mark.django_db
def test_structured_payloads_render_as_spans_trees_and_states(make_project, make_user):
    project = make_project("ner", k=2, slug="pages-ner")
    coder = make_user("ner-coder")
    item = services.item_create(project=project, payload={"sentence": "홍길동은 서울에 산다"}, external_id="s1")
    Annotation.objects.create(item=item, annotator=coder, stage="label",
                              payload={"entities": [{"start": 0, "end": 3, "type": "PS"}]})
    page = client_for(project.created_by).get(reverse("annotation:review-item", args=[project.pk,
                                                                                      item.pk])).content.decode()
    assert '<mark class="ent ent-c0" data-type="PS" title="PS">홍길동<sub>PS person</sub></mark>은 서울에 산다' in page

    from annotation.agreement.measures import measure_for
    from annotation.agreement.rendering import payload_html

    tree = payload_html(measure_for("dp"), {"heads": [2, 0], "deprels": ["NP_SBJ", "VP"]},
                        {"tokens": [{"form": "철수가"}, {"form": "왔다"}]}, {})
    assert "<td>철수가</td><td>→ 2 (왔다)</td><td>NP_SBJ</td>" in tree
    states = payload_html(measure_for("dst"), {"states": [["숙소-가격대-저렴"]]},
                          {"dialogue": [{"role": "user", "text": "싼 숙소 <b>"}]}, {})
    assert "숙소-가격대-저렴" in states and "&lt;b&gt;" in states
    answer = payload_html(measure_for("mrc"), {"answer": {"text": "제주도", "start": 4}},
                          {"context": "장마가 제주도에서"}, {})
    assert "<mark>제주도</mark>" in answer


def test_plots_are_labelled_and_escape_text():
    bars = plots.bar_chart(["<script>", "b"], [0.5, None], title="T", value_label="share (%)")
    assert "&lt;script&gt;" in bars and "<script>" not in bars and "n/a" in bars and "share (%)" in bars
    line = plots.line_chart(["1", "2", "3"], [plots.Series("α", [0.5, 0.6, None], [0.4, 0.5, None],
                                                           [0.6, 0.7, None])],
                            title="alpha", x_label="annotations", y_label="alpha")
    assert "<polygon" in line and "<polyline" in line and ">annotations<" in line
    heat = plots.heatmap(["a", "b"], ["a", "b"], [[1.0, None], [0.2, 1.0]], title="H", x_label="x", y_label="y")
    assert heat.count("<rect") == 4 and "n/a" in heat
