"""The disagreement list says what kind of span disagreement an item shows (a boundary slip is its own kind) and
filters by it, by label and by annotator pair: through the API and the page, in English and Korean."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.agreement.slips import BOUNDARY_SLIP, MISSED_SPAN, TYPE_MISMATCH, pair_kinds
from annotation.models import Annotation
from tests.site.visible_text import offending_text

SENTENCE = "홍길동은 서울에서 산다"
PS = {"start": 0, "end": 3, "type": "PS"}
LC = {"start": 5, "end": 7, "type": "LC"}
#: per item: the three annotators' entities
ITEMS = {
    "same": ([PS, LC], [PS, LC], [PS, LC]),
    "slip": ([PS, LC], [PS, {"start": 5, "end": 9, "type": "LC"}], [PS, LC]),  # 에서 taken in by the second
    "type": ([PS, LC], [PS, LC], [PS, {"start": 5, "end": 7, "type": "OG"}]),  # the third calls 서울 an organisation
    "missed": ([PS, LC], [PS], [PS, LC]),  # the second marked no place
}


def test_pair_kinds():
    assert pair_kinds([(0, 3, "PS")], [(0, 3, "PS")]) == set()
    assert pair_kinds([(5, 7, "LC")], [(5, 9, "LC")]) == {BOUNDARY_SLIP}
    assert pair_kinds([(5, 7, "LC")], [(5, 7, "OG")]) == {TYPE_MISMATCH}
    assert pair_kinds([(5, 7, "LC")], [(4, 9, "OG")]) == {BOUNDARY_SLIP, TYPE_MISMATCH}
    assert pair_kinds([(5, 7, "LC")], []) == {MISSED_SPAN}


@pytest.fixture
def ner(make_project, make_user):
    manager = make_user(can_create=True)
    project = make_project("ner", k=3, slug="ner-kinds", manager=manager)
    users = [make_user(f"kind{i}") for i in range(3)]
    for name, answers in ITEMS.items():
        item = services.item_create(project=project, payload={"sentence": SENTENCE}, external_id=name)
        for user, entities in zip(users, answers, strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload={"entities": entities})
    return project, manager, users


def ids(response) -> set[str]:
    return {row["external_id"] for row in response.data["results"]}


@pytest.mark.django_db
def test_api_kinds_and_filters(ner, api, make_user):
    project, manager, users = ner
    url = f"/api/projects/{project.pk}/agreement/items/"
    response = api(manager).get(url)
    assert response.status_code == 200
    kinds = {row["external_id"]: row["kinds"] for row in response.data["results"]}
    assert kinds == {"same": [], "slip": [BOUNDARY_SLIP], "type": [TYPE_MISMATCH], "missed": [MISSED_SPAN]}
    assert response.data["choices"]["kinds"] == [BOUNDARY_SLIP, TYPE_MISMATCH, MISSED_SPAN]
    assert response.data["choices"]["pairs"] == ["kind0,kind1", "kind0,kind2", "kind1,kind2"]
    assert ids(api(manager).get(url, {"kind": BOUNDARY_SLIP})) == {"slip"}
    assert ids(api(manager).get(url, {"kind": MISSED_SPAN})) == {"missed"}
    # a pair keeps the items the two answered differently; ids work as usernames do
    assert ids(api(manager).get(url, {"pair": "kind0,kind1"})) == {"slip", "missed"}
    assert ids(api(manager).get(url, {"pair": f"{users[2].pk},{users[0].pk}"})) == {"type"}
    assert ids(api(manager).get(url, {"pair": "kind0,kind1", "kind": MISSED_SPAN})) == {"missed"}
    assert ids(api(manager).get(url, {"label": "OG"})) == {"type"}
    # bad filters: a clear error naming the field
    for params, field in (({"kind": "typo"}, "kind"), ({"pair": "kind0"}, "pair"), ({"pair": "kind0,kind0"}, "pair"),
                          ({"pair": "kind0,nobody"}, "pair")):
        response = api(manager).get(url, params)
        assert response.status_code == 400 and field in response.json(), params
    # an annotator of the project sees no disagreement list
    assert api(users[0]).get(url).status_code in (403, 404)


@pytest.mark.django_db
def test_kind_filter_is_refused_for_a_task_without_spans(make_project, api):
    project = make_project("tc", slug="tc-kinds")
    response = api(project.created_by).get(f"/api/projects/{project.pk}/agreement/items/", {"kind": BOUNDARY_SLIP})
    assert response.status_code == 400 and "kind" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "ko"])
def test_page_shows_kinds_and_filters_by_slip_and_pair(ner, language):
    project, manager, _users = ner
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(manager)
    url = reverse("annotation:review-items", args=[project.pk])
    page = client.get(url).content.decode()
    slip, pair = ("boundary slip", "Annotator pair") if language == "en" else ("경계 어긋남", "주석자 쌍")
    assert f'<option value="{BOUNDARY_SLIP}">{slip}</option>' in page and pair in page
    assert '<option value="kind0,kind1">kind0 – kind1</option>' in page
    filtered = client.get(url, {"kind": BOUNDARY_SLIP}).content.decode()
    table = filtered[filtered.index('<table class="table disagreement">'):]
    assert ">slip</a>" in table and ">missed</a>" not in table and f"chip kind-{BOUNDARY_SLIP}\">{slip}<" in table
    by_pair = client.get(url, {"pair": "kind0,kind1"}).content.decode()
    table = by_pair[by_pair.index('<table class="table disagreement">'):]
    assert ">slip</a>" in table and ">missed</a>" in table and ">type</a>" not in table
    refused = client.get(url, {"pair": "kind0"}).content.decode()
    assert ("Choose a pair of two different annotators." if language == "en"
            else "서로 다른 주석자 두 명을 쌍으로 고르세요.") in refused
    if language == "ko":
        data = [project.name, manager.username, "kind0", "kind1", "kind2", "kind0 – kind1", "kind0 – kind2",
                "kind1 – kind2", *ITEMS]
        for html in (page, filtered, refused):
            assert not offending_text(html, data=data), offending_text(html, data=data)


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "corpus"), [("en", "labels from the source corpus"), ("ko", "원본 말뭉치 라벨")])
def test_the_pair_filter_names_a_corpus_s_own_labels_as_the_annotator_filter_does(ner, language, corpus):
    """A corpus's labels were imported as a user ``<source>:corpus``: the pair filter names it as what it is, as
    the annotator filter beside it does, never by that internal name."""
    from annotation.display import CORPUS_ANNOTATOR
    from annotation.models import Item, User

    project, manager, _users = ner
    imported = User.objects.create(username=f"news:{CORPUS_ANNOTATOR}")
    Annotation.objects.create(item=Item.objects.get(project=project, external_id="slip"), annotator=imported,
                              stage="label", payload={"entities": [PS]})
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(manager)
    page = client.get(reverse("annotation:review-items", args=[project.pk])).content.decode()
    pair_filter = page[page.index('id="f-pair"'):page.index("</select>", page.index('id="f-pair"'))]
    assert f'<option value="kind0,news:corpus">kind0 – {corpus}</option>' in pair_filter, pair_filter
    assert "news:corpus<" not in pair_filter
