"""The rough edges found by trying the product as a new user (issue 22), each driven in headless Chromium:
the RE picker's Enter, DST's stray "null", STS button texts, clipped RE labels, the flag dialog's radios
and its "ambiguous" kind, the language switch and the manager's tabs at 1366 px."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.models import Annotation, Flag, Role

from .conftest import PASSWORD, settle, sign_in, sign_in_and_acknowledge, submit_and_reload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_re_arrows_then_enter_submits_the_highlighted_relation(page, seed) -> None:
    seeded = seed("re")
    sign_in_and_acknowledge(page, seeded)
    labels = seeded.project.label_schema["labels"]
    page.keyboard.press("Space")  # picks the first relation
    assert page.locator(".re-chosen").inner_text() == f"no relation ({labels[0]})"  # its name, then its value
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.locator(".re-option.active").get_attribute("data-label") == labels[2]
    submit_and_reload(page)  # Enter
    stored = Annotation.objects.get(item=seeded.items[0], annotator=seeded.annotator).payload
    assert stored == {"label": labels[2]}


def test_re_one_enter_after_picking_submits(page, seed) -> None:
    """As docs/workspace.md says: Enter in the search box picks the highlighted relation and submits it, and so does
    Enter after clicking a relation; neither needs a second Enter."""
    seeded = seed("re")
    first, second = seeded.items
    sign_in_and_acknowledge(page, seeded)
    page.keyboard.press("/")
    page.keyboard.type("founded_by")
    page.keyboard.press("Enter")
    page.wait_for_selector(f".widget[data-item='{second.pk}']")
    settle(page)
    assert Annotation.objects.get(item=first).payload == {"label": "org:founded_by"}
    page.locator(".re-option[data-label='per:title']").click()
    page.keyboard.press("Enter")
    page.wait_for_selector("#ws-empty")
    settle(page)
    assert Annotation.objects.get(item=second).payload == {"label": "per:title"}


def test_re_long_labels_are_not_clipped(page, seed) -> None:
    seeded = seed("re")
    sign_in_and_acknowledge(page, seeded)
    clipped = page.eval_on_selector_all(
        ".re-option", "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.dataset.label)")
    assert clipped == []
    assert "org:number_of_employees/members" in page.locator(".re-picker").inner_text()


def test_dst_shows_no_stray_null(page, seed) -> None:
    seeded = seed("dst")
    sign_in_and_acknowledge(page, seeded)
    state = page.locator(".dst-state").inner_text()
    assert "null" not in state
    assert state.strip().endswith("No slots yet.")


def test_sts_buttons_show_each_score_once(page, seed) -> None:
    seeded = seed("sts", schema={"min": 0, "max": 5, "step": 0.5})
    sign_in_and_acknowledge(page, seeded)
    texts = [t.strip().split("\n")[0] for t in page.locator("button.score").all_inner_texts()]
    assert texts == ["0", "0.5", "1", "1.5", "2", "2.5", "3", "3.5", "4", "4.5", "5"]
    # A whole score carries the guideline's meaning under its number (the reader's language), once.
    assert page.locator("button.score[data-score='5'] .score-name").inner_text() == "same meaning"
    assert page.locator("button.score[data-score='4.5'] .score-name").count() == 0
    assert page.locator("button.score[data-score='3']").get_attribute("aria-keyshortcuts") == "3"


def test_mrc_question_type_buttons_show_one_shortcut_each(page, seed) -> None:
    context = "가람시는 이달부터 시립도서관의 평일 운영 시간을 밤 10시까지 연장한다."
    seeded = seed("mrc", payloads=[{"title": "도서관", "context": context}])  # no question yet: the writing stage
    sign_in_and_acknowledge(page, seeded)
    buttons = page.locator("button[data-qtype]")
    assert buttons.count() == 3
    for i in range(3):
        button = buttons.nth(i)
        assert button.locator("kbd").all_inner_texts() == [f"Alt+{i + 1}"]
        label = button.evaluate("b => [...b.childNodes].filter(n => n.nodeName !== 'KBD')"
                                ".map(n => n.textContent).join('').trim()")
        assert not any(word.isdigit() for word in label.split()), label  # no second, bare "1" badge
        assert button.get_attribute("aria-keyshortcuts") == f"Alt+{i + 1}"


def test_an_empty_queue_held_by_others_is_not_called_done(page, seed, django_user_model) -> None:
    """The last item is leased to another annotator: the workspace says others are working on it and offers to
    check again and the next project with work; the disabled buttons look disabled; once the other annotator
    submits, checking again tells the annotator they are done."""
    seeded = seed("tc", payloads=[{"title": "마지막 남은 기사 제목"}])
    kim = django_user_model.objects.create_user("kim", password=PASSWORD)
    services.membership_set(project=seeded.project, user=kim, role=Role.ANNOTATOR)
    services.guideline_acknowledge(user=kim, project=seeded.project)
    held = services.assignment_next(project=seeded.project, user=kim)
    other = services.project_create(name="다음 프로젝트", slug="next-tc", task_type="tc",
                                    created_by=seeded.project.created_by, annotators_per_item=1)
    services.item_create(project=other, payload={"title": "다음 프로젝트의 기사"}, external_id="next-0")
    services.membership_set(project=other, user=seeded.annotator, role=Role.ANNOTATOR)
    services.guideline_acknowledge(user=seeded.annotator, project=seeded.project)
    sign_in(page, seeded.annotator.username, f"/projects/{seeded.project.pk}/annotate/")
    empty = page.locator("#ws-empty")
    empty.wait_for()
    assert empty.get_attribute("data-reason") == "held"
    assert "Other annotators are working on the last items" in empty.inner_text()
    assert "Nothing left" not in page.locator("#ws-item").inner_text()
    assert page.locator("#ws-next-project").get_attribute("href") == f"/projects/{other.pk}/annotate/"
    assert "다음 프로젝트" in page.locator("#ws-next-project").inner_text()
    submit = page.locator("#ws-submit")
    assert submit.is_disabled()
    style = submit.evaluate("b => { const s = getComputedStyle(b); return [s.backgroundColor, s.cursor]; }")
    assert style == ["rgb(236, 238, 242)", "not-allowed"]  # grey, not the active blue
    services.annotation_submit(project=seeded.project, user=kim, item_id=held.item_id, payload={"label": "사회"})
    page.locator("#ws-check-again").click()
    page.wait_for_selector("#ws-empty[data-reason=done]")
    assert "Nothing left for you in this project" in page.locator("#ws-empty").inner_text()
    assert page.locator("#ws-check-again").count() == 0
    page.locator("#ws-next-project").click()
    page.wait_for_url(f"**/projects/{other.pk}/**")


def test_flag_dialog_offers_ambiguous_with_radios_next_to_their_labels(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    page.keyboard.press("Alt+f")
    dialog = page.locator("#ws-flag-dialog")
    dialog.wait_for(state="visible")
    radios = dialog.locator("input[name=kind]")
    values = [radios.nth(i).get_attribute("value") for i in range(radios.count())]
    assert "ambiguous" in values
    for i in range(radios.count()):
        radio, label = radios.nth(i).bounding_box(), dialog.locator("label.check").nth(i).bounding_box()
        assert radio["width"] < 30  # not stretched across the line
        assert radio["x"] - label["x"] < 10  # at the start of its label, not centred away from it
    page.keyboard.press(str(values.index("ambiguous") + 1))
    page.keyboard.press("Tab")
    page.keyboard.type("제목만으로는 주제를 정할 수 없음")
    dialog.get_by_role("button", name="Flag").click()
    # The flagged item leaves the queue once the server has stored the flag: the next item is shown.
    page.wait_for_function("first => document.querySelector('.widget[data-item]')?.dataset.item !== String(first)",
                           arg=seeded.items[0].pk)
    settle(page)
    assert Flag.objects.get(item=seeded.items[0]).kind == "ambiguous"


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_language_switch_and_all_tabs_fit_at_1366(browser, live_server, seed, locale) -> None:
    seeded = seed("ner")
    context = browser.new_context(base_url=live_server.url, locale=locale, viewport={"width": 1366, "height": 800})
    try:
        page = context.new_page()
        sign_in(page, seeded.project.created_by.username, f"/projects/{seeded.project.pk}/")
        switch = page.locator(".lang-switch")
        assert "English한국어" not in switch.inner_text().replace("\n", "")
        english, korean = (switch.locator(f"button[value={code}]").bounding_box() for code in ("en", "ko"))
        assert korean["x"] - (english["x"] + english["width"]) >= 6
        tabs = page.locator("nav.tabs a")
        assert tabs.count() == 14
        nav = page.locator("nav.tabs")
        assert nav.evaluate("n => n.scrollWidth <= n.clientWidth")
        rows = {round(tabs.nth(i).bounding_box()["y"]) for i in range(tabs.count())}
        assert len(rows) == 1, "the tabs take more than one row"
        right = nav.bounding_box()["x"] + nav.bounding_box()["width"]
        for i in range(tabs.count()):
            box = tabs.nth(i).bounding_box()
            assert box["x"] + box["width"] <= right + 0.5, tabs.nth(i).inner_text()
            lines = tabs.nth(i).evaluate("a => { const r = document.createRange(); r.selectNodeContents(a);"
                                         " return new Set([...r.getClientRects()].map(q => Math.round(q.top))).size; }")
            assert lines == 1, f"the tab {tabs.nth(i).inner_text()!r} wraps"
    finally:
        context.close()
