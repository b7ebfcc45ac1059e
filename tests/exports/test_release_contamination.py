"""The dev and test splits of a release checked against the train split of every earlier release of the project:
exact copies (the same item, or the same text) and near duplicates (the import's MinHash groups) are found,
recorded on the release, shown on its page, and nothing else is."""

from __future__ import annotations

import pytest

from exports.models import Release

pytestmark = pytest.mark.django_db








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
