"""The annotation budget on the settings page, in a real browser, in Korean and English: a manager sets k per split
and an agreement sample, sees how many items get each k, gets a refusal next to its field, and axe finds no serious
violation on the page."""

from __future__ import annotations

import re

import pytest

from annotation import services

from .axe import serious_violations
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HANGUL = re.compile(r"[가-힣]")


@pytest.mark.parametrize("locale", ["ko-KR", "en-US"])
def test_a_manager_sets_a_budget_by_split_and_a_sample(browser, live_server, seed, locale, tmp_path) -> None:
    seeded = seed("tc", k=2)
    project = seeded.project
    for i, split in enumerate(["train"] * 6 + ["dev"] * 2):
        services.item_create(project=project, payload={"title": f"예산 화면 기사 {i}"}, external_id=f"p-{i}",
                             split=split)
    context = browser.new_context(base_url=live_server.url, locale=locale, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    korean = locale == "ko-KR"
    try:
        sign_in(page, project.created_by.username, f"/projects/{project.pk}/settings/")
        section = page.locator(".settings-budget")
        assert section.locator("h2").inner_text() == ("주석 예산" if korean else "Annotation budget")
        page.locator("input[name=budget_train]").fill("1")
        page.locator("input[name=budget_dev]").fill("5")
        page.locator("input[name=rule_0_k]").fill("3")
        page.locator("select[name=rule_0_split]").select_option("train")
        page.locator("input[name=rule_0_sample]").fill("50")
        page.locator("input[name=rule_0_seed]").fill("13")
        page.locator("form.settings button[type=submit]").click()
        page.wait_for_url(f"**/projects/{project.pk}/settings/")
        project.refresh_from_db()
        assert project.options["budget"] == {"splits": {"train": 1, "dev": 5},
                                             "rules": [{"k": 3, "split": "train", "sample": 0.5, "seed": 13}]}
        summary = page.locator(".budget-summary").inner_text()
        assert ("항목당 5명: 항목 2개" if korean else "5 per item: 2 items") in summary
        text = section.inner_text()
        if korean:  # reads as Korean: every line of the section has Hangul or is a number
            lines = [line for line in text.splitlines() if line.strip() and not line.strip().isdigit()]
            assert all(HANGUL.search(line) for line in lines), lines
        section.screenshot(path=str(tmp_path / f"budget-{locale}.png"))
        assert serious_violations(page) == []
        # a rule without a condition: the error sits in its row
        page.locator("input[name=rule_1_k]").fill("2")
        page.locator("form.settings button[type=submit]").click()
        page.wait_for_load_state()
        error = page.locator(".budget-rules td.has-error .error").first.inner_text()
        assert error == ("규칙에는 조건이 있어야 합니다: 분할, 표본, 출처 또는 라벨." if korean
                         else "A rule needs a condition: a split, a sample, a source or a label.")
        section.screenshot(path=str(tmp_path / f"budget-error-{locale}.png"))
        project.refresh_from_db()
        assert len(project.options["budget"]["rules"]) == 1
        # the assignment form: dev items to two annotators is too few for k = 5; the error names how many
        assign = page.locator("form.assign-items")
        assign.locator("select[name=assign-split]").select_option("dev")
        assign.locator("input[name=assign-annotators]").first.check()
        assign.locator("button[type=submit]").click()
        page.wait_for_load_state()
        assert ("5명 이상을 고르세요" if korean else "choose at least 5") in assign.inner_text()
        page.locator("form.assign-items").screenshot(path=str(tmp_path / f"assign-{locale}.png"))
        assert serious_violations(page) == []
    finally:
        context.close()
