"""The agreement dashboard in headless Chromium: a manager signs in and sees the numbers and the six
server-side SVG plots, with readable axis labels; the page is saved as a screenshot for the docs. In a Korean
browser the dashboard, the disagreement list, an item's comparison and the gold page show no identifier or English
(tests/site/visible_text.py)."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import services
from annotation.agreement import services as agreement_services
from annotation.models import Annotation, Role
from tests.site.visible_text import offending_text

from .conftest import PASSWORD, SCREENSHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]


def _project(django_user_model):
    manager = django_user_model.objects.create_user("dash-manager", password=PASSWORD)
    project = services.project_create(name="YNAT sample", slug="dash-tc", task_type="tc", created_by=manager,
                                      annotators_per_item=3)
    rng = np.random.default_rng(1)
    coders = [django_user_model.objects.create_user(f"coder-{i}", password=PASSWORD) for i in range(4)]
    for coder in coders:
        services.membership_set(project=project, user=coder, role=Role.ANNOTATOR)
    accuracy = [0.9, 0.85, 0.8, 0.35]
    for n in range(60):
        item = services.item_create(project=project, payload={"title": f"기사 제목 {n}"}, external_id=f"t{n}")
        truth = int(rng.integers(0, len(LABELS)))
        for c in rng.choice(len(coders), 3, replace=False):
            label = truth if rng.random() < accuracy[c] else int(rng.integers(0, len(LABELS)))
            Annotation.objects.create(item=item, annotator=coders[c], stage="label",
                                      payload={"label": LABELS[label]}, seconds_spent=float(rng.gamma(4, 3)))
    agreement_services.report_now(project)
    return project, manager


def test_manager_sees_agreement_plots(page, django_user_model) -> None:
    project, manager = _project(django_user_model)
    page.goto(f"/projects/{project.pk}/agreement/", timeout=60_000)  # the first request loads the URL conf
    page.get_by_label("Username").fill(manager.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector("svg.chart", timeout=60_000)
    charts = page.locator("svg.chart")
    # the six plots and the per-label alpha chart; the pair kappa heatmap takes the plain heatmap's place
    assert charts.count() == 7
    for label in ("annotations received", "agreement (share or correlation, 1 = always agrees)",
                  "label given by one annotator", "share of all labels (%)"):
        assert page.get_by_text(label, exact=True).count() >= 1, label
    box = charts.first.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 150
    assert "Krippendorff's alpha" in page.locator("table.coefficients").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "agreement_dashboard.png"), full_page=True)


def test_the_review_pages_read_in_korean(browser, live_server, django_user_model) -> None:
    project, manager = _project(django_user_model)
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_navigation_timeout(60_000)
    data = [project.name, *django_user_model.objects.values_list("username", flat=True),
            *project.items.values_list("external_id", flat=True)]
    try:
        sign_in(page, manager.username, f"/projects/{project.pk}/agreement/")
        assert "Krippendorff 알파" in page.locator("table.coefficients").inner_text()
        assert "명목" in page.locator("table.coefficients").inner_text()
        problems = {}
        for path in ("agreement/", "agreement/items/", f"agreement/items/{project.items.first().pk}/", "gold/"):
            page.goto(f"/projects/{project.pk}/{path}")
            if found := offending_text(page.content(), data=data):
                problems[path] = found
        assert problems == {}
    finally:
        context.close()
