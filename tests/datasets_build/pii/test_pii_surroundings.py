"""``scrub_pii`` replaces a finding and nothing around it: whatever punctuation, brackets, spaces or Hangul
surround a phone number, a vehicle plate or an e-mail address, the text before and after it comes out as it
went in (``박지영(02-555-1234)에게`` keeps both parentheses). Vehicle plates are found in their three shapes."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from datasets_build.pii import Scrubber, detect, resolve_policy

VALUES = {
    "phone": ["02-555-1234", "010-2345-6789", "(02) 555-1234", "031.123.4567", "+82 10-2345-6789"],
    "vehicle_plate": ["12가3456", "123가4567", "서울12가3456", "34 나 5678"],
    "email": ["minsu.kim@example.co.kr"],
}
#: Characters that cannot continue any of the values: brackets, punctuation, spaces and particles.
SURROUNDING = st.text(alphabet=list("()[]{}<>「」『』\"'.,!?~·:;/ \n") + list("에게는을를이와과의도만요다"),
                      max_size=6)
CASES = [(kind, value) for kind, values in VALUES.items() for value in values]


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), before=SURROUNDING, after=SURROUNDING)
def test_nothing_outside_a_finding_changes(case, before, after):
    kind, value = case
    # An e-mail address glued to a word or a dot before it (게minsu@…, .minsu@…) is not taken for one: the
    # local part could start anywhere in the word.
    assume(not (kind == "email" and (before[-1:].isalpha() or before.endswith("."))))
    result = Scrubber(resolve_policy({}, "pseudonymize")).scrub(before + value + after)
    assert [f["type"] for f in result.findings] == [kind]
    [finding] = result.findings
    assert result.text[:finding["start"]] == before
    assert result.text[finding["end"]:] == after
    assert result.text[finding["start"]:finding["end"]].startswith("[")


def test_the_parenthesis_around_a_phone_number_stays(tmp_path):
    source = tmp_path / "note.txt"
    source.write_text("박지영(02-555-1234)에게 연락했다.", encoding="utf-8")
    out = StringIO()
    call_command("scrub_pii", str(source), "--json", stdout=out)
    text = json.loads(out.getvalue())["text"]
    assert text.startswith("박지영([전화번호1])에게")


@pytest.mark.parametrize(("text", "plate"), [
    ("주차장에 12가3456 차량이 있었다.", "12가3456"),
    ("새 번호판 123가4567을 달았다.", "123가4567"),
    ("서울12가3456 택시를 탔다.", "서울12가3456"),
    ("차량번호 경기 34 나 5678 확인", "경기 34 나 5678"),
])
def test_vehicle_plates_are_found(text, plate):
    assert [(f.type, f.value) for f in detect(text)] == [("vehicle_plate", plate)]


@pytest.mark.parametrize("text", [
    "을지로3가 1234번 버스",  # one digit before the letter: a street section
    "2024가합12345 판결",  # a court case number
    "12가구 1234명이 산다.",
    "2012가1234",  # glued to more digits
])
def test_what_is_not_a_vehicle_plate(text):
    assert [f for f in detect(text) if f.type == "vehicle_plate"] == []
