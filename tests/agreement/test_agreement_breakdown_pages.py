"""The per-label, per-pair and per-version breakdowns on the manager's agreement dashboard (English and Korean)
and in the agreement API."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from annotation.models import Role
from tests.agreement.breakdown_data import bulk_annotations, guideline_version, noisy_labels
from tests.builders import client_for
from tests.site.visible_text import offending_text


@pytest.fixture
def revised(make_project, make_user, add_member, django_capture_on_commit_callbacks):
    """A tc project whose guideline v2 made the labels clearer than v1, and v3 has too few items to tell."""
    project = make_project("tc", k=3, slug="revised")
    coders = [add_member(project, make_user(f"rev-coder{i}"), Role.ANNOTATOR) for i in range(3)]
    rng = np.random.default_rng(2)
    for version, labels in ((1, noisy_labels(rng, 120, [0.6, 0.55, 0.5], missing=0)),
                            (2, noisy_labels(rng, 120, [0.95, 0.95, 0.9], missing=0)),
                            (3, noisy_labels(rng, 8, [0.95, 0.95, 0.9], missing=0))):
        bulk_annotations(project, labels, coders, guideline=guideline_version(project, version), prefix=f"v{version}-")
    url = reverse("annotation:review-dashboard", args=[project.pk])
    with django_capture_on_commit_callbacks(execute=True):
        client_for(project.created_by).get(url)  # queues the report; the eager task computes it at commit
    return project, coders, url


@pytest.mark.django_db
def test_dashboard_shows_labels_pairs_and_versions_in_english(revised, api):
    project, coders, url = revised
    page = client_for(project.created_by).get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    for text in ("Reliability of each label", "One-vs-rest Krippendorff&#x27;s alpha of each label",
                 "Agreement of each pair of annotators", "Cohen&#x27;s kappa of each pair of annotators",
                 "Agreement under each guideline version", "v1 → v2", "helped",
                 "Agreement rose from v1 to v2: the revision helped",
                 "Too few items to tell whether v3 helped: each version needs at least 30 items",
                 "IT과학", "rev-coder0", "Shared items"):
        assert text in page, text
    assert "rev-coder0 × rev-coder1" in page and "rev-coder1 × rev-coder0" in page  # the pair heatmap
    assert "cohen_kappa" not in page and "too_few_items" not in page.replace('class="verdict-too_few_items"', "")
    assert client_for(coders[0]).get(url).status_code == 403
    # each pair links to the disagreement list filtered by the pair: the items the two answered differently
    items_url = reverse("annotation:review-items", args=[project.pk])
    link = f'{items_url}?pair=rev-coder0%2Crev-coder1'
    assert f'href="{link}"' in page
    listed = client_for(project.created_by).get(link, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<option value="rev-coder0,rev-coder1" selected>' in listed
    rows = api(project.created_by).get(f"/api/projects/{project.pk}/agreement/items/",
                                       {"pair": "rev-coder0,rev-coder1", "limit": 500}).json()["results"]
    assert rows and all(len(set(row["labels"])) > 1 for row in rows)


@pytest.mark.django_db
def test_dashboard_breakdowns_read_in_korean(revised, settings):
    project, coders, url = revised
    client = client_for(project.created_by)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "ko"
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    for text in ("라벨별 신뢰도", "주석자 쌍별 일치도", "지침 버전별 일치도", "도움이 됨",
                 "판단하기에는 항목이 너무 적습니다"):
        assert text in page, text
    start = page.index('<section class="card breakdown per-label">')
    end = page.index('<section class="card">', page.index("per-version"))
    assert offending_text(page[start:end], data=[c.username for c in coders]) == []


@pytest.mark.django_db
def test_agreement_api_returns_the_breakdowns(revised, api):
    project, coders, _ = revised
    data = api(project.created_by).get(f"/api/projects/{project.pk}/agreement/").data
    assert [v["version"] for v in data["guideline_versions"]["versions"]] == [1, 2, 3]
    assert [c["verdict"] for c in data["guideline_versions"]["changes"]] == ["improved", "too_few_items"]
    assert len(data["pair_kappa"]["pairs"]) == 3 and len(data["per_label"]["labels"]) == 7
    assert api(coders[0]).get(f"/api/projects/{project.pk}/agreement/").status_code == 403
