"""The agreement dashboard in headless Chromium: a manager signs in and sees the numbers and the six
server-side SVG plots, with readable axis labels; the page is saved as a screenshot for the docs."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import services
from annotation.agreement import services as agreement_services
from annotation.models import Annotation, Role

from .conftest import PASSWORD, SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]


def test_manager_sees_agreement_plots(page, django_user_model) -> None:
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
    assert "krippendorff_alpha" in page.locator("table.coefficients").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "agreement_dashboard.png"), full_page=True)
