"""axe-core (tests/browser/axe.py) injected by Playwright finds no serious or critical
WCAG 2.x A/AA violation in the workspace of every task type and on the manager's project pages, in English and
in Korean (with the Korean font installed, Korean text is taller and more regions overflow). Every region that can
scroll is reachable with Tab and named, whether or not its content overflows at this window size."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation.models import Annotation

from .axe import serious_violations
from .conftest import PASSWORD, settle, sign_in, sign_in_and_acknowledge

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Elements that can scroll (overflow auto or scroll, shown) but are not in the tab order or have no name.
UNREACHABLE_SCROLLERS = """() => [...document.querySelectorAll('body *')].filter(e => {
    const style = getComputedStyle(e);
    const scrolls = [style.overflowX, style.overflowY].some(o => o === 'auto' || o === 'scroll');
    if (!scrolls || !e.getClientRects().length) return false;
    const named = e.hasAttribute('aria-label') || e.hasAttribute('aria-labelledby') || e.labels?.length > 0;
    return e.tabIndex < 0 || !named;
}).map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : ''))"""


def unreachable_scrollers(page: Any) -> list[str]:
    return page.evaluate(UNREACHABLE_SCROLLERS)


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
@pytest.mark.parametrize("task", ["tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst"])
def test_the_workspace_of_each_task_type(page, seed, task, locale) -> None:
    seeded = seed(task)
    sign_in_and_acknowledge(page, seeded)
    assert serious_violations(page) == []
    assert unreachable_scrollers(page) == []
    page.keyboard.press("Alt+g")  # the guideline drawer scrolls too
    page.wait_for_selector("#ws-guideline:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "ws-guideline"
    assert serious_violations(page) == []
    assert unreachable_scrollers(page) == []


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_the_annotators_home_and_guideline_gate(page, seed, locale) -> None:
    seeded = seed("dst")
    sign_in(page, seeded.annotator.username, "/")
    found = {}
    for href in ("/", reverse("annotation:project-detail", args=[seeded.project.pk]),
                 reverse("annotation:guideline-read", args=[seeded.project.pk])):
        page.goto(href)
        page.wait_for_load_state()
        if violations := serious_violations(page) + unreachable_scrollers(page):
            found[href] = violations
    assert found == {}


def test_a_long_dialogue_is_reachable_and_scrolls_with_the_keyboard(page, seed) -> None:
    """The DST dialogue overflows (more so in a Korean font): Tab reaches it and the keyboard scrolls it."""
    turns = [{"role": "user" if i % 2 == 0 else "sys", "text": f"{i}번째 발화: 서울 동쪽에 있는 숙소를 찾아요."}
             for i in range(40)]
    payload = {"domains": ["숙소"], "dialogue": turns}
    seeded = seed("dst", payloads=[payload])
    sign_in_and_acknowledge(page, seeded)
    dialogue = page.locator("ol.dst-dialogue")
    assert dialogue.evaluate("d => d.scrollHeight > d.clientHeight")
    assert dialogue.get_attribute("aria-label") == "Dialogue"
    for _ in range(30):
        if page.evaluate("document.activeElement.matches('ol.dst-dialogue')"):
            break
        page.keyboard.press("Tab")
    else:
        pytest.fail("Tab never reaches the dialogue")
    page.keyboard.press("PageDown")
    page.wait_for_function("() => document.querySelector('ol.dst-dialogue').scrollTop > 0")
    assert serious_violations(page) == []


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_the_manager_pages(page, seed, locale) -> None:
    seeded = seed("ner")
    page.goto(f"/projects/{seeded.project.pk}/")
    page.locator("[name=username]").fill(seeded.project.created_by.username)
    page.locator("[name=password]").fill(PASSWORD)
    page.locator("[name=password]").press("Enter")
    page.wait_for_url(f"**/projects/{seeded.project.pk}/")
    tabs = page.locator("nav.tabs a")
    links = ["/", *[tabs.nth(i).get_attribute("href") for i in range(tabs.count())]]
    found = {}
    for href in links:
        page.goto(href)
        page.wait_for_load_state()
        if violations := serious_violations(page) + unreachable_scrollers(page):
            found[href] = violations
    assert found == {}


def test_the_comparison_marks_spans_of_labels_never_seen_before_legibly(page, seed) -> None:
    """The review page's span marks of a label set no stylesheet names: two labels, two colours, and axe finds
    nothing serious (colour contrast included)."""
    schema = {"labels": ["ZZ", "QQ"], "descriptions": {"ZZ": "지지", "QQ": "큐큐"}, "allow_overlap": False}
    seeded = seed("ner", payloads=[{"sentence": "가나다 라마바 사아"}], schema=schema)
    item = seeded.items[0]
    Annotation.objects.create(item=item, annotator=seeded.annotator, stage="label", payload={"entities": [
        {"start": 0, "end": 3, "type": "ZZ"}, {"start": 4, "end": 7, "type": "QQ"}]})
    sign_in(page, seeded.project.created_by.username,
            reverse("annotation:review-item", args=[seeded.project.pk, item.pk]))
    marks = page.locator("mark.ent")
    assert marks.count() == 2
    colours = [marks.nth(i).evaluate("m => getComputedStyle(m).backgroundColor") for i in range(2)]
    assert colours[0] != colours[1], colours
    assert serious_violations(page) == []


def test_single_key_shortcuts_can_be_turned_off_and_on(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    page.locator("#ws-single-keys").click()
    page.wait_for_selector("#ws-single-keys-off")
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    seeded.annotator.refresh_from_db()
    assert seeded.annotator.single_key_shortcuts is False
    page.keyboard.press("3")
    assert page.locator("button.choice[aria-pressed=true]").count() == 0  # the key did nothing
    page.locator("button.choice").nth(2).click()  # the buttons still work
    assert page.locator("button.choice[aria-pressed=true]").count() == 1
    page.locator("#ws-single-keys").click()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert page.locator("#ws-single-keys-off").count() == 0
    page.keyboard.press("2")
    assert page.locator("button.choice[aria-pressed=true]").count() >= 1


def test_the_character_widget_tells_caret_and_selection(page, seed) -> None:
    seeded = seed("ner", payloads=[{"sentence": "가상전자 판교 공장"}, {"sentence": "둘째 문장"}])
    sign_in_and_acknowledge(page, seeded)
    text = page.locator(".span-text")
    assert text.get_attribute("aria-description") == "Cursor before character 1 of 10"
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    assert text.get_attribute("aria-description") == "Selected: 가상 (characters 0 to 2)"
    active = text.get_attribute("aria-activedescendant")
    assert page.locator(f"#{active}").inner_text() == "전"
    groups = page.locator("[role=group]")
    assert all(groups.nth(i).get_attribute("aria-label") for i in range(groups.count()))


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_the_disagreement_list_with_span_kinds_and_pairs(page, seed, locale) -> None:
    """The pair and kind filters, the kind chips and the per-type reliability table pass axe."""
    seeded = seed("ner")
    project = seeded.project
    page.goto(f"/projects/{project.pk}/agreement/items/")
    page.locator("[name=username]").fill(project.created_by.username)
    page.locator("[name=password]").fill(PASSWORD)
    page.locator("[name=password]").press("Enter")
    page.wait_for_selector("#f-pair")
    assert serious_violations(page) == []
    page.goto(f"/projects/{project.pk}/agreement/items/?pair=nobody")
    page.wait_for_selector("form.filters .error")
    assert serious_violations(page) == []
