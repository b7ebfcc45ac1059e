"""The PII detectors' speed-ups change no finding.

For speed, some patterns are written with their "nothing before" lookbehind after the first character,
and some are matched only at anchor positions instead of scanned over the whole text
(datasets_build/pii/detectors.py). Here every detector runs twice over the labelled sample and a seeded
fuzz corpus of PII-like fragments: as shipped, and in its plain form (the lookbehind first, every pattern
scanned with ``finditer``); the findings must be identical. detect also skips the detectors (or the whole
text) whose cheap precondition fails: every finding of the same corpus, of edge cases built around each
precondition, of every string in tests/data and (with KLUE_DATA_DIR) of the KLUE dev sets must pass the
preconditions, and detect must find what it found before them.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from datasets_build.pii import detectors
from demo.synthetic import write_sentences

DATA = Path(__file__).parents[2] / "data"
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
    write_sentences(corpus, 0.05)
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


# -- preconditions: detect skips a detector (or a whole text) that its cheap check rules out -----------

#: Strings at the edge of each precondition: just enough digits (ASCII and other \d digits), an ``@``
#: without a domain, URLs and IPs without Hangul, the shortest name and address cues.
BOUNDARY = [
    "", "0", "123456", "1234567", "12345678", "bench-000123", "ynat-v1_train_00000", "klue-sts-v1_dev_00000",
    "900101-1234568", "외국인등록번호 850505-5123453", "９００１０１-１２３４５６８", "٩٠٠١٠١-١٢٣٤٥٦٨",
    "9001011234568", "900101 - 1234568",
    "02-123-4567", "02 123 4567", "(02)123-4567", "010-123-4567", "01012345678", "+82 2-123-4567", "+82-10-1234-5678",
    "4222222222222", "4111 1111 1111 1111", "378282246310005", "3782-822463-10005", "٤١١١١١١١١١١١١١١١",
    "IBK 12-34-56-78-90", "IBK1234567890", "국민은행 12-34-56-78-90", "계좌 1234567890",
    "송금 12 34 56 78 90", "M12345678", "M123A4567", "xM12345678", "G١٢٣٤٥٦٧٨", "11-22-333333-44",
    "서울 12-345678-90", "운전면허 11 22 333333 44", "b-0000123", "02123456", "021234567", "02-123-456",
    "M1234567", "M123A456", "M12", "xG123", "서울 12-345678-9", "IBK 12-34-56-78-9", "IBK 123456789",
    "900101-123456", "4111 1111 1111 111", "4111 1111 1111 1111 0", "12가3456", "123가 4567", "서울12가3456", "1가3456",
    "a@", "@b", "a@b", "a@b.c", "a@b.co", "%a@b.co", "a%b@c.de", "@@a.bc",
    "://", "http://", "https://github.com/a", "hTtPſ://github.com/a", "www.", "WWW.instagram.com/a", "wWw.x.com/~a",
    "ftp://x.com/~a", "www", "w.ww.", "1.2.3.4", "1.2.3", "255.255.255.255", "١.٢.٣.٤", "a:b:c::", "fe80::1", "::1",
    "1:2:3:4", "2001:db8::1", "G:H:I:J",
    "서울시 강남구 테헤란로 1", "서울시 강남구 테헤란로1", "서울시 강남구 테헤란로 1길 2", "서울시 중구 명동 1",
    "경기도 가평군 상면 덕현리 산 12", "경기도 가평군 덕현리 산12번지", "서울시 종로구 가산 1",
    "주소: 대학로 10", "주소 대학로10", "배송지는 세종대로 1",
    "로1", "길 1", "동 산 1", "사회", "경제", "스포츠", "생활문화", "IT과학",
    "김민수 씨", "김민수씨", "김민수 대표", "남궁민수 님", "이름: 김민", "이름 : 김민", "이름 은 김민", "이름김민",
    "성명\t:\t홍길", "성명:홍길", "예금주 홍길동", "김민 씨", "민수씨",
]


def _leaves(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_leaves(v))]
    return []


def _data_texts() -> list[str]:
    """Every string in tests/data: JSON values when a file or line parses, else its lines."""
    texts = []
    for path in sorted(DATA.rglob("*")):
        if not path.is_file():
            continue
        raw = path.read_bytes().decode("utf-8", errors="replace")
        try:
            texts.extend(_leaves(json.loads(raw)))
            continue
        except (ValueError, RecursionError):  # JSONL, a bad file, or the deeply nested one
            pass
        for line in raw.splitlines():
            try:
                texts.extend(_leaves(json.loads(line)))
            except (ValueError, RecursionError):
                texts.extend([line, *line.split("\t")])
    return texts


def _klue_texts(klue_dir: Path) -> list[str]:
    """Every text field of the KLUE dev sets (with their guids and other strings): JSON string values, the
    sentence and guid lines of the TSVs and their token columns."""
    texts = []
    for path in sorted(klue_dir.glob("*.json")):
        texts.extend(_leaves(json.loads(path.read_text(encoding="utf-8"))))
    for path in sorted(klue_dir.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            texts.extend(line.removeprefix("## ").split("\t"))
    return texts


def _reference_detect(text: str, types: frozenset[str] | None = None) -> list[detectors.Finding]:
    """detect as it was before its preconditions and fast paths: every detector, then settle the overlaps."""
    return detectors.settled([f for detector in detectors.DETECTORS.values() for f in detector(text)
                              if f.start < f.end and (types is None or f.type in types)])


def _check_preconditions(texts: list[str]) -> None:
    """Each detector's findings only in texts that pass its precondition and the whole-text one, and detect
    (with and without a type filter) equal to the reference."""
    some = frozenset({"phone", "person", "address", "ip"})
    failures = []
    for text in dict.fromkeys(texts):
        maybe = detectors._MAYBE_PII.search(text) is not None
        digits = len(re.sub(r"\D", "", text))
        others = detectors._OTHER_CUES.search(text) is not None
        for name, detector in detectors.DETECTORS.items():
            guard = detectors._GUARDS.get(name)
            passes = digits >= detectors._NUMBER_DETECTORS.get(name, 0) and (
                guard is None or guard.search(text) is not None) and (others or name in detectors._NUMBER_DETECTORS)
            if not (maybe and passes) and (found := list(detector(text))):
                failures.append((name, text, found))
        for types in (None, some):
            if detectors.detect(text, types) != _reference_detect(text, types):
                failures.append(("detect", text, types))
    assert not failures, failures[:10]


def test_preconditions_hold_for_every_finding(tmp_path):
    texts = [*BOUNDARY, *_data_texts(), *_texts(tmp_path)]
    # The corpus must reach both sides of every precondition.
    assert any(detectors._MAYBE_PII.search(t) is None for t in texts)
    assert any(detectors._SEVEN_DIGITS.match(t) is None and detectors._MAYBE_PII.search(t) for t in texts)
    for least in set(detectors._NUMBER_DETECTORS.values()):
        assert any(least - 1 == len(re.sub(r"\D", "", t)) for t in texts)
    for guard in detectors._GUARDS.values():
        assert any(guard.search(t) is None and detectors._MAYBE_PII.search(t) for t in texts)
    assert any(detectors._OTHER_CUES.search(t) is None and detectors._digit_count(t) >= 13 for t in texts)
    _check_preconditions(texts)
    found = {f.type for t in BOUNDARY for f in detectors.detect(t)}
    assert found >= set(detectors.PII_TYPES)


def test_preconditions_hold_on_the_klue_dev_sets(klue_dir):
    texts = _klue_texts(klue_dir)
    assert len(texts) > 50_000
    _check_preconditions(texts)


def test_meta_identifiers_skip_every_detector(monkeypatch):
    """A guid holds no Hangul, @, :, www., digit-dot-digit or more than 7 digits: no detector runs at all."""
    def boom(text: str) -> list[detectors.Finding]:
        raise AssertionError(text)

    for plan in ("_PLAN", "_NUMBERS_PLAN"):
        steps = tuple((boom, least, guard) for _, least, guard in getattr(detectors, plan))
        monkeypatch.setattr(detectors, plan, steps)
    for guid in ("bench-000123", "ynat-v1_train_00000", "klue-mrc-v1_dev_01234", "wos-v1_dev_00002", "b-0000123",
                 "b-1234567", "item-20261205"):
        assert detectors.detect(guid) == []
