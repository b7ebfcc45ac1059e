"""The release diff page in a real browser, in English and Korean: every kind of change listed, the filter by
kind, the links to the items' pages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.axe import serious_violations
from tests.browser.conftest import PASSWORD
from tests.exports.release_history import expected_changes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Where the screenshots go when a person wants to look at them (GOLDSET_SCREENSHOTS=folder).
SHOTS = os.environ.get("GOLDSET_SCREENSHOTS")


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_diff_page_in_both_languages(browser, live_server, history, locale):
    project, v2 = history["project"], history["v2"]
    context = browser.new_context(base_url=live_server.url, locale=locale, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    try:
        path = f"/projects/{project.pk}/releases/{v2.pk}/"
        page.goto(path)
        page.locator("[name=username]").fill(history["manager"].username)
        page.locator("[name=password]").fill(PASSWORD)
        page.locator("[name=password]").press("Enter")
        page.wait_for_url(f"**{path}")
        page.locator("#release-diff-link").click()
        page.wait_for_selector("#diff-items")
        heading = page.locator("#release-diff h2").inner_text()
        assert heading == ("Changes from release 1.0.0 to release 1.1.0" if locale == "en-US"
                           else "1.0.0 배포에서 1.1.0 배포까지의 변경")
        for kind, items in expected_changes(history).items():
            for item in items:
                assert page.locator(f'tr.change-{kind}[data-item="{item}"]').count() == 1, (kind, item)
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(SHOTS) / f"release-diff-{locale}.png"), full_page=True)
        page.locator("#kind-dropped").click()
        page.wait_for_url("**kind=dropped")
        assert page.locator("tr.change-dropped").count() == 4
        assert page.locator("tr.change-added, tr.change-moved, tr.change-relabelled").count() == 0
        if SHOTS:
            page.screenshot(path=str(Path(SHOTS) / f"release-diff-dropped-{locale}.png"), full_page=True)
        page.locator(f'tr.change-dropped[data-item="{history["ids"]["flagged"]}"] a:not(.provenance-link)').click()
        page.wait_for_url(f"**/agreement/items/{history['ids']['flagged']}/")
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_contamination_on_the_release_page(browser, live_server, planted, locale):
    project, second = planted["project"], planted["second"]
    context = browser.new_context(base_url=live_server.url, locale=locale, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    try:
        path = f"/projects/{project.pk}/releases/{second.pk}/"
        page.goto(path)
        page.locator("[name=username]").fill(planted["manager"].username)
        page.locator("[name=password]").fill(PASSWORD)
        page.locator("[name=password]").press("Enter")
        page.wait_for_url(f"**{path}")
        hits = page.locator("#contamination-hits li")
        assert sorted(int(hits.nth(i).get_attribute("data-item")) for i in range(hits.count())) == sorted(
            item for item, _split, _kind, _against in planted["expected"])
        assert serious_violations(page) == []
        if SHOTS:
            page.locator("#contamination").screenshot(path=str(Path(SHOTS) / f"contamination-{locale}.png"))
        # A hit links to the item's provenance; the references page lists the project and the file.
        page.locator(f'#contamination-hits li[data-item="{planted["moved"]}"] a').click()
        page.wait_for_selector("#provenance-events")
        released = page.locator("#provenance-events li[data-kind=released]")
        assert released.count() == 2
        assert serious_violations(page) == []
        if SHOTS:
            page.screenshot(path=str(Path(SHOTS) / f"provenance-{locale}.png"), full_page=True)
        page.goto(f"/projects/{project.pk}/releases/references/")
        rows = page.locator("#reference-list tbody tr")
        assert rows.count() == 2
        heading = page.locator("#references h2").inner_text()
        assert heading == ("Contamination references" if locale == "en-US" else "오염 점검 참조 데이터")
        assert serious_violations(page) == []
        if SHOTS:
            page.screenshot(path=str(Path(SHOTS) / f"contamination-references-{locale}.png"), full_page=True)
    finally:
        context.close()
