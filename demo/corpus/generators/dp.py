"""Head-final sentences from analysed eojeol: modifiers attach to the next word, the rest to the verb."""

from __future__ import annotations

import random

from ._korean import Record, guid, obj_particle, subj_particle

#: Eojeol as (form, lemma, pos); nouns are given bare and take their particle below.
_DP_SUBJECTS = [
    ("동생", "NNG"),
    ("할머니", "NNG"),
    ("학생들", "NNG+XSN"),
    ("언니", "NNG"),
    ("아버지", "NNG"),
    ("선수들", "NNG+XSN"),
    ("친구", "NNG"),
    ("연구진", "NNG"),
]
_DP_TIMES = [
    ("어제", "어제", "MAG", "NP_AJT"),
    ("오늘", "오늘", "MAG", "NP_AJT"),
    ("주말마다", "주말 마다", "NNG+JX", "NP_AJT"),
    ("아침에", "아침 에", "NNG+JKB", "NP_AJT"),
]
_DP_PLACES = [("공원", "NNG"), ("도서관", "NNG"), ("집", "NNG"), ("카페", "NNG"), ("회의실", "NNG"), ("바닷가", "NNG")]
#: An object with the verbs that go with it.
_DP_OBJECTS = [
    (("책", "NNG"), [("읽었다.", "읽 었 다 .", "VV+EP+EF+SF"), ("빌렸다.", "빌리 었 다 .", "VV+EP+EF+SF")]),
    (("편지", "NNG"), [("보냈다.", "보내 었 다 .", "VV+EP+EF+SF"), ("썼다.", "쓰 었 다 .", "VV+EP+EF+SF")]),
    (
        ("보고서", "NNG"),
        [("준비했다.", "준비 하 였 다 .", "NNG+XSV+EP+EF+SF"), ("발표했다.", "발표 하 였 다 .", "NNG+XSV+EP+EF+SF")],
    ),
    (("사진", "NNG"), [("찍었다.", "찍 었 다 .", "VV+EP+EF+SF")]),
    (("김밥", "NNG"), [("만들었다.", "만들 었 다 .", "VV+EP+EF+SF"), ("먹었다.", "먹 었 다 .", "VV+EP+EF+SF")]),
    (("계획", "NNG"), [("세웠다.", "세우 었 다 .", "VV+EP+EF+SF")]),
]
_DP_DETERMINERS = [("새", "MM"), ("모든", "MM"), ("그", "MM")]
_DP_OWNERS = [("동네", "NNG"), ("학교", "NNG"), ("회사", "NNG"), ("가족", "NNG")]


def _noun(word: tuple[str, str], particle: str, tag: str) -> tuple[str, str, str]:
    form, pos = word
    stem = form[:-1] + " " + form[-1] if pos == "NNG+XSN" else form  # 학생들 -> 학생 들
    return form + particle, f"{stem} {particle}", f"{pos}+{tag}"


def records(rng: random.Random, n: int = 96) -> list[Record]:
    records: list[Record] = []
    seen: set[str] = set()
    while len(records) < n:
        subject = rng.choice(_DP_SUBJECTS)
        rows: list[tuple[str, str, str, str, str]] = []  # form, lemma, pos, deprel, role
        rows.append((*_noun(subject, subj_particle(subject[0]), "JKS"), "NP_SBJ", "verb"))
        if rng.random() < 0.7:
            form, lemma, pos, deprel = rng.choice(_DP_TIMES)
            rows.append((form, lemma, pos, deprel, "verb"))
        if rng.random() < 0.7:
            rows.append((*_noun(rng.choice(_DP_PLACES), "에서", "JKB"), "NP_AJT", "verb"))
        modifier = rng.random()
        if modifier < 0.35:
            form, pos = rng.choice(_DP_DETERMINERS)
            rows.append((form, form, pos, "DP", "next"))
        elif modifier < 0.6:
            owner = rng.choice(_DP_OWNERS)
            rows.append((*_noun(owner, "의", "JKG"), "NP_MOD", "next"))
        obj, verbs = rng.choice(_DP_OBJECTS)
        rows.append((*_noun(obj, obj_particle(obj[0]), "JKO"), "NP_OBJ", "verb"))
        rows.append((*rng.choice(verbs), "VP", "root"))
        sentence = " ".join(r[0] for r in rows)
        if sentence in seen:
            continue
        seen.add(sentence)
        last = len(rows)
        heads = [0 if role == "root" else last if role == "verb" else i + 2 for i, (*_, role) in enumerate(rows)]
        records.append(
            {
                "guid": guid("dp", len(records)),
                "sentence": sentence,
                "index": list(range(1, last + 1)),
                "word_form": [r[0] for r in rows],
                "lemma": [r[1] for r in rows],
                "pos": [r[2] for r in rows],
                "head": heads,
                "deprel": [r[3] for r in rows],
            }
        )
    return records
