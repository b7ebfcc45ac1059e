"""Text search over items (items page, disagreement page, items API), the disagreement filters as choices and
"next to adjudicate", through the pages and the API."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.gold.services import gold_compute
from annotation.models import Annotation, GoldLabel, GoldStatus, Role
from annotation.selectors import SEARCH_MAX_CHARS
from tests.builders import client_for

TITLES = {"seoul": "서울시청에서 기자회견 열려", "busan": "부산 해운대 축제", "pct": "금리 5% 인상_속보",
          "english": "Samsung Galaxy 출시"}
#: Three annotators' labels per item: "seoul" and "english" disagree three ways, "busan" two to one.
VOTES = {"seoul": ["사회", "경제", "정치"], "busan": ["생활문화", "생활문화", "사회"], "pct": ["경제"] * 3,
         "english": ["IT과학", "경제", "세계"]}


@pytest.fixture
def project_with_votes(make_project, make_user, add_member):
    project = make_project("tc", k=3, slug="search")
    coders = [add_member(project, make_user(f"search-coder{i}"), Role.ANNOTATOR) for i in range(3)]
    items = {}
    for key, title in TITLES.items():
        items[key] = services.item_create(project=project, payload={"title": title}, external_id=key)
        for coder, label in zip(coders, VOTES[key], strict=True):
            Annotation.objects.create(item=items[key], annotator=coder, stage="label", payload={"label": label})
    return project, coders, items


def _ids_on(page: str) -> set[str]:
    return {key for key in TITLES if f">{key}<" in page}


@pytest.mark.django_db
def test_items_page_finds_a_korean_substring_and_keeps_it_across_pages(project_with_votes):
    project, _coders, _items = project_with_votes
    client = client_for(project.created_by)
    url = reverse("annotation:project-items", args=[project.pk])
    assert _ids_on(client.get(url, {"q": "서울"}).content.decode()) == {"seoul"}
    assert _ids_on(client.get(url, {"q": "시청"}).content.decode()) == {"seoul"}  # inside the eojeol 서울시청에서
    assert _ids_on(client.get(url, {"q": "galaxy"}).content.decode()) == {"english"}  # case ignored
    # LIKE's wildcards are searched as themselves.
    assert _ids_on(client.get(url, {"q": "5%"}).content.decode()) == {"pct"}
    assert _ids_on(client.get(url, {"q": "_"}).content.decode()) == {"pct"}
    assert _ids_on(client.get(url, {"q": "대구"}).content.decode()) == set()
    # The search box keeps its text, and the pager carries it (URL-encoded).
    for n in range(60):
        services.item_create(project=project, payload={"title": f"서울 소식 {n}"}, external_id=f"more{n}")
    page = client.get(url, {"q": "서울"}).content.decode()
    assert 'value="서울"' in page and "61" in page
    assert "q=%EC%84%9C%EC%9A%B8&amp;page=2" in page
    too_long = client.get(url, {"q": "가" * (SEARCH_MAX_CHARS + 1)})
    assert too_long.status_code == 200 and "at most 200 characters" in too_long.content.decode()
    assert _ids_on(too_long.content.decode()) == set()


@pytest.mark.django_db
def test_items_api_searches_text(project_with_votes, api):
    project, coders, _items = project_with_votes
    url = f"/api/projects/{project.pk}/items/"
    body = api(project.created_by).get(url, {"q": "해운대"}).json()
    assert body["count"] == 1 and body["results"][0]["external_id"] == "busan"
    assert api(project.created_by).get(url, {"q": "x" * (SEARCH_MAX_CHARS + 1)}).status_code == 400
    assert api(coders[0]).get(url, {"q": "서울"}).status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("task", ["dst", "mrc", "nli"])
def test_search_reads_the_task_types_text_fields(task, make_project):
    from tests.builders import load_records, sample_records

    project = make_project(task, slug=f"search-{task}")
    items = load_records(project, sample_records(task, 2))
    text = project.task.item_text(items[0].payload)
    word = next(w for w in reversed(text.split()) if len(w) >= 2)[:2]
    client = client_for(project.created_by)
    page = client.get(reverse("annotation:project-items", args=[project.pk]), {"q": word}).content.decode()
    assert items[0].external_id in page, word
    if task == "dst":
        # A dialogue's JSON keys are not its text.
        page = client.get(reverse("annotation:project-items", args=[project.pk]), {"q": "role"}).content.decode()
        assert "No items match" in page


@pytest.mark.django_db
def test_disagreement_page_searches_and_filters_by_choices(project_with_votes):
    project, _coders, _items = project_with_votes
    client = client_for(project.created_by)
    url = reverse("annotation:review-items", args=[project.pk])
    page = client.get(url).content.decode()
    # Filters are selects populated from what exists, not free-text boxes; a label shown by its name.
    assert re.search(r'<select id="f-label" name="label">.*<option value="IT과학">IT and science</option>', page)
    assert '<option value="search-coder1">search-coder1</option>' in page
    assert not re.search(r'<input id="f-(label|source|annotator)"', page)
    assert _ids_on(client.get(url, {"q": "서울"}).content.decode()) == {"seoul"}
    both = client.get(url, {"q": "서울", "label": "생활문화"}).content.decode()
    assert _ids_on(both) == set() and "No items match" in both
    assert _ids_on(client.get(url, {"label": "생활문화"}).content.decode()) == {"busan"}
    gold_compute(project)
    page = client.get(url, {"gold_status": GoldStatus.NEEDS_ADJUDICATION}).content.decode()
    assert _ids_on(page) == {"seoul", "english"}
    assert f'<option value="{GoldStatus.NEEDS_ADJUDICATION}" selected>' in page


@pytest.mark.django_db
def test_next_to_adjudicate_walks_open_disagreements_in_item_order(project_with_votes, make_user, add_member):
    project, coders, items = project_with_votes
    gold_compute(project)
    waiting = sorted(GoldLabel.objects.filter(item__project=project, status=GoldStatus.NEEDS_ADJUDICATION)
                     .values_list("item_id", flat=True))
    assert waiting == sorted([items["seoul"].pk, items["english"].pk])
    client = client_for(project.created_by)
    nxt = reverse("annotation:review-next", args=[project.pk])
    first = client.get(nxt)
    assert first.url == reverse("annotation:review-adjudicate", args=[project.pk, waiting[0]])
    page = client.get(first.url).content.decode()
    assert f'href="{nxt}?after={waiting[0]}"' in page and "Next to adjudicate" in page
    assert client.get(nxt, {"after": waiting[0]}).url == reverse("annotation:review-adjudicate",
                                                                 args=[project.pk, waiting[1]])
    # Wraps round to the first one still open.
    assert client.get(nxt, {"after": waiting[1]}).url.endswith(f"/items/{waiting[0]}/adjudicate/")
    for item_id in waiting:
        chosen = Annotation.objects.filter(item_id=item_id).first()
        done = client.post(reverse("annotation:review-adjudicate", args=[project.pk, item_id]),
                           {"choice": str(chosen.pk), "reason": "판정", "version": 1})
        assert done.status_code == 302
    last = client.get(nxt, {"after": waiting[1]}, follow=True)
    assert "No open disagreements are left to adjudicate." in last.content.decode()
    assert last.redirect_chain[-1][0].endswith(f"?status={GoldStatus.NEEDS_ADJUDICATION}")
    assert client_for(coders[0]).get(nxt).status_code == 403
    maintainer = add_member(project, make_user("search-maintainer"), Role.MAINTAINER)
    assert client_for(maintainer).get(nxt).status_code == 403


@pytest.mark.django_db
def test_disagreement_api_searches_and_offers_its_choices(project_with_votes, api):
    project, coders, _items = project_with_votes
    url = f"/api/projects/{project.pk}/agreement/items/"
    body = api(project.created_by).get(url, {"q": "해운대"}).json()
    assert [r["external_id"] for r in body["results"]] == ["busan"]
    assert body["choices"]["annotators"] == ["search-coder0", "search-coder1", "search-coder2"]
    assert "생활문화" in body["choices"]["labels"]
    gold_compute(project)
    waiting = api(project.created_by).get(url, {"gold_status": GoldStatus.NEEDS_ADJUDICATION}).json()
    assert {r["external_id"] for r in waiting["results"]} == {"seoul", "english"}
    assert api(project.created_by).get(url, {"q": "가" * (SEARCH_MAX_CHARS + 1)}).status_code == 400
    assert api(coders[0]).get(url, {"q": "서울"}).status_code == 403


@pytest.mark.django_db
def test_disagreement_filters_name_the_label_and_the_corpus_s_labels_in_korean(project_with_votes, make_user):
    """The label filter is 라벨 (the value), not 라벨링 (the stage); the corpus's own labels, imported under an
    internal account name, are offered as what they are."""
    project, _coders, items = project_with_votes
    corpus = make_user(f"{project.slug}:corpus")
    Annotation.objects.create(item=items["seoul"], annotator=corpus, stage="label", payload={"label": "사회"},
                              imported=True)
    page = client_for(project.created_by).get(reverse("annotation:review-items", args=[project.pk]),
                                              HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert '<label for="f-label">라벨</label>' in page
    assert f'<option value="{project.slug}:corpus">원본 말뭉치 라벨</option>' in page
    assert f">{project.slug}:corpus<" not in page
