"""The manager's and the maintainer's pages in Korean: every tab of the project, followed from the tab bar in a
Korean browser, has Korean tab labels, headings, table headers and buttons (proper names such as KLUE aside)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import Permission

from annotation import services
from annotation.models import Role

from .conftest import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HANGUL = re.compile(r"[가-힣]")
#: Text that is the same in every language: project, user and file-format names, numbers, identifiers.
LATIN_ONLY = re.compile(r"^[\W\d_]*$|^(KLUE|NER|Goldset|Demo ner|manager-ner|maintainer|annotator|API"
                        r"|klue|jsonl|csv|parquet|JSON Lines|CSV|Parquet|URL)\b")


def korean_page(browser: Any, live_server: Any) -> Any:
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1366, "height": 900})
    return context, context.new_page()


def not_korean(page: Any) -> list[str]:
    texts = page.eval_on_selector_all(
        "main h1, main h2, main h3, main th, main button, main label, nav.tabs a, main .empty",
        "els => els.map(e => e.innerText.trim()).filter(Boolean)")
    return [t for t in texts if not HANGUL.search(t) and not LATIN_ONLY.search(t)]


@pytest.mark.parametrize("role", [Role.MANAGER, Role.MAINTAINER])
def test_every_project_tab_reads_in_korean(browser, live_server, seed, django_user_model, role) -> None:
    seeded = seed("ner")
    if role == Role.MANAGER:
        user = seeded.project.created_by
        user.user_permissions.add(Permission.objects.get(codename="add_project"))
    else:
        user = django_user_model.objects.create_user("maintainer", password=PASSWORD)
        services.membership_set(project=seeded.project, user=user, role=Role.MAINTAINER)
    context, page = korean_page(browser, live_server)
    try:
        sign_in(page, user.username, f"/projects/{seeded.project.pk}/")
        assert page.locator("html").get_attribute("lang") == "ko"
        tabs = page.locator("nav.tabs a")
        links = [(tabs.nth(i).inner_text(), tabs.nth(i).get_attribute("href")) for i in range(tabs.count())]
        assert len(links) >= 6
        problems = {}
        for label, href in links:
            page.goto(href)
            page.wait_for_load_state()
            assert HANGUL.search(label), label
            if found := not_korean(page):
                problems[href] = found
        assert problems == {}
        assert page.locator("main h1").inner_text().endswith("KLUE-NER · 개체명 인식")
        for suffix, tab, heading in (("/agreement/", "일치도", "계수"), ("/gold/", "정답", "표시 중: 판정 필요 (0)")):
            page.goto(f"/projects/{seeded.project.pk}{suffix}")
            assert page.locator("nav.tabs a.active").inner_text() == tab
            assert heading in page.locator("main").inner_text()
        if role == Role.MANAGER:  # the task names offered for a new project
            page.goto("/projects/new/")
            options = page.locator("select[name=task_type] option").all_inner_texts()
            assert "KLUE-NER — 개체명 인식 (ner)" in options and page.locator("main h1").inner_text()
            assert not_korean(page) == []
    finally:
        context.close()
