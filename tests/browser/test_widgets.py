"""Each widget driven by keyboard in headless Chromium: sign in, acknowledge the guideline, annotate a
demo item, submit, reload, see the next item; the database holds exactly the annotation made."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Annotation, GuidelineAcknowledgement
from annotation.task_types import get_task_type

from .conftest import demo_records, screenshot, settle, sign_in_and_acknowledge, submit_and_reload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def stored(seeded, item_index: int = 0, stage: str = "label") -> dict[str, Any]:
    annotation = Annotation.objects.get(item=seeded.items[item_index], annotator=seeded.annotator, stage=stage)
    assert annotation.guideline is not None
    assert annotation.seconds_spent is not None and annotation.seconds_spent >= 0
    return annotation.payload


def check_next(page, seeded, key: str = "Enter") -> None:
    """After submit and reload the second item is shown, and exactly one annotation exists."""
    assert submit_and_reload(page, key) == seeded.items[1].pk
    assert Annotation.objects.filter(annotator=seeded.annotator).count() == 1
    assert GuidelineAcknowledgement.objects.filter(user=seeded.annotator).count() == 1


def test_tc_widget(page, seed) -> None:
    seeded = seed("tc")
    sign_in_and_acknowledge(page, seeded)
    assert seeded.items[0].payload["title"] in page.locator(".tc-headline").inner_text()
    # 사회 is the 3rd topic, 경제 the 2nd: first 사회, then 경제 as the optional second choice.
    page.keyboard.press("3")
    page.keyboard.press("2")
    page.keyboard.press("7")
    page.keyboard.press("Backspace")  # drop 정치 again
    # Topics by their names in the reader's language (an English browser), stored as the values.
    assert "economy" in page.locator(".tc-summary").inner_text()
    screenshot(page, "tc")
    check_next(page, seeded)
    assert stored(seeded) == {"label": "사회", "second": "경제", "third": None}


def test_sts_widget(page, seed) -> None:
    schema = {"min": 0, "max": 5, "step": 0.5}
    seeded = seed("sts", schema=schema)
    sign_in_and_acknowledge(page, seeded)
    assert seeded.items[0].payload["sentence2"] in page.locator(".sts-pair").inner_text()
    page.keyboard.press("4")
    page.keyboard.press("ArrowLeft")  # 3.5
    page.keyboard.press("ArrowLeft")  # 3
    page.keyboard.press(".")  # 3.5
    assert page.locator("button.score[aria-pressed=true]").get_attribute("data-score") == "3.5"
    screenshot(page, "sts")
    check_next(page, seeded)
    assert stored(seeded) == {"score": 3.5}


def test_nli_validation_widget(page, seed) -> None:
    seeded = seed("nli")  # demo records with hypotheses: straight to validation
    sign_in_and_acknowledge(page, seeded)
    assert seeded.items[0].payload["hypothesis"] in page.locator(".widget").inner_text()
    assert "target_label" not in page.content()
    page.keyboard.press("3")
    page.keyboard.press("2")
    screenshot(page, "nli")
    check_next(page, seeded)
    assert stored(seeded, stage="validation") == {"label": "neutral"}


def test_nli_writing_widget(page, seed) -> None:
    premise_only = [r for r in demo_records("nli") if "hypothesis" not in r][:2]
    seeded = seed("nli", records=premise_only)
    sign_in_and_acknowledge(page, seeded)
    hypothesis = "도서관은 밤늦게까지 문을 연다 😀"
    page.keyboard.type(hypothesis)  # the hypothesis box has the focus
    page.keyboard.press("Alt+1")
    screenshot(page, "nli-writing")
    check_next(page, seeded, "Control+Enter")  # plain Enter is a new line in the hypothesis box
    assert stored(seeded, stage="writing") == {"hypothesis": hypothesis, "label": "entailment"}


NER_SENTENCE = "🎉 가상전자 판교 공장이 문을 열었다."


def test_ner_widget_offsets_with_hangul_space_and_emoji(page, seed) -> None:
    demo = get_task_type("ner").parse_record(demo_records("ner")[0]).payload
    seeded = seed("ner", payloads=[{"sentence": NER_SENTENCE}, demo])
    sign_in_and_acknowledge(page, seeded)
    assert page.locator(".span-text").inner_text() == NER_SENTENCE
    # The emoji is one code point (two UTF-16 units): 가상전자 starts at code point 2.
    # The caret stands between characters, as in a text field: each Shift+→ selects one more character.
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    assert page.locator(".span-text .ch.selected").all_inner_texts() == ["가"]
    for _ in range(3):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("3")  # OG
    page.keyboard.press("ArrowRight")
    for _ in range(4):
        page.keyboard.press("Shift+ArrowRight")  # 판교 공 (with the space)
    page.keyboard.press("2")  # LC
    page.keyboard.press("Alt+ArrowRight")  # widen the LC span by one: 판교 공장
    # A mistake, labelled and deleted again: 문을 as PS (End is after the last character).
    page.keyboard.press("End")
    for _ in range(7):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("1")
    assert page.locator(".entity-list li").count() == 3
    page.keyboard.press("Delete")
    chips = page.locator(".entity-list li")
    assert [chips.nth(i).get_attribute("data-type") for i in range(chips.count())] == ["OG", "LC"]
    screenshot(page, "ner")
    check_next(page, seeded)
    entities = stored(seeded)["entities"]
    assert entities == [{"start": 2, "end": 6, "type": "OG"}, {"start": 7, "end": 12, "type": "LC"}]
    assert [NER_SENTENCE[e["start"]:e["end"]] for e in entities] == ["가상전자", "판교 공장"]


def test_ner_mouse_selection(page, seed) -> None:
    seeded = seed("ner", payloads=[{"sentence": NER_SENTENCE}, {"sentence": "둘째 문장"}])
    sign_in_and_acknowledge(page, seeded)
    first, last = page.locator(".span-text .ch[data-i='7']"), page.locator(".span-text .ch[data-i='8']")
    first.hover()
    page.mouse.down()
    last.hover()
    page.mouse.up()
    page.keyboard.press("2")
    check_next(page, seeded)
    assert stored(seeded) == {"entities": [{"start": 7, "end": 9, "type": "LC"}]}


def test_re_widget(page, seed) -> None:
    seeded = seed("re")
    sign_in_and_acknowledge(page, seeded)
    subject = page.locator(".re-subj")
    assert "가상전자" in subject.inner_text() and "ORG" in subject.inner_text()
    assert "DAT" in page.locator(".re-obj").inner_text()
    page.keyboard.press("/")
    page.keyboard.type("founded")
    assert page.locator(".re-option").count() == 2  # org:founded, org:founded_by
    screenshot(page, "re")
    check_next(page, seeded)  # one Enter picks the highlighted relation and submits it
    assert stored(seeded) == {"label": "org:founded"}


def test_dp_widget_refuses_bad_trees(page, seed) -> None:
    seeded = seed("dp")
    sign_in_and_acknowledge(page, seeded)
    assert page.locator(".dp-token").count() == 5
    assert page.locator(".dp-arcs path[marker-end]").count() == 5  # head-final default: 4 arcs and the root
    # A second root is refused.
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    assert "exactly one" in page.locator("#ws-status").inner_text()
    page.keyboard.press("n")  # back to "attach to the next eojeol"
    # A cycle is refused: 2 → 1 → 2.
    page.keyboard.press("ArrowRight")
    page.keyboard.press("h")
    page.keyboard.type("1")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    assert "cycle" in page.locator("#ws-status").inner_text()
    settle(page)
    assert not Annotation.objects.exists()
    # The real tree: every eojeol's head is the verb (5), the verb is the root.
    page.keyboard.press("ArrowLeft")
    for deprel in ("NP_SBJ", "NP_AJT", "NP_AJT", "NP_OBJ"):
        page.keyboard.press("h")
        page.keyboard.type("5")
        page.keyboard.press("Enter")  # on to the DEPREL
        page.keyboard.type(deprel.lower())
        page.keyboard.press("Escape")
        page.keyboard.press("ArrowRight")
    page.keyboard.press("d")
    page.keyboard.type("VP")
    page.keyboard.press("Escape")
    assert page.locator(".ws-errors li").count() == 0
    screenshot(page, "dp")
    check_next(page, seeded)
    assert stored(seeded) == {"heads": [5, 5, 5, 5, 0], "deprels": ["NP_SBJ", "NP_AJT", "NP_AJT", "NP_OBJ", "VP"]}


def test_mrc_writing_widget(page, seed) -> None:
    passages = [r for r in demo_records("mrc") if "question" not in r][:2]
    seeded = seed("mrc", records=passages)
    sign_in_and_acknowledge(page, seeded)
    context = passages[0]["context"]
    answer = "차량 5대"
    start = context.index(answer)
    question = "가람터널 사고에 연루된 차량은 몇 대인가?"
    page.keyboard.type(question)  # the question box has the focus
    page.keyboard.press("Alt+1")
    page.keyboard.press("Shift+Tab")  # back to the passage
    for _ in range(start):
        page.keyboard.press("ArrowRight")
    for _ in range(len(answer)):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("a")
    assert answer in page.locator(".mrc-answer-text").inner_text()
    screenshot(page, "mrc-writing")
    check_next(page, seeded, "Control+Enter")
    assert stored(seeded, stage="writing") == {"question": question, "question_type": 1,
                                               "answer": {"text": answer, "start": start}, "plausible": None}


def test_mrc_validation_widget(page, seed) -> None:
    seeded = seed("mrc")  # demo records with questions: straight to validation
    sign_in_and_acknowledge(page, seeded)
    record = demo_records("mrc")[0]
    assert record["question"] in page.locator(".mrc-question-view").inner_text()
    answer = record["answers"][0]
    text, start = answer["text"], answer["answer_start"]
    for _ in range(start):
        page.keyboard.press("ArrowRight")
    for _ in range(len(text)):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("a")
    screenshot(page, "mrc")
    check_next(page, seeded)
    assert stored(seeded, stage="validation") == {"answer": {"text": text, "start": start}}


def test_dst_widget_carries_the_state_over(page, seed) -> None:
    seeded = seed("dst")
    sign_in_and_acknowledge(page, seeded)
    assert page.locator(".dst-turn.user").count() == 3

    def add(domain: str, slot: str, value: str) -> None:
        page.keyboard.press("a")
        page.keyboard.type(domain)
        page.keyboard.press("Enter")
        page.keyboard.type(slot)
        page.keyboard.press("Enter")
        page.keyboard.type(value)
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")

    add("식당", "지역", "서울 중앙")
    add("식당", "가격대", "적당")
    add("식당", "종류", "한식당")
    page.keyboard.press("]")
    assert page.locator(".dst-state li.carried").count() == 3  # carried over from turn 1
    add("식당", "주차 가능", "yes")
    page.keyboard.press("]")
    add("식당", "이름", "솔바람 한상")
    add("식당", "예약 요일", "토요일")
    add("식당", "예약 시간", "18:30")
    add("식당", "예약 명수", "4")
    add("식당", "예약 명수", "다섯")  # not a value of the slot: refused
    assert "다섯" in page.locator(".widget .error").inner_text()
    screenshot(page, "dst")
    check_next(page, seeded)
    first = ["식당-지역-서울 중앙", "식당-가격대-적당", "식당-종류-한식당"]
    second = [*first, "식당-주차 가능-yes"]
    third = [*second, "식당-이름-솔바람 한상", "식당-예약 요일-토요일", "식당-예약 시간-18:30", "식당-예약 명수-4"]
    assert stored(seeded) == {"states": [first, second, third]}
