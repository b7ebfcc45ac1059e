"""Spans in headless Chromium, in English and Korean: the NER dashboard's reliability of each entity type (αu with
its interval), the disagreement list filtered to boundary slips through its form, and a release page's per-label
reliability; each saved as a screenshot for the docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation import services
from annotation.agreement import services as agreement_services
from annotation.models import Annotation, Role
from exports.models import Release
from tests.builders import build_release

from .conftest import PASSWORD, SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SENTENCE = "홍길동은 서울에서 산다"
PS = {"start": 0, "end": 3, "type": "PS"}
LC = {"start": 5, "end": 7, "type": "LC"}
SLIP = {"start": 5, "end": 9, "type": "LC"}  # 에서 taken into the place


def _ner_project(django_user_model):
    manager = django_user_model.objects.create_user("span-manager", password=PASSWORD)
    project = services.project_create(name="개체명 검토", slug="span-ner", task_type="ner", created_by=manager,
                                      annotators_per_item=2)
    coders = [django_user_model.objects.create_user(f"span-coder{i}", password=PASSWORD) for i in range(2)]
    for coder in coders:
        services.membership_set(project=project, user=coder, role=Role.ANNOTATOR)
    for n in range(24):
        item = services.item_create(project=project, payload={"sentence": SENTENCE}, external_id=f"문장-{n:02d}")
        second = [PS, SLIP] if n % 3 == 0 else [PS] if n % 7 == 0 else [PS, LC]
        for coder, entities in zip(coders, ([PS, LC], second), strict=True):
            Annotation.objects.create(item=item, annotator=coder, stage="label", payload={"entities": entities})
    agreement_services.report_now(project)
    return manager, project


def _sign_in(page, manager, path: str) -> None:
    page.goto(path, timeout=60_000)
    page.locator("[name=username]").fill(manager.username)
    page.locator("[name=password]").fill(PASSWORD)
    page.keyboard.press("Enter")


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_span_reliability_and_boundary_slips(page, live_server, django_user_model, locale, tmp_path) -> None:
    manager, project = _ner_project(django_user_model)
    suffix = "ko" if locale.startswith("ko") else "en"
    words = {"en": ("Reliability of each label", "Entity type", "boundary slip", "span marked by one only"),
             "ko": ("라벨별 신뢰도", "개체 유형", "경계 어긋남", "한 사람만 표시한 범위")}[suffix]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    _sign_in(page, manager, f"/projects/{project.pk}/agreement/")
    section = page.locator("section.per-subject")
    section.wait_for(timeout=60_000)
    assert section.locator("h2").inner_text() == words[0]
    assert section.locator("th").first.inner_text() == words[1]
    types = section.locator("tbody tr").all_inner_texts()
    assert len(types) == 2 and types[0].startswith("LC") and types[1].startswith("PS")
    assert "[" in types[0] and "1.000" in types[1]  # the slipped type has an interval, the agreed one is perfect
    section.screenshot(path=str(SCREENSHOTS / f"agreement_span_types_{suffix}.png"))

    page.goto(f"/projects/{project.pk}/agreement/items/")
    chips = page.locator("table.disagreement td .chip").all_inner_texts()
    assert words[2] in chips and words[3] in chips
    page.locator("#f-kind").select_option("boundary_slip")
    page.locator("form.filters button[type=submit]").click()
    page.wait_for_url("**kind=boundary_slip**")
    rows = page.locator("table.disagreement tbody tr")
    assert rows.count() == 8  # every third sentence
    assert all(words[2] in text for text in rows.all_inner_texts())
    page.locator("#f-pair").select_option("span-coder0,span-coder1")
    page.locator("form.filters button[type=submit]").click()
    page.wait_for_url("**pair=**")
    assert page.locator("table.disagreement tbody tr").count() == 8
    page.screenshot(path=str(SCREENSHOTS / f"disagreement_boundary_slips_{suffix}.png"), full_page=True)

    result = build_release(project, tmp_path / "r", "--version", "1.0.0")
    assert Path(result["out"]).is_dir()
    release = Release.objects.get(project=project, version="1.0.0")
    page.goto(f"/projects/{project.pk}/releases/{release.pk}/")
    reliability = page.locator("#release-reliability")
    assert reliability.locator("h2").inner_text() == words[0]
    assert reliability.locator("tbody tr").count() == 2
    reliability.screenshot(path=str(SCREENSHOTS / f"release_reliability_{suffix}.png"))
