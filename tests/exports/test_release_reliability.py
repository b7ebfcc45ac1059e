"""Per-label reliability of the released data where release decisions are made: the release page (English and
Korean), the dataset card and the release API hold the numbers the agreement report (dashboard, API) gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import Annotation
from exports.models import Release
from tests.builders import build_release, run_agreement
from tests.site.visible_text import offending_text

pytestmark = pytest.mark.django_db

NAMES = ["정치", "경제", "사회"]


def labelled(make_project, make_user, slug: str):
    """60 news titles, four annotators each: 정치 is clear, 경제 and 사회 are often confused."""
    manager = make_user(can_create=True)
    project = make_project("tc", k=4, slug=slug, manager=manager)
    users = [make_user(f"{slug}-{j}") for j in range(4)]
    rng = np.random.default_rng(3)
    for i in range(60):
        truth = i % 3
        item = annotation_services.item_create(project=project, payload={"title": f"기사 {i}"},
                                               external_id=f"{slug}-{i:03d}")
        for user in users:
            label = truth if truth == 0 or rng.random() < 0.7 else 3 - truth
            Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": NAMES[label]})
    return project, manager


def client_for(user, language: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def test_release_page_card_and_api_hold_the_dashboards_per_label_alpha(make_project, make_user, api, tmp_path):
    project, manager = labelled(make_project, make_user, "reliable")
    report = run_agreement(project.slug)
    expected = {row["label"]: row for row in report["per_label"]["labels"] if row["value"] is not None}
    assert set(expected) == set(NAMES)  # the schema's other labels were never given: no value
    assert expected["정치"]["value"] > expected["경제"]["value"]  # the confused labels are less reliable

    result = build_release(project, tmp_path / "r", "--version", "1.0.0")
    release = Release.objects.get(project=project, version="1.0.0")
    assert release.agreement["per_label"] == report["per_label"]

    # the card: one row per label, the same value and interval (4 decimals)
    card = (Path(result["out"]) / "README.md").read_text(encoding="utf-8")
    assert "### Per-label reliability" in card
    for label, row in expected.items():
        lo, hi = row["ci95"]
        assert (f"| {label} | {row['value']:.4f} | [{lo:.4f}, {hi:.4f}] | {row['items']} | {row['annotations']} |"
                in card), label

    # the release API: the stored report with its per-label section
    body = api(manager).get(f"/api/projects/{project.pk}/releases/{release.pk}/").json()
    assert body["agreement"]["per_label"] == report["per_label"]
    # the agreement API: the same numbers
    assert api(manager).get(f"/api/projects/{project.pk}/agreement/").json()["per_label"] == report["per_label"]

    url = reverse("exports:release-detail", args=[project.pk, release.pk])
    for language, heading in (("en", "Reliability of each label"), ("ko", "라벨별 신뢰도")):
        page = client_for(manager, language).get(url).content.decode()
        section = page[page.index('<section class="card" id="release-reliability"'):]
        section = section[:section.index("</section>")]
        assert heading in section
        for label, row in expected.items():
            lo, hi = row["ci95"]
            assert f"<td>{label}</td>" in section
            assert f"{row['value']:.3f}" in section and f"[{lo:.3f}, {hi:.3f}]" in section
        if language == "ko":
            assert not offending_text(section), offending_text(section)


def test_ner_release_shows_unitizing_alpha_per_entity_type(make_project, make_user, tmp_path):
    manager = make_user(can_create=True)
    project = make_project("ner", k=2, slug="reliable-ner", manager=manager)
    users = [make_user(f"rn{i}") for i in range(2)]
    exact = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    slipped = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 9, "type": "LC"}]}
    for n in range(20):
        item = annotation_services.item_create(project=project, payload={"sentence": "홍길동은 서울에서 산다"},
                                               external_id=f"rn{n}")
        for user, payload in zip(users, (exact, slipped if n % 2 else exact), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload=payload)
    unitizing = {c["name"]: c for c in run_agreement(project.slug)["coefficients"]}["krippendorff_alpha_unitizing"]
    result = build_release(project, tmp_path / "n", "--version", "1.0.0")
    card = (Path(result["out"]) / "README.md").read_text(encoding="utf-8")
    lo, hi = unitizing["per_type_ci95"]["LC"]
    assert f"| LC | {unitizing['per_type']['LC']:.4f} | [{lo:.4f}, {hi:.4f}] | — | — |" in card
    release = Release.objects.get(project=project, version="1.0.0")
    page = client_for(manager, "ko").get(reverse("exports:release-detail", args=[project.pk, release.pk]))
    section = page.content.decode()
    section = section[section.index('id="release-reliability"'):]
    section = section[:section.index("</section>")]
    assert "개체 유형" in section and f"{unitizing['per_type']['LC']:.3f}" in section
