"""Adjudication with the task's own widget: the manager picks an annotator's answer, which fills the widget,
changes it with the widget's keys, and saves — no JSON typed — for NER, DP, MRC and DST."""

from __future__ import annotations

from typing import Any

import pytest

from annotation import services
from annotation.models import Annotation, GoldLabel, Role

from .conftest import PASSWORD, demo_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_adjudication(page: Any, seeded: Any, payloads: list[dict[str, Any]], django_user_model: Any) -> list[int]:
    """Up to two annotators' answers on the first item (last stage); the manager on its adjudication page."""
    stage = seeded.project.task.stages[-1].name
    second = django_user_model.objects.create_user("annotator-2", password=PASSWORD)
    services.membership_set(project=seeded.project, user=second, role=Role.ANNOTATOR)
    ids = [Annotation.objects.create(item=seeded.items[0], annotator=who, stage=stage, payload=payload).pk
           for who, payload in zip((seeded.annotator, second), payloads, strict=False)]
    path = f"/projects/{seeded.project.pk}/agreement/items/{seeded.items[0].pk}/adjudicate/"
    page.goto(path)
    page.locator("[name=username]").fill(seeded.project.created_by.username)
    page.locator("[name=password]").fill(PASSWORD)
    page.locator("[name=password]").press("Enter")
    page.wait_for_url(f"**{path}")
    page.wait_for_selector("#adj-widget[data-ready='1']")
    return ids


def start_from(page: Any, annotation_id: int) -> None:
    page.locator(f"input[name=choice][value='{annotation_id}']").check()


def save(page: Any, seeded: Any, reason: str) -> dict[str, Any]:
    page.locator("#reason").fill(reason)
    page.get_by_role("button", name="Save decision").click()
    page.wait_for_url(f"**/agreement/items/{seeded.items[0].pk}/")
    return GoldLabel.objects.get(item=seeded.items[0]).payload


def test_adjudicate_ner_with_the_span_widget(page, seed, django_user_model) -> None:
    seeded = seed("ner", payloads=[{"sentence": "가상전자 판교 공장"}, {"sentence": "둘째 문장"}])
    ids = open_adjudication(page, seeded, [{"entities": [{"start": 0, "end": 4, "type": "PS"}]},
                                           {"entities": [{"start": 5, "end": 7, "type": "LC"}]}], django_user_model)
    start_from(page, ids[1])
    assert page.locator("#adj-widget .entity-list li").get_attribute("data-type") == "LC"
    for key in ("Home", *["Shift+ArrowRight"] * 4, "3"):  # 가상전자 as an organisation
        page.keyboard.press(key)
    assert page.locator("input[name=choice][value=edit]").is_checked()
    gold = save(page, seeded, "가상전자는 회사")
    assert gold["entities"] == [{"start": 0, "end": 4, "type": "OG"}, {"start": 5, "end": 7, "type": "LC"}]


def test_adjudicate_dp_with_the_tree_widget(page, seed, django_user_model) -> None:
    seeded = seed("dp")
    n = len(seeded.items[0].payload["tokens"])
    assert n == 5
    deprels = ["NP_SBJ", "NP_AJT", "NP_AJT", "NP_OBJ", "VP"]
    first = {"heads": [n] * (n - 1) + [0], "deprels": deprels}
    second = {"heads": [3] + [n] * (n - 2) + [0], "deprels": deprels}
    ids = open_adjudication(page, seeded, [first, second], django_user_model)
    start_from(page, ids[0])
    page.keyboard.press("n")  # the first eojeol attaches to the next one
    gold = save(page, seeded, "첫 어절은 바로 다음 어절에 걸림")
    assert gold["heads"] == [2] + [n] * (n - 2) + [0] and gold["deprels"] == deprels


def test_adjudicate_mrc_with_the_passage_widget(page, seed, django_user_model) -> None:
    seeded = seed("mrc")
    record = demo_records("mrc")[0]
    answer = {"text": record["answers"][0]["text"], "start": record["answers"][0]["answer_start"]}
    ids = open_adjudication(page, seeded, [{"answer": answer}, {"answer": None}], django_user_model)
    start_from(page, ids[0])
    assert answer["text"] in page.locator("#adj-widget .mrc-answer-text").inner_text()
    page.keyboard.press("u")  # the question has no answer in the passage after all
    gold = save(page, seeded, "지문에 답이 없음")
    assert gold["answer"] is None


def test_adjudicate_dst_with_the_state_widget(page, seed, django_user_model) -> None:
    seeded = seed("dst")
    turns = sum(1 for turn in seeded.items[0].payload["dialogue"] if turn["role"] == "user")
    state = ["식당-지역-서울 중앙"]
    ids = open_adjudication(page, seeded, [{"states": [state] * turns}, {"states": [[]] * turns}], django_user_model)
    start_from(page, ids[0])
    page.keyboard.press("a")
    for text in ("식당", "가격대", "적당"):
        page.keyboard.type(text)
        page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    gold = save(page, seeded, "첫 턴에 가격대가 나옴")
    assert gold["states"][0] == ["식당-지역-서울 중앙", "식당-가격대-적당"]
    assert gold["states"][1:] == [state] * (turns - 1)


@pytest.mark.parametrize(("task", "key", "expected"), [
    ("tc", "3", {"label": "사회"}), ("sts", "4", {"score": 4.0}), ("nli", "1", {"label": "entailment"}),
    ("re", "0", {"label": "no_relation"}),
])
def test_the_other_task_types_adjudicate_with_their_widget(page, seed, django_user_model, task, key, expected) -> None:
    seeded = seed(task)
    open_adjudication(page, seeded, [], django_user_model)
    page.keyboard.press(key)
    gold = save(page, seeded, "위젯으로 결정")
    assert {k: gold[k] for k in expected} == expected
