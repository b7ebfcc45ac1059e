"""The agreement dashboard's per-label, per-pair and per-version sections in headless Chromium, in English and
Korean; both pages are saved as screenshots for the docs."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import services
from annotation.agreement import services as agreement_services
from annotation.models import Annotation, Guideline, Role

from .conftest import PASSWORD, SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]


def _revised_project(django_user_model):
    """A tc project annotated under guideline v1 (unclear), v2 (clearer) and v3 (a handful of items)."""
    manager = django_user_model.objects.create_user("rev-manager", password=PASSWORD)
    project = services.project_create(name="YNAT 개정", slug="rev-tc", task_type="tc", created_by=manager,
                                      annotators_per_item=3)
    coders = [django_user_model.objects.create_user(f"coder-{i}", password=PASSWORD) for i in range(4)]
    for coder in coders:
        services.membership_set(project=project, user=coder, role=Role.ANNOTATOR)
    rng = np.random.default_rng(4)
    accuracy = {1: [0.7, 0.6, 0.55, 0.3], 2: [0.95, 0.9, 0.9, 0.5], 3: [0.95, 0.9, 0.9, 0.5]}
    for version, n_items in ((1, 60), (2, 60), (3, 8)):
        guideline, _ = Guideline.objects.get_or_create(
            project=project, version=version, defaults={"instructions": "지침", "ethics": "윤리", "pii": "개인정보"})
        for n in range(n_items):
            item = services.item_create(project=project, payload={"title": f"기사 제목 {version}-{n}"},
                                        external_id=f"v{version}-{n}")
            truth = int(rng.integers(0, len(LABELS)))
            for c in rng.choice(len(coders), 3, replace=False):
                label = truth if rng.random() < accuracy[version][c] else int(rng.integers(0, len(LABELS)))
                Annotation.objects.create(item=item, annotator=coders[c], stage="label", guideline=guideline,
                                          payload={"label": LABELS[label]}, seconds_spent=float(rng.gamma(4, 3)))
    agreement_services.report_now(project)
    return manager, project


def _open_dashboard(page, manager, project) -> None:
    page.goto(f"/projects/{project.pk}/agreement/", timeout=60_000)
    page.locator("[name=username]").fill(manager.username)
    page.locator("[name=password]").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector("section.per-version", timeout=60_000)


def test_breakdowns_in_english_and_korean(page, browser, live_server, django_user_model) -> None:
    manager, project = _revised_project(django_user_model)
    _open_dashboard(page, manager, project)
    assert page.locator("table.per-label tbody tr").count() == len(LABELS)
    assert page.locator("table.per-pair tbody tr").count() == 6  # 4 annotators, every pair shares ≥ 10 items
    assert page.locator("section.per-pair svg.chart").count() == 1
    verdicts = page.locator("table.version-changes tbody tr").all_inner_texts()
    assert "v1 → v2" in verdicts[0] and "helped" in verdicts[0] and "too few items to tell" in verdicts[1]
    box = page.locator("section.per-version svg.chart").bounding_box()
    assert box is not None and box["width"] > 300
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("section.per-label").screenshot(path=str(SCREENSHOTS / "agreement_per_label_en.png"))
    page.locator("section.per-pair").screenshot(path=str(SCREENSHOTS / "agreement_per_pair_en.png"))
    page.locator("section.per-version").screenshot(path=str(SCREENSHOTS / "agreement_per_version_en.png"))

    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1280, "height": 860})
    korean = context.new_page()
    try:
        _open_dashboard(korean, manager, project)
        assert korean.locator("section.per-label h2").inner_text() == "라벨별 신뢰도"
        assert korean.locator("section.per-pair h2").inner_text() == "주석자 쌍별 일치도"
        verdicts = korean.locator("table.version-changes tbody tr").all_inner_texts()
        assert "도움이 됨" in verdicts[0] and "판단하기에는 항목이 너무 적음" in verdicts[1]
        korean.locator("section.per-label").screenshot(path=str(SCREENSHOTS / "agreement_per_label_ko.png"))
        korean.locator("section.per-pair").screenshot(path=str(SCREENSHOTS / "agreement_per_pair_ko.png"))
        korean.locator("section.per-version").screenshot(path=str(SCREENSHOTS / "agreement_per_version_ko.png"))
    finally:
        context.close()
