"""Steps that cannot be undone ask first, by keyboard, in the reader's language: a manager removing a member or a
webhook endpoint, or publishing a guideline version, gets a confirmation that says what cannot be undone, with the
confirming button focused (axe finds no serious problem on it); the Cancel link changes nothing, and only the
confirming button acts."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Membership, WebhookEndpoint
from annotation.webhooks import services as webhooks
from tests.site.visible_text import offending_text

from .axe import serious_violations
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def focused(page: Any) -> str:
    return page.evaluate("document.activeElement.innerText.trim()")


def press_on(page: Any, button: Any) -> None:
    """Reach the button with the keyboard's focus and press Enter, as a keyboard user does."""
    button.focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")


@pytest.mark.parametrize("locale", ["ko-KR", "en-US"])
def test_removing_a_member_asks_first_and_says_what_cannot_be_undone(page: Any, seed, locale: str) -> None:
    seeded = seed("tc")
    manager = seeded.project.created_by
    path = f"/projects/{seeded.project.pk}/members/"
    korean = locale == "ko-KR"
    sign_in(page, manager.username, path)
    row = page.locator(f"tr:has(td:text-is('{seeded.annotator.username}'))")
    press_on(page, row.get_by_role("button", name="프로젝트에서 빼기" if korean else "Remove"))
    card = page.locator("#remove-confirm")
    heading = "annotator 님을 프로젝트에서 뺄까요?" if korean else "Remove annotator from the project?"
    assert card.get_by_role("heading").inner_text() == heading
    assert ("되돌릴 수 없습니다" if korean else "cannot be undone") in card.inner_text()
    assert focused(page) == ("annotator 님 빼기" if korean else "Remove annotator")
    assert serious_violations(page) == []
    if korean:
        assert offending_text(page.content(), data=[manager.username, "annotator", seeded.project.name,
                                                    seeded.project.slug]) == []
    assert Membership.objects.filter(project=seeded.project, user=seeded.annotator).exists()

    press_on(page, card.get_by_role("link", name="취소" if korean else "Cancel"))
    assert page.locator("#remove-confirm").count() == 0
    assert Membership.objects.filter(project=seeded.project, user=seeded.annotator).exists()

    press_on(page, row.locator("button.danger"))
    # The confirming button has the focus (autofocus, once the page has loaded).
    page.wait_for_function("document.activeElement && document.activeElement.name === 'confirm'")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector(".messages")
    assert not Membership.objects.filter(project=seeded.project, user=seeded.annotator).exists()


@pytest.mark.parametrize("locale", ["ko-KR"])
def test_removing_a_webhook_endpoint_asks_first_and_counts_what_is_lost(page: Any, seed, settings) -> None:
    settings.GOLDSET_WEBHOOKS_ALLOW_PRIVATE = True
    seeded = seed("tc")
    manager = seeded.project.created_by
    endpoint = webhooks.endpoint_create(project=seeded.project, url="http://127.0.0.1:18799/goldset",
                                        events=["release.built"], by=manager)
    webhooks.emit(seeded.project, "release.built", {"release": 3, "version": "1.0.0", "status": "failed"})
    path = f"/projects/{seeded.project.pk}/webhooks/"
    sign_in(page, manager.username, path)
    press_on(page, page.locator("table.webhook-endpoints").get_by_role("button", name="삭제"))
    card = page.locator("#delete-confirm")
    assert card.get_by_role("heading").inner_text() == "이 웹훅 엔드포인트를 삭제할까요?"
    text = card.inner_text()
    assert "삭제는 되돌릴 수 없습니다." in text and "전송 기록 1건" in text and endpoint.url in text
    assert focused(page) == "엔드포인트 영구 삭제"
    assert serious_violations(page) == []
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector(".messages")
    assert not WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


@pytest.mark.parametrize("locale", ["ko-KR"])
def test_publishing_a_guideline_version_asks_first_and_keeps_the_edits(page: Any, seed) -> None:
    seeded = seed("tc")
    manager = seeded.project.created_by
    path = f"/projects/{seeded.project.pk}/guideline/"
    sign_in(page, manager.username, path)
    page.locator("#id_instructions").fill("## 새 지침\n제목만 보고 고릅니다.")
    press_on(page, page.get_by_role("button", name="새 버전 게시"))
    card = page.locator("#publish-confirm")
    assert card.get_by_role("heading").inner_text() == "지침 버전 2을(를) 게시할까요?"
    assert "되돌릴 수 없습니다" in card.inner_text() and "확인해야 주석 작업을 계속할 수 있습니다" in card.inner_text()
    assert focused(page) == "버전 2 게시"
    assert serious_violations(page) == []
    assert page.locator("#id_instructions").input_value() == "## 새 지침\n제목만 보고 고릅니다."
    assert seeded.project.guidelines.count() == 1
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector(".messages")
    current = seeded.project.guidelines.get(is_current=True)
    assert (current.version, current.instructions.replace("\r\n", "\n")) == (2, "## 새 지침\n제목만 보고 고릅니다.")
