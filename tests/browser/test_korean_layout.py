"""The layout as a Korean team sees it (a CJK font installed, 1366 px wide): words (eojeol) never break in the
middle, in tables and badges included; the workspace header has one shape for every task type; the project's tabs
fit one row in English and in Korean."""

from __future__ import annotations

from typing import Any

import pytest

from annotation import services
from annotation.models import Role

from .conftest import PASSWORD, sign_in, sign_in_and_acknowledge

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TASKS = ["tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst"]

#: Korean words (whitespace-separated runs) broken across lines between two Hangul syllables ("일/치도"), unless the
#: word is wider than its whole line and cannot fit. A break at punctuation ("시간/(초)") is a Korean line break.
BROKEN_WORDS = """() => {
  const broken = [];
  const hangul = /[가-힣]/;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  const box = (node, i) => {
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    return range.getBoundingClientRect();
  };
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.parentElement || !node.parentElement.getClientRects().length) continue;
    for (const match of node.textContent.matchAll(/\\S+/g)) {
      const word = match[0];
      let split = false;
      for (let i = 0; i + 1 < word.length && !split; i++) {
        if (!hangul.test(word[i]) || !hangul.test(word[i + 1])) continue;
        const a = box(node, match.index + i);
        const b = box(node, match.index + i + 1);
        split = a.width > 0 && b.width > 0 && b.top >= a.bottom - 1;
      }
      if (!split) continue;
      let block = node.parentElement;
      while (block.parentElement && getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
      range.setStart(node, match.index);
      range.setEnd(node, match.index + word.length);
      const width = [...range.getClientRects()].reduce((sum, r) => sum + r.width, 0);
      if (width <= block.clientWidth) broken.push(word);
    }
  }
  return broken;
}"""


def broken_words(page: Any) -> list[str]:
    return page.evaluate(BROKEN_WORDS)


def korean_context(browser: Any, live_server: Any, locale: str = "ko-KR") -> Any:
    return browser.new_context(base_url=live_server.url, locale=locale, viewport={"width": 1366, "height": 900})


def manager_with_annotations(seed: Any, django_user_model: Any) -> Any:
    """An NER project with two annotators' work, so the manager's tables and badges have content."""
    seeded = seed("ner", k=2)
    second = django_user_model.objects.create_user("annotator-2", password=PASSWORD)
    services.membership_set(project=seeded.project, user=second, role=Role.ANNOTATOR)
    for user in (seeded.annotator, second):
        services.guideline_acknowledge(user=user, project=seeded.project)
        while (assignment := services.assignment_next(project=seeded.project, user=user)) is not None:
            services.annotation_submit(project=seeded.project, user=user, item_id=assignment.item_id,
                                       payload={"entities": []})
    return seeded


@pytest.mark.parametrize("viewport_width", [1366, 1024])
def test_korean_words_never_break_mid_word_on_the_managers_pages(browser, live_server, seed, django_user_model,
                                                                 viewport_width) -> None:
    seeded = manager_with_annotations(seed, django_user_model)
    context = browser.new_context(base_url=live_server.url, locale="ko-KR",
                                  viewport={"width": viewport_width, "height": 900})
    try:
        page = context.new_page()
        sign_in(page, seeded.project.created_by.username, f"/projects/{seeded.project.pk}/")
        tabs = page.locator("nav.tabs a")
        links = ["/", *[tabs.nth(i).get_attribute("href") for i in range(tabs.count())]]
        found = {}
        for href in links:
            page.goto(href)
            page.wait_for_load_state()
            if broken := broken_words(page):
                found[href] = broken
        assert found == {}
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["en-US", "ko-KR"])
def test_the_workspace_header_has_one_shape_for_every_task_and_no_word_breaks(browser, live_server, seed,
                                                                               locale) -> None:
    """The header (title with the stage, guideline button, progress) is laid out the same for every task type,
    whatever the length of the stage's name; and no Korean word in the workspace breaks in the middle."""
    shapes = {}
    for task in TASKS:
        seeded = seed(task, username=f"annotator-{task}")
        context = korean_context(browser, live_server, locale)
        try:
            page = context.new_page()
            sign_in_and_acknowledge(page, seeded)
            assert broken_words(page) == [], task
            box = {name: page.locator(selector).bounding_box() for name, selector in (
                ("head", ".ws-head"), ("title", ".ws-head h1"), ("guideline", "#ws-guideline-toggle"),
                ("progress", ".ws-progress"))}
            title_lines = page.locator(".ws-head h1").evaluate(
                "h => Math.round(h.getBoundingClientRect().height / parseFloat(getComputedStyle(h).lineHeight))")
            shapes[task] = (round(box["head"]["height"]), title_lines,
                            box["guideline"]["y"] < box["title"]["y"] + box["title"]["height"],  # beside the title
                            box["progress"]["y"] >= box["title"]["y"] + box["title"]["height"] - 1)  # below it
        finally:
            context.close()
    assert len(set(shapes.values())) == 1, shapes
    assert next(iter(shapes.values()))[1:] == (1, True, True)
