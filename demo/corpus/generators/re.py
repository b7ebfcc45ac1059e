"""One relation per sentence; the historical figures' birthplaces, birth years and titles are the true ones."""

from __future__ import annotations

import random
import re

from ._korean import ORGS, Record, guid, obj_particle, subj_particle, topic_particle

#: Facts about the public historical figures, so that no relation is made up: birthplace, birth year, title.
_BORN_IN = {"세종": "한성", "이순신": "한성", "정약용": "남양주", "신사임당": "강릉", "김구": "해주"}
_BORN_YEAR = {"세종": "1397년", "이순신": "1545년", "정약용": "1762년", "신사임당": "1504년", "김구": "1876년"}
_TITLE = {"세종": "임금", "이순신": "장군", "정약용": "실학자", "신사임당": "화가", "김구": "독립운동가"}
_FIGURES = list(_BORN_IN)

#: (relation, subject type, object type, sentence patterns with {S} and {O}, subjects, objects: a list, or the
#: object of each subject)
_RE_PATTERNS: list[tuple[str, str, str, list[str], list[str], list[str] | dict[str, str]]] = [
    (
        "org:founded",
        "ORG",
        "DAT",
        ["{S}{는} {O}에 설립된 회사다.", "{O}에 문을 연 {S}{는} 올해 창립 기념식을 열었다."],
        ORGS,
        ["1998년", "2003년", "2011년", "1987년", "2015년"],
    ),
    (
        "org:place_of_headquarters",
        "ORG",
        "LOC",
        ["{S}의 본사는 {O}에 있다.", "{O}에 본사를 둔 {S}{는} 올해 매출이 늘었다."],
        ORGS,
        ["판교", "부산", "대전", "광주", "인천"],
    ),
    (
        "org:product",
        "ORG",
        "POH",
        ["{S}{는} 지난해 {O}{를} 출시했다.", "{O}{는} {S}{가} 만든 제품이다."],
        ORGS,
        ["누리폰 X", "한빛 청소기", "가람 워치", "새봄 비타민", "미래 태블릿"],
    ),
    (
        "org:member_of",
        "ORG",
        "ORG",
        ["{S}{는} {O}에 가입한 회원사다.", "{O}{는} {S}{를} 새 회원사로 받았다."],
        ORGS,
        ["한국전자협회", "벤처기업연합", "수출기업협의회", "녹색경영포럼"],
    ),
    (
        "per:place_of_birth",
        "PER",
        "LOC",
        ["{S}{는} {O}에서 태어났다.", "{O}{는} {S}{가} 태어난 곳이다.", "{S}{가} 태어난 {O}에는 기념관이 있다."],
        _FIGURES,
        _BORN_IN,
    ),
    (
        "per:title",
        "PER",
        "POH",
        [
            "{O} {S}의 일대기가 책으로 나왔다.",
            "{O} {S}의 업적을 다룬 다큐멘터리가 방영된다.",
            "{O} {S}의 초상화가 공개됐다.",
        ],
        _FIGURES,
        _TITLE,
    ),
    (
        "per:date_of_birth",
        "PER",
        "DAT",
        ["{S}{는} {O}에 태어났다.", "{S}{가} 태어난 해는 {O}이다.", "{O}에 태어난 {S}{는} 큰 업적을 남겼다."],
        _FIGURES,
        _BORN_YEAR,
    ),
    (
        "no_relation",
        "ORG",
        "LOC",
        ["{S}의 신제품 광고가 {O} 거리 전광판에 걸렸다.", "{S} 직원들이 {O}에서 봉사 활동을 했다."],
        ORGS,
        ["명동", "강남", "해운대", "홍대"],
    ),
    ("no_relation", "PER", "ORG", ["{O}{는} {S}의 이름을 딴 문화 행사를 후원한다."], _FIGURES, ORGS),
]
_PARTICLES = {"{는}": topic_particle, "{를}": obj_particle, "{가}": subj_particle}


def _fill(pattern: str, subject: str, obj: str) -> tuple[str, int, int]:
    """The sentence of ``pattern`` and where its subject and object start (particles chosen by 받침)."""
    sentence, starts = "", {}
    for piece in re.split(r"(\{S\}|\{O\}|\{는\}|\{를\}|\{가\})", pattern):
        if piece in ("{S}", "{O}"):
            starts[piece] = len(sentence)
            sentence += subject if piece == "{S}" else obj
        elif piece in _PARTICLES:
            sentence += _PARTICLES[piece](sentence)
        else:
            sentence += piece
    return sentence, starts["{S}"], starts["{O}"]


def records(rng: random.Random, n: int = 96) -> list[Record]:
    records: list[Record] = []
    seen: set[str] = set()
    while len(records) < n:
        relation, s_type, o_type, patterns, subjects, objects = _RE_PATTERNS[len(records) % len(_RE_PATTERNS)]
        subject = rng.choice(subjects)
        obj = objects[subject] if isinstance(objects, dict) else rng.choice(objects)
        pattern = rng.choice(patterns)
        if subject == obj:
            continue
        sentence, s_start, o_start = _fill(pattern, subject, obj)
        if sentence in seen:
            continue
        seen.add(sentence)
        records.append(
            {
                "guid": guid("re", len(records)),
                "sentence": sentence,
                "subject_entity": {
                    "word": subject,
                    "start_idx": s_start,
                    "end_idx": s_start + len(subject) - 1,
                    "type": s_type,
                },
                "object_entity": {"word": obj, "start_idx": o_start, "end_idx": o_start + len(obj) - 1, "type": o_type},
                "label": relation,
                "source": rng.choice(["wikipedia", "wikitree"]),
            }
        )
    return records
