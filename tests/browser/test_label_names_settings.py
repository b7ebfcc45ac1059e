"""Labels in the reader's language and the manager's settings page, in a real browser: an NLI workspace in
Korean offers 함의 / 중립 / 모순 (and submits the values), and a manager changes settings on the Korean page."""

from __future__ import annotations

import re
from typing import Any

import pytest

from annotation import services
from annotation.models import Annotation, AuditEvent

from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HANGUL = re.compile(r"[가-힣]")


def browser_page(browser: Any, live_server: Any, locale: str) -> tuple[Any, Any]:
    context = browser.new_context(base_url=live_server.url, locale=locale, viewport={"width": 1366, "height": 900})
    return context, context.new_page()


def test_the_korean_nli_workspace_shows_the_relations_in_korean_and_submits_the_values(browser, live_server, seed,
                                                                                       tmp_path) -> None:
    seeded = seed("nli", payloads=[{"premise": "숙소는 역에서 가깝다.", "hypothesis": "숙소는 역과 멀다."}])
    project = seeded.project
    services.guideline_acknowledge(user=seeded.annotator, project=project)
    # The hypothesis is written: the item waits for its validators.
    Annotation.objects.create(item=seeded.items[0], annotator=project.created_by, stage="writing",
                              payload={"hypothesis": "숙소는 역과 멀다.", "label": "contradiction"})
    context, page = browser_page(browser, live_server, "ko-KR")
    try:
        sign_in(page, seeded.annotator.username, f"/projects/{project.pk}/annotate/")
        page.wait_for_selector(".widget[data-item] .choices button")
        buttons = page.locator(".widget .choices button")
        assert [text.split(maxsplit=1)[1] for text in buttons.all_inner_texts()] == ["함의", "중립", "모순"]
        assert [buttons.nth(i).get_attribute("data-label") for i in range(3)] == [
            "entailment", "neutral", "contradiction"]
        page.locator("#workspace").screenshot(path=str(tmp_path / "nli-labels-ko.png"))
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.getElementById('workspace')?.dataset.busy === '0'")
        page.wait_for_function("() => !document.querySelector('.widget[data-item]') "
                               "|| document.getElementById('ws-empty')")
    finally:
        context.close()
    stored = Annotation.objects.get(item=seeded.items[0], annotator=seeded.annotator)
    assert stored.payload == {"label": "contradiction"}


@pytest.mark.parametrize("locale", ["ko-KR", "en-US"])
def test_a_manager_changes_settings_on_the_page(browser, live_server, seed, locale, tmp_path) -> None:
    seeded = seed("tc")
    project = seeded.project
    Annotation.objects.create(item=seeded.items[0], annotator=seeded.annotator, stage="label",
                              payload={"label": "경제", "second": None, "third": None})
    context, page = browser_page(browser, live_server, locale)
    try:
        sign_in(page, project.created_by.username, f"/projects/{project.pk}/")
        page.locator("nav.tabs a[href$='/settings/']").click()
        page.wait_for_url(f"**/projects/{project.pk}/settings/")
        korean = locale == "ko-KR"
        assert page.locator("nav.tabs a.active").inner_text() == ("설정" if korean else "Settings")
        locked = page.locator(".settings-locked").inner_text()
        assert ("새 프로젝트로 만드세요" if korean else "make a new project") in locked
        assert ("주석 1개가 이 라벨을 쓰고" if korean else "1 annotation uses these labels") in locked
        assert page.locator("input[name=remove_0]").count() == 0  # annotated: no label can be removed
        if korean:
            headings = page.locator("main h2").all_inner_texts()
            assert all(HANGUL.search(h) for h in headings), headings
        assert page.locator("input[name=name_0_en]").input_value() == "IT and science"
        page.locator("input[name=annotators_per_item]").fill("4")
        page.locator("input[name=lease_minutes]").fill("20")
        page.locator("select[name=pii_person]").select_option("pseudonymize")
        page.locator("input[name=new_value]").fill("날씨")
        page.locator("input[name=new_name_ko]").fill("날씨")
        page.locator("input[name=new_name_en]").fill("weather")
        page.screenshot(path=str(tmp_path / f"settings-{locale}.png"), full_page=True)
        page.locator("form.settings button[type=submit]").click()
        page.wait_for_selector(".messages, .message, [role=status]")
        assert ("설정을 저장했습니다." if korean else "Settings saved.") in page.locator("body").inner_text()
        page.goto(f"/projects/{project.pk}/audit/?object_type=project")
        assert ("프로젝트 설정" if korean else "project settings") in page.locator("main").inner_text()
    finally:
        context.close()
    project.refresh_from_db()
    assert project.annotators_per_item == 4 and project.options["lease_minutes"] == 20
    assert project.options["pii"] == {"person": "pseudonymize"}
    assert project.label_schema["labels"][-1] == "날씨"
    assert project.label_schema["label_names"]["날씨"] == {"ko": "날씨", "en": "weather"}
    assert AuditEvent.objects.filter(project=project, object_type="project").count() == 1
