"""A Korean manager picks MACE as the gold rule on the settings page and builds a release with soft labels from
the release page; the release's JSONL carries each item's votes and the model's posteriors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation import services as annotation_services
from annotation.models import Annotation
from exports.models import Release, ReleaseStatus
from tests.gold.simulated import simulated

from .conftest import PASSWORD, SCREENSHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAMES = ["정치", "경제", "사회"]


def test_mace_and_soft_labels_are_chosen_on_korean_pages(browser: Any, live_server: Any, make_project, make_user,
                                                         release_root) -> None:
    project = make_project("tc", k=5, slug="soft-browser")
    manager = project.created_by
    manager.set_password(PASSWORD)
    manager.save()
    labels, _truth = simulated(17, n_items=60)
    users = [make_user(f"soft-browser-u{j}") for j in range(labels.shape[1])]
    for i, row in enumerate(labels):
        item = annotation_services.item_create(project=project, payload={"title": f"기사 제목 {i}"},
                                               external_id=f"sb-{i:03d}")
        for user, value in zip(users, row, strict=True):
            if value >= 0:
                Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": NAMES[value]})
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        settings_path = f"/projects/{project.pk}/settings/"
        sign_in(page, manager.username, settings_path)
        page.locator("select[name=gold_rule]").select_option("mace")
        assert "MACE(주석자가 추측하지 않고" in page.locator("select[name=gold_rule]").inner_text()
        page.locator("select[name=gold_rule]").screenshot(path=str(SCREENSHOTS / "gold-rule-mace-ko.png"))
        with page.expect_navigation():  # the settings form's own button (the assignment form follows it)
            page.get_by_role("button", name="설정 저장").click()
        project.refresh_from_db()
        assert project.options.get("gold_rule") == "mace"

        page.goto(f"/projects/{project.pk}/releases/")
        box = page.locator("input[name=soft_labels]")
        assert box.is_visible() and not box.is_checked()  # off unless asked for
        form_text = page.locator("form[action='#build-release']").inner_text()
        assert "소프트 라벨" in form_text and "주석자 모형" in form_text
        page.locator("form[action='#build-release']").screenshot(path=str(SCREENSHOTS / "release-soft-labels-ko.png"))
        box.check()
        for fmt in ("klue", "csv"):
            page.locator(f"input[name=formats][value={fmt}]").uncheck()
        page.locator("form[action='#build-release'] button[type=submit]").click()
        page.wait_for_selector("#release-status", timeout=60_000)  # the build runs in the request here (eager)
        release = Release.objects.get(project=project)
        assert release.options["soft_labels"] is True
        assert release.status in (ReleaseStatus.PASSED, ReleaseStatus.UNCHECKED, ReleaseStatus.BUILDING), release.error
        release.refresh_from_db()
        rows = [json.loads(line) for line in (Path(release.out_dir) / "jsonl" / "train.jsonl").read_text(
            encoding="utf-8").splitlines()]
        assert rows and all(sum(r["label_votes"].values()) == 5 for r in rows)
        assert all(abs(sum(r["label_posteriors"].values()) - 1) < 1e-5 for r in rows)
    finally:
        context.close()
    assert not errors, errors
