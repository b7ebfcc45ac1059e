"""The PII detectors' speed-ups change no finding.

For speed, some patterns are written with their "nothing before" lookbehind after the first character,
and some are matched only at anchor positions instead of scanned over the whole text
(datasets_build/pii/detectors.py). Here every detector runs twice over the labelled sample and a seeded
fuzz corpus of PII-like fragments: as shipped, and in its plain form (the lookbehind first, every pattern
scanned with ``finditer``); the findings must be identical.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from bench.pii import write_corpus
from datasets_build.pii import detectors

DATA = Path(__file__).parent / "data"
_REGIONS = detectors._REGIONS
#: The plain forms of the patterns written for speed.
PLAIN = {
    "_RRN": r"(?<![\d])(\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))\s?[-–]?\s?([1-8]\d{6})(?![\d])",
    "_CARD": r"(?<![\d])[3-6]\d{3}(?:[-\s]?\d{4}){2}[-\s]?\d{1,7}|(?<![\d])3[47]\d{2}[-\s]?\d{6}[-\s]?\d{5}(?![\d])",
    "_PASSPORT": r"(?<![A-Za-z0-9])[MSRODG](?:\d{8}|\d{3}[A-Z]\d{4})(?![A-Za-z0-9])",
    "_PERSON_BEFORE_TITLE": r"(?<![가-힣])((?:" + "|".join(sorted(set(detectors.SURNAMES), key=len, reverse=True))
                            + r")[가-힣]{2})(?:\s?(?:" + detectors._HONORIFICS + r")(?![가-힣]{2})|\s(?:"
                            + detectors._TITLE_ALT + r"))",
}
FRAGMENTS = [
    " ", "\n", " 대표", "운전 면허증 번호", "서울시 ", "강남구 ", "테헤란로 ", "동 ", "리 ", "가 ", "산 ",
    "0", "1", "2", "3", "4", "5", "7", "9", "00", "010", "02", "+82", "(0)", "(", ")", "-", "–", ".", ":",
    "@", "%", "_", "+", "a", "Z", "M", "S", "G", "x", "K", "ſ", "٣", "３", "12", "255", "256", "901231",
    "1234567", "김", "남궁", "독고", "독", "이", "민수", "씨", "님", "양", "기자", "대표적", "모", "당",
    "한국", "서울", "경기", "운전면허", "주민번호", "계좌", "국민은행", "은행", "입금", "성명:", "주소:",
    "번지", "아파트", "101동", "호", "로", "길", "https://", "HTTP://", "www.", "WWW.", "hTtPſ://",
    "blog.naver.com/", "/~", "/@", "users/", "example.com", "fe80", "::", "1.1.1.1", "3.1.4.1",
    "4111-1111-1111-1111", "850101-1234568", "11-22-333333-44",
]


def _texts(tmp_path: Path) -> list[str]:
    texts = [json.loads(line)["text"] for line in (DATA / "pii_sample.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = tmp_path / "news.txt"
    write_corpus(corpus, 0.05)
    texts.append(corpus.read_text(encoding="utf-8"))
    rng = random.Random(8)
    texts.extend("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 40))) for _ in range(3000))
    return texts


def _run(texts: list[str]) -> list[list[tuple[str, ...]]]:
    return [[(name, *map(str, f)) for name, detector in detectors.DETECTORS.items() for f in detector(text)]
            + [("detect", *map(str, f)) for f in detectors.detect(text)] for text in texts]


def test_fast_patterns_find_what_the_plain_patterns_find(tmp_path, monkeypatch):
    texts = _texts(tmp_path)
    fast = _run(texts)
    for name, pattern in PLAIN.items():
        monkeypatch.setattr(detectors, name, re.compile(pattern))
    monkeypatch.setattr(detectors, "_matches_at", lambda pattern, text, starts: pattern.finditer(text))
    plain = _run(texts)
    assert fast == plain
    found = {f[1] for findings in plain for f in findings}
    assert found >= set(detectors.PII_TYPES)  # the corpus exercises every type


@pytest.mark.parametrize(("text", "expected"), [
    ("(02) 123-4567", ("phone", 0, 13)), ("+82 10-1234-5678", ("phone", 0, 16)),
    ("a%b.c@example.com", ("email", 0, 17)), ("x.y@example.com", ("email", 0, 15)),
    ("https://github.com/minsu", ("url", 0, 24)), ("www.instagram.com/minsu", ("url", 0, 23)),
    ("10.0.0.1", ("ip", 0, 8)), ("2001:db8:0:0:1:0:0:1", ("ip", 0, 20)),
    ("서울 12-345678-90", ("driver_license", 0, 15)), ("운전면허 11-22-333333-44", ("driver_license", 5, 20)),
])
def test_anchored_patterns_find_values_at_the_text_start(text, expected):
    """An anchor's start, computed backwards from it, may be 0: the first character of the text."""
    assert [(f.type, f.start, f.end) for f in detectors.detect(text)] == [expected]
