"""The workspace keeps the annotator's work: drafts survive a reload (from local storage, or from the
server when the browser lost its copy), a submission whose answer was lost is retried into one
annotation, skip and flag leave the queue, the guideline is one keystroke away, and a newly published
guideline version sends the annotator back through the gate."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.models import Annotation, Assignment, Draft, Flag, GuidelineAcknowledgement

from .conftest import screenshot, settle, shown_item, sign_in_and_acknowledge

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def wait_for_server_draft(page) -> None:
    page.wait_for_function("() => document.getElementById('ws-draft').textContent.includes('Draft saved')")
    settle(page)


def ranked(page) -> list[str]:
    chosen = page.locator("button.choice[aria-pressed=true]")
    pairs = [(chosen.nth(i).get_attribute("data-rank"), chosen.nth(i).get_attribute("data-label"))
             for i in range(chosen.count())]
    return [label for _, label in sorted(pairs)]


def test_draft_survives_a_reload_and_a_lost_local_copy(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    first = shown_item(page)
    page.keyboard.press("3")
    page.keyboard.press("2")
    page.wait_for_function("() => document.getElementById('ws-timer').textContent >= '0:02'")
    page.keyboard.press("Shift")  # activity after the wait: the counter only runs while the annotator works
    wait_for_server_draft(page)
    draft = Draft.objects.get(assignment__annotator=seeded.annotator)
    assert draft.payload == {"ranked": ["사회", "경제"]}

    page.reload()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert shown_item(page) == first and ranked(page) == ["사회", "경제"]
    assert "restored" in page.locator("#ws-status").inner_text()

    # A new browser (or cleared storage): the server's copy brings the work back.
    page.evaluate("() => localStorage.clear()")
    page.reload()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert ranked(page) == ["사회", "경제"]
    assert not Annotation.objects.exists()
    # The time spent carried over both reloads and is stored with the annotation.
    page.keyboard.press("Enter")
    page.wait_for_function("first => Number(document.querySelector('.widget[data-item]')?.dataset.item) !== first",
                           arg=first)
    settle(page)
    annotation = Annotation.objects.get(annotator=seeded.annotator)
    assert annotation.payload == {"label": "사회", "second": "경제", "third": None}
    assert annotation.seconds_spent >= 2


def test_a_submission_whose_answer_was_lost_is_retried_into_one_annotation(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    calls = {"n": 0}

    def lose_the_first_answer(route) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            route.fetch()  # the server stores the annotation…
            route.abort()  # …but the browser never hears back
        else:
            route.continue_()

    page.route("**/annotations/", lose_the_first_answer)
    first = shown_item(page)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("first => Number(document.querySelector('.widget[data-item]')?.dataset.item) !== first",
                           arg=first)
    settle(page)
    assert calls["n"] == 2
    annotations = Annotation.objects.filter(annotator=seeded.annotator)
    assert annotations.count() == 1 and annotations.get().payload == {"label": "IT과학", "second": None,
                                                                      "third": None}


def test_a_submission_made_offline_is_sent_after_the_reload(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    page.route("**/annotations/", lambda route: route.abort())
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('ws-status').textContent.includes('Connection lost')",
                           timeout=15_000)
    assert not Annotation.objects.exists()
    pending = page.evaluate("() => Object.keys(localStorage).filter(k => k.endsWith(':pending'))")
    assert len(pending) == 1
    page.unroute("**/annotations/")
    page.reload()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert shown_item(page) == seeded.items[1].pk
    assert Annotation.objects.get(annotator=seeded.annotator).payload["label"] == "세계"
    assert page.evaluate("() => Object.keys(localStorage).filter(k => k.endsWith(':pending')).length") == 0


def test_skip_flag_and_the_guideline_drawer(page, seed) -> None:
    seeded = seed("tc")
    extra = services.item_create(project=seeded.project, payload={"title": "세 번째 제목"}, external_id="tc-x")
    sign_in_and_acknowledge(page, seeded)

    page.keyboard.press("Alt+g")
    drawer = page.locator("#ws-guideline")
    assert drawer.is_visible() and "윤리 지침" in drawer.inner_text() and "개인정보 지침" in drawer.inner_text()
    screenshot(page, "guideline-drawer")
    page.keyboard.press("Escape")
    assert not drawer.is_visible()

    first = shown_item(page)
    page.keyboard.press("Alt+k")
    page.keyboard.type("제목이 잘려 있음")
    page.keyboard.press("Enter")
    page.wait_for_function("first => Number(document.querySelector('.widget[data-item]')?.dataset.item) !== first",
                           arg=first)
    settle(page)
    skipped = Assignment.objects.get(item_id=first, annotator=seeded.annotator)
    assert (skipped.status, skipped.skip_reason) == ("skipped", "제목이 잘려 있음")

    second = shown_item(page)
    page.keyboard.press("Alt+f")
    page.keyboard.press("2")  # toxic
    page.keyboard.press("Tab")
    page.keyboard.type("혐오 표현")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function("s => Number(document.querySelector('.widget[data-item]')?.dataset.item) !== s",
                           arg=second)
    settle(page)
    flag = Flag.objects.get(item_id=second)
    assert (flag.kind, flag.note, flag.user) == ("toxic", "혐오 표현", seeded.annotator)
    assert Assignment.objects.get(item_id=second, annotator=seeded.annotator).status == "flagged"
    assert shown_item(page) == extra.pk
    page.wait_for_function("() => document.getElementById('ws-skipped').textContent === '2'")
    settle(page)


def test_a_new_guideline_version_sends_the_annotator_back_to_the_gate(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    manager = seeded.project.memberships.get(role="manager").user
    v2 = services.guideline_create(project=seeded.project, instructions="## 새 예시가 추가된 지침", ethics="윤리",
                                   pii="개인정보", created_by=manager, change_note="예시 추가")
    services.guideline_publish(guideline=v2)
    page.keyboard.press("1")
    page.keyboard.press("Enter")  # accepted (the lease predates v2), then the next item needs v2
    page.wait_for_url("**/guideline/read/**")
    assert "새 예시가 추가된 지침" in page.content()
    page.locator("#ack-confirm").check()
    page.locator("#ack-submit").click()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert GuidelineAcknowledgement.objects.filter(user=seeded.annotator, guideline=v2).exists()


def test_workspace_in_korean(page, seed) -> None:
    seeded = seed("ner", payloads=[{"sentence": "🎉 가상전자 판교 공장이 문을 열었다."}, {"sentence": "둘째 문장"}])
    sign_in_and_acknowledge(page, seeded)
    page.locator(".lang-switch button[value=ko]").click()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert page.locator("#ws-submit").inner_text().startswith("제출")
    assert "단축키" in page.content()
    for key in ("ArrowRight", "ArrowRight", *["Shift+ArrowRight"] * 4, "3"):
        page.keyboard.press(key)
    screenshot(page, "ner-ko")
    page.locator(".lang-switch button[value=en]").click()
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert page.locator("#ws-submit").inner_text().startswith("Submit")


def test_a_busy_queue_is_asked_again_instead_of_ending_the_session(page, seed) -> None:
    """``next/`` answers 409 when every free place was being taken at that instant: the workspace says so and
    asks again, rather than showing an error or "nothing left" while items still need the annotator."""
    seeded = seed("tc")
    calls = {"n": 0}

    def busy_once(route) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            route.fulfill(status=409, content_type="application/json",
                          body='{"detail": "the queue is busy; ask again", "code": "conflict"}')
        else:
            route.continue_()

    page.route("**/next/", busy_once)
    sign_in_and_acknowledge(page, seeded)
    page.wait_for_selector(".widget[data-item]")
    settle(page)
    assert calls["n"] == 2
    assert shown_item(page) == seeded.items[0].pk
    assert not page.locator("#ws-empty").count()


def test_the_submission_answer_carries_the_next_item_and_a_refused_one_moves_on(page, seed,
                                                                                django_user_model) -> None:
    """One round trip per item: the page shows the ``next`` a submission answered with, without asking
    ``next/``. A late submission the server refuses (the lease ran out and someone else completed the item)
    shows the server's message and moves on."""
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    first = shown_item(page)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if request.url.endswith("/next/") else None)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("first => Number(document.querySelector('.widget[data-item]')?.dataset.item) !== first",
                           arg=first)
    settle(page)
    assert shown_item(page) == seeded.items[1].pk and asked == []
    Assignment.objects.filter(annotator=seeded.annotator, item=seeded.items[1]).update(
        lease_expires_at="2000-01-01T00:00:00Z")
    other = django_user_model.objects.create_user("other-annotator", password="pw-goldset-123")
    services.membership_set(project=seeded.project, user=other, role="annotator")
    services.guideline_acknowledge(user=other, project=seeded.project)
    assert services.assignment_next(project=seeded.project, user=other).item_id == seeded.items[1].pk
    services.annotation_submit(project=seeded.project, user=other, item_id=seeded.items[1].pk,
                               payload={"label": "사회"})
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_selector("#ws-empty")
    page.wait_for_function("() => document.getElementById('ws-status').textContent.includes('ran out')")
    settle(page)
    assert list(Annotation.objects.filter(item=seeded.items[1]).values_list("annotator", flat=True)) == [other.pk]
