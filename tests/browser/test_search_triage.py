"""In a Korean browser: a manager searches items for a Korean word, filters the disagreement list by choices and
walks the open disagreements with "next to adjudicate"; an annotator revises an answer from "My submissions"
with the task's widget; a missing page is a Korean 404 inside the site's frame."""

from __future__ import annotations

from typing import Any

import pytest

from annotation import services
from annotation.gold.services import gold_compute
from annotation.models import Annotation, AuditEvent, GoldLabel, GoldStatus, Role

from .conftest import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TITLES = {"seoul": "서울시청에서 기자회견 열려", "busan": "부산 해운대 축제", "economy": "금리 인상 소식"}
VOTES = {"seoul": ["사회", "경제", "정치"], "busan": ["생활문화", "생활문화", "사회"],
         "economy": ["세계", "경제", "정치"]}


@pytest.fixture
def triage(django_user_model) -> tuple[Any, list[Any]]:
    manager = django_user_model.objects.create_user("manager-tc", password=PASSWORD)
    project = services.project_create(name="검색 프로젝트", slug="search-tc", task_type="tc", created_by=manager,
                                      annotators_per_item=3)
    coders = []
    for i in range(3):
        coder = django_user_model.objects.create_user(f"coder{i}", password=PASSWORD)
        services.membership_set(project=project, user=coder, role=Role.ANNOTATOR)
        services.guideline_acknowledge(user=coder, project=project)
        coders.append(coder)
    for key, title in TITLES.items():
        services.item_create(project=project, payload={"title": title}, external_id=key)
    for coder, n in zip(coders, range(3), strict=True):
        for _ in TITLES:
            assignment = services.assignment_next(project=project, user=coder)
            key = assignment.item.external_id
            services.annotation_submit(project=project, user=coder, item_id=assignment.item_id,
                                       payload={"label": VOTES[key][n]})
    return project, coders


def korean(browser: Any, live_server: Any) -> tuple[Any, Any]:
    context = browser.new_context(base_url=live_server.url, locale="ko-KR", viewport={"width": 1366, "height": 900})
    return context, context.new_page()


def rows(page: Any) -> set[str]:
    return set(page.locator("table tbody tr td:first-child").all_inner_texts())


def test_manager_searches_filters_and_walks_open_disagreements(browser, live_server, triage) -> None:
    project, _coders = triage
    gold_compute(project)
    open_items = sorted(GoldLabel.objects.filter(item__project=project, status=GoldStatus.NEEDS_ADJUDICATION)
                        .values_list("item__external_id", flat=True))
    assert open_items == ["economy", "seoul"]
    context, page = korean(browser, live_server)
    try:
        sign_in(page, "manager-tc", f"/projects/{project.pk}/items/")
        page.get_by_label("텍스트 검색").fill("서울")
        page.get_by_label("텍스트 검색").press("Enter")
        page.wait_for_url("**q=*")
        assert rows(page) == {"seoul"}

        page.goto(f"/projects/{project.pk}/agreement/items/")
        assert page.locator("select#f-label option").count() > 3  # choices, not a text box
        page.select_option("#f-label", "생활문화")
        page.get_by_role("button", name="필터").click()
        page.wait_for_url("**label=*")
        assert rows(page) == {"busan"}

        page.goto(f"/projects/{project.pk}/gold/?status=needs_adjudication")
        page.get_by_role("link", name="판정 시작").click()
        page.wait_for_url("**/adjudicate/")
        first = page.locator("h2").first.inner_text()
        page.get_by_role("link", name="다음 판정 항목").click()
        page.wait_for_url("**/adjudicate/")
        assert page.locator("h2").first.inner_text() != first
        # Decide the one shown: the next then goes back to the other, and after that none is left.
        page.locator("input[name=choice]").first.check()
        page.locator("#reason").fill("기사 내용으로 판정")
        page.locator("#adjudication button[type=submit]").click()
        page.wait_for_url("**/agreement/items/*/")
        page.get_by_role("link", name="다음 판정 항목").click()
        page.wait_for_url("**/adjudicate/")
        assert page.locator("h2").first.inner_text() == first
        page.locator("input[name=choice]").first.check()
        page.locator("#reason").fill("두 번째 판정")
        page.locator("#adjudication button[type=submit]").click()
        page.wait_for_url("**/agreement/items/*/")
        page.get_by_role("link", name="다음 판정 항목").click()
        page.wait_for_url("**/gold/?status=needs_adjudication")
        assert "판정할 불일치 항목이 더 이상 없습니다." in page.locator(".messages").inner_text()
    finally:
        context.close()


def test_annotator_revises_an_answer_with_the_widget(browser, live_server, triage) -> None:
    project, coders = triage
    own = Annotation.objects.get(annotator=coders[2], item__external_id="seoul")
    assert own.payload["label"] == "정치"
    context, page = korean(browser, live_server)
    try:
        sign_in(page, "coder2", f"/projects/{project.pk}/annotate/")
        page.get_by_role("link", name="내 제출 기록").first.click()
        page.wait_for_url("**/mine/")
        assert page.locator("h1").inner_text().startswith("검색 프로젝트")
        assert len(page.locator("table tbody tr").all()) == 3
        page.locator(f'a[href$="/mine/{own.pk}/"]').click()
        page.wait_for_selector("#revise-widget[data-ready='1']")
        page.locator("#revise-widget").focus()
        page.keyboard.press("Backspace")  # removes 정치
        page.locator("#revise-widget button.choice", has_text="사회").click()
        page.get_by_role("button", name="수정한 답 저장").click()
        page.wait_for_url("**/mine/")
        assert "항목 seoul에 대한 내 답을 수정했습니다." in page.locator(".messages").inner_text()
        own.refresh_from_db()
        assert own.payload["label"] == "사회"
        assert AuditEvent.objects.filter(action="revise", object_id=own.pk).count() == 1
        # A missing page in Korean keeps the frame and says what to do.
        page.goto(f"/projects/{project.pk}/mine/999999/")
        assert page.locator("h1").inner_text().startswith("페이지를 찾을 수 없습니다")
        assert page.locator("header.topbar nav a").first.inner_text() == "프로젝트"
    finally:
        context.close()
