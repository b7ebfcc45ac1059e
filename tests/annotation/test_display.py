"""Human names of stored identifiers (annotation/display.py): in the reader's language, never the identifier
when a name exists, counted units in proper plural, stored English sentences translated, corpus labels named."""

from __future__ import annotations

import pytest
from django.utils import translation

from annotation import display


@pytest.mark.parametrize("language, expected", [
    ("en", ["Krippendorff's alpha", "nominal", "fewer than 2 annotations", "span majority", "start",
            "1 item", "137 items", "no label reached 2 votes", "labels from the source corpus",
            "corpus annotator 1e438595", "sim-gaeun"]),
    ("ko", ["Krippendorff 알파", "명목", "주석 2개 미만", "스팬 다수결", "시작", "항목 1개", "항목 137개",
            "2표를 얻은 라벨이 없음", "원본 말뭉치 라벨", "말뭉치 주석자 1e438595", "sim-gaeun"]),
])
def test_identifiers_get_their_names_in_the_readers_language(language, expected):
    with translation.override(language):
        assert [
            display.display_name("coefficient", "krippendorff_alpha"), display.display_name("level", "nominal"),
            display.display_name("exclusion", "fewer_than_2_annotations"),
            display.display_name("rule", "span_majority"),
            display.display_name("field", "start_idx"), display.units_text(1, "item"), display.units_text(137, "item"),
            display.display_message("no label reached 2 votes"),
            display.annotator_name("Goldset demo corpus:corpus"),
            display.annotator_name("demo-sts:1e438595dcc1e2058e50"), display.annotator_name("sim-gaeun"),
        ] == expected


def test_choices_unknown_identifiers_and_unknown_sentences():
    with translation.override("ko"):
        assert display.display_name("gold_status", "needs_adjudication") == "판정 필요"
        assert display.display_name("rule", "a_rule_of_tomorrow") == "a_rule_of_tomorrow"  # shown, and the page test
        assert display.display_message("something new") == "something new"                # reports it
        assert display.display_message("computing coefficients") == "계수 계산 중"
        assert display.value_text({"selection": "all matching kind=pii"}) == (
            "선택 범위: 검수 대기열에서 ‘개인정보’ 신고가 있는 모든 항목")
        assert display.display_name("level", None) == ""


def test_stored_values_read_as_text_not_json():
    with translation.override("ko"):
        text = display.value_text({"item": 100, "stage": "label", "payload": {"label": "IT과학"}},
                                  summary=lambda payload: payload["label"])
        assert text == "항목: 100 · 단계: 라벨링 · 답: IT과학"
        assert display.value_text({"instructions": "가" * 500, "status": "adjudicated"}) == (
            "작업 지침: 글자 500개 · 상태: 관리자가 판정")
        assert display.item_facts({"subject_entity": {"word": "가상전자", "start_idx": 0, "end_idx": 3, "type": "ORG"},
                                   "tokens": [1, 2]}) == [("주어 개체", "단어: 가상전자 · 시작: 0 · 끝: 3 · 유형: ORG")]
