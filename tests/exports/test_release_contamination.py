"""The dev and test splits of a release checked against the train split of every earlier release of the project:
exact copies (the same item, or the same text) and near duplicates (the import's MinHash groups) are found,
recorded on the release, shown on its page, and nothing else is."""

from __future__ import annotations

import pytest

from annotation.models import Item
from datasets_build.models import NearDuplicate
from exports import services
from exports.models import Release
from tests.builders import load_records, sample_records

pytestmark = pytest.mark.django_db


def _build(project, version: str, out) -> Release:
    release = services.release_build(project, version=version, keep_splits=True, formats="jsonl", out=out,
                                     refresh_gold=False, agreement=False)
    assert release.status == "unchecked", release.error or release.leakage
    return release


def _split(items, split: str) -> None:
    Item.objects.filter(pk__in=[i.pk for i in items]).update(split=split)


@pytest.fixture
def planted(make_project, make_user, tmp_path):
    manager = make_user(can_create=True)
    project = make_project("tc", manager=manager)
    items = load_records(project, sample_records("tc", 40))
    _split(items[:20], "train")
    _split(items[20:30], "dev")
    _split(items[30:40], "test")
    # Near duplicates inside one release's test split only: no earlier training data, no hit.
    for member in (items[31], items[32]):
        NearDuplicate.objects.create(project=project, item=member, group=items[31].pk, similarity=0.9,
                                     duplicate_of=None if member == items[31] else items[31])
    first = _build(project, "1.0.0", tmp_path)

    moved = items[0]  # the same item, from train in 1.0.0 to test
    _split([moved], "test")
    records = sample_records("tc", 3, prefix="x")
    for n, record in enumerate(records):
        record["title"] = f"새로 들어온 {n}번 기사"
    copy, near, unrelated = load_records(project, records)
    Item.objects.filter(pk=copy.pk).update(content_hash=items[1].content_hash, split="dev")  # 1.0.0 train's text
    _split([near, unrelated], "test")
    for member in (items[2], near):  # a near copy of a 1.0.0 training item, as the import groups them
        NearDuplicate.objects.create(project=project, item=member, group=items[2].pk, similarity=0.85,
                                     duplicate_of=None if member == items[2] else items[2])
    # The originals leave the release (else the release's own leakage check, train against dev and test, fails
    # it): only 1.0.0's train split still holds them.
    Item.objects.filter(pk__in=[items[1].pk, items[2].pk]).update(screening_status="needs_review")
    second = _build(project, "1.1.0", tmp_path)
    return {"project": project, "manager": manager, "first": first, "second": second, "moved": moved.pk,
            "copy": copy.pk, "near": near.pk, "unrelated": unrelated.pk}


def test_exact_and_near_copies_of_earlier_training_data_are_found_and_nothing_else(planted):
    assert planted["first"].contamination == {"against": [], "exact": {}, "near": {}, "hits": [], "clean": True}
    found = Release.objects.get(pk=planted["second"].pk).contamination
    assert found["against"] == ["1.0.0"] and found["clean"] is False
    assert {(h["item"], h["split"], h["kind"], h["release"]) for h in found["hits"]} == {
        (planted["moved"], "test", "exact", "1.0.0"), (planted["copy"], "dev", "exact", "1.0.0"),
        (planted["near"], "test", "near", "1.0.0")}
    assert found["exact"] == {"test": 1, "dev": 1} and found["near"] == {"test": 1}
    assert found["by_split"] == [{"split": "dev", "exact": 1, "near": 0}, {"split": "test", "exact": 1, "near": 1}]


def test_contamination_through_the_api_and_the_page(planted, api, client):
    project, second = planted["project"], planted["second"]
    data = api(planted["manager"]).get(f"/api/projects/{project.pk}/releases/{second.pk}/").data
    assert {h["item"] for h in data["contamination"]["hits"]} == {planted["moved"], planted["copy"], planted["near"]}
    client.force_login(planted["manager"])
    for language, words in (("en", "Dev or test items are in the train split of an earlier release (1.0.0)"),
                            ("ko", "이전 배포(1.0.0)의 train 분할")):
        page = client.get(f"/projects/{project.pk}/releases/{second.pk}/",
                          HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert words in page
        for item in (planted["moved"], planted["copy"], planted["near"]):
            assert f'<li data-item="{item}">' in page
        assert f'<li data-item="{planted["unrelated"]}">' not in page
    clean = client.get(f"/projects/{project.pk}/releases/{planted['first'].pk}/").content.decode()
    assert 'id="contamination-hits"' not in clean
