"""Seeded synthetic KLUE records with a learnable signal, for benchmarks and self-tests of the baselines.

Not corpus data: small templated Korean sentences. ``synthetic_records(task, n, seed)`` returns ``n``
records in the shape ``iter_klue_records`` yields; ``write_synthetic_release`` writes a release folder.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotation.task_types.ner import to_markup
from datasets_build.klue_formats import klue_file_name, write_klue_file

_PEOPLE = ["김민준", "이서연", "박지호", "최유진", "정하늘", "강도윤", "조수아", "윤서준", "장예린", "임태양"]
_PLACES = ["서울", "부산", "대구", "인천", "광주", "대전", "울산", "제주", "수원", "전주"]
_ORGS = ["한빛전자", "푸른은행", "새봄대학교", "누리병원", "하나물산", "바다항공", "별빛방송", "초록농협"]
_NOUNS = ["회의", "계획", "보고서", "사진", "음식", "책", "영화", "노래", "공원", "시장", "학교", "가게"]
_VERBS = [("보", "봤다"), ("만들", "만들었다"), ("찾", "찾았다"), ("읽", "읽었다"), ("사", "샀다"), ("팔", "팔았다")]
_TOPICS = {
    "IT과학": ["반도체", "인공지능", "스마트폰", "위성", "소프트웨어", "데이터"],
    "경제": ["주가", "환율", "수출", "금리", "물가", "투자"],
    "사회": ["경찰", "사고", "재판", "복지", "시민", "교통"],
    "생활문화": ["공연", "전시", "여행", "요리", "축제", "패션"],
    "세계": ["미국", "유럽", "중국", "정상회담", "외교", "유엔"],
    "스포츠": ["축구", "야구", "우승", "감독", "선수", "올림픽"],
    "정치": ["국회", "선거", "대통령", "정당", "장관", "법안"],
}
_FILLER = ["오늘", "발표", "전망", "논란", "확대", "강화", "첫", "새", "올해", "주요"]


def _tc(rng: random.Random, n: int) -> dict[str, Any]:
    label = rng.choice(sorted(_TOPICS))
    shown = label if rng.random() > 0.1 else rng.choice(sorted(_TOPICS))
    words = rng.sample(_TOPICS[shown], 2) + rng.sample(_FILLER, 2)
    rng.shuffle(words)
    return {"guid": f"ynat-v1_train_{n:05d}", "title": " ".join(words), "label": label}


def _nli(rng: random.Random, n: int) -> dict[str, Any]:
    who, where, noun = rng.choice(_PEOPLE), rng.choice(_PLACES), rng.choice(_NOUNS)
    stem, past = rng.choice(_VERBS)
    premise = f"{who}은 {where}에서 {noun}을 {past}."
    label = rng.choice(["entailment", "neutral", "contradiction"])
    hypothesis = {"entailment": f"{who}은 {noun}을 {past}.",
                  "neutral": f"{who}은 {where}에서 친구와 함께 {noun}을 {past}.",
                  "contradiction": f"{who}은 {where}에서 {noun}을 {stem}지 않았다."}[label]
    return {"guid": f"klue-nli-v1_train_{n:05d}", "premise": premise, "hypothesis": hypothesis, "gold_label": label}


def _sts(rng: random.Random, n: int) -> dict[str, Any]:
    words = rng.sample(_NOUNS + _FILLER + _PLACES, 8)
    changed = rng.randint(0, 8)
    other = list(words)
    for i in rng.sample(range(8), changed):
        other[i] = rng.choice(_ORGS + _PEOPLE)
    value = round(min(5.0, max(0.0, 5.0 * (1 - changed / 8) + rng.uniform(-0.4, 0.4))), 2)
    return {"guid": f"klue-sts-v1_train_{n:05d}", "sentence1": " ".join(words), "sentence2": " ".join(other),
            "labels": {"label": round(value, 1), "real-label": value, "binary-label": int(value >= 3.0)}}


def _ner(rng: random.Random, n: int) -> dict[str, Any]:
    parts = [(rng.choice(_PEOPLE), "PS"), ("은 ", None), (rng.choice(_PLACES), "LC"), ("에 있는 ", None),
             (rng.choice(_ORGS), "OG"), ("에서 ", None), (f"{rng.randint(1, 12)}월", "DT"), (" ", None),
             (f"{rng.randint(2, 9)}명", "QT"), ("과 ", None), (rng.choice(_NOUNS), None), ("을 봤다.", None)]
    sentence, entities = "", []
    for text, kind in parts:
        if kind:
            entities.append({"start": len(sentence), "end": len(sentence) + len(text), "type": kind})
        sentence += text
    tags = ["O"] * len(sentence)
    for e in entities:
        tags[e["start"]:e["end"]] = [f"B-{e['type']}"] + [f"I-{e['type']}"] * (e["end"] - e["start"] - 1)
    return {"guid": f"klue-ner-v1_train_{n:05d}", "sentence": sentence, "markup": to_markup(sentence, entities),
            "chars": list(sentence), "tags": tags}


_RE_TEMPLATES = {
    "org:founded_by": ("{o}는 {p}이 세운 회사다.", "ORG", "PER"),
    "per:employee_of": ("{p}은 {o}에서 일한다.", "PER", "ORG"),
    "org:place_of_headquarters": ("{o}의 본사는 {l}에 있다.", "ORG", "LOC"),
    "per:origin": ("{p}은 {l} 출신이다.", "PER", "LOC"),
    "no_relation": ("{p}과 {o}는 같은 날 {l}에서 언급되었다.", "PER", "ORG"),
}


def _re(rng: random.Random, n: int) -> dict[str, Any]:
    label = rng.choice(sorted(_RE_TEMPLATES))
    template, subj_type, obj_type = _RE_TEMPLATES[label]
    fill = {"p": rng.choice(_PEOPLE), "o": rng.choice(_ORGS), "l": rng.choice(_PLACES)}
    sentence = template.format(**fill)
    keys = {"PER": "p", "ORG": "o", "LOC": "l"}

    def entity(kind: str) -> dict[str, Any]:
        word = fill[keys[kind]]
        start = sentence.index(word)
        return {"word": word, "start_idx": start, "end_idx": start + len(word) - 1, "type": kind}

    return {"guid": f"klue-re-v1_train_{n:05d}", "sentence": sentence, "subject_entity": entity(subj_type),
            "object_entity": entity(obj_type), "label": label, "source": "synthetic"}


def _dp(rng: random.Random, n: int) -> dict[str, Any]:
    """Subject, optional modifier chain, object, verb: a head-final tree with the verb as root."""
    name = rng.choice(_PEOPLE)
    rows: list[tuple[str, str, str, str]] = [(name + "이", name + " 이", "NNP+JKS", "NP_SBJ")]
    for _ in range(rng.randint(0, 3)):
        noun = rng.choice(_NOUNS)
        rows.append((noun + "의", f"{noun} 의", "NNG+JKG", "NP_MOD"))
    noun = rng.choice(_NOUNS)
    rows.append((noun + "을", f"{noun} 을", "NNG+JKO", "NP_OBJ"))
    stem, past = rng.choice(_VERBS)
    rows.append((past, f"{stem} 었 다 .", "VV+EP+EF+SF", "VP"))
    last = len(rows)
    heads = [last] + [i + 2 for i in range(1, last - 1)] + [0]
    return {"guid": f"klue-dp-v1_train_{n:05d}", "sentence": " ".join(r[0] for r in rows),
            "index": list(range(1, last + 1)), "word_form": [r[0] for r in rows], "lemma": [r[1] for r in rows],
            "pos": [r[2] for r in rows], "head": heads, "deprel": [r[3] for r in rows]}


def _mrc(rng: random.Random, n: int) -> dict[str, Any]:
    people = rng.sample(_PEOPLE, 3)
    places = rng.sample(_PLACES, 3)
    context = " ".join(f"{person}의 고향은 {place}이다." for person, place in zip(people, places, strict=True))
    answerable = rng.random() < 0.7
    asked = rng.randrange(3)
    person = people[asked] if answerable else rng.choice([p for p in _PEOPLE if p not in people])
    lead = f"{people[asked]}의 고향은 "
    answers = [{"text": places[asked], "answer_start": context.index(lead) + len(lead)}]
    return {"guid": f"klue-mrc-v1_train_{n:05d}", "title": f"인물 {n}", "context": context,
            "question": f"{person}의 고향은 어디인가?", "answers": answers if answerable else [],
            "plausible_answers": [] if answerable else answers, "is_impossible": not answerable,
            "question_type": 1 if answerable else 3}


_DST_SLOTS = {"숙소-지역": ["서울 동쪽", "서울 서쪽", "서울 남쪽"], "숙소-가격대": ["저렴", "적당", "비싼"],
              "식당-종류": ["한식당", "중식당", "양식당"], "택시-도착지": ["서울역", "강남역", "잠실역"]}
_DST_PHRASES = {"숙소-지역": "{v}에 있는 숙소를 찾아요.", "숙소-가격대": "가격대는 {v}한 곳이면 좋겠어요.",
                "식당-종류": "{v}도 알려주세요.", "택시-도착지": "{v}까지 가는 택시를 불러주세요."}


def _dst(rng: random.Random, n: int) -> dict[str, Any]:
    slots = rng.sample(sorted(_DST_SLOTS), rng.randint(1, 3))
    state: list[str] = []
    turns = []
    for slot in slots:
        value = rng.choice(_DST_SLOTS[slot])
        state = [*state, f"{slot}-{value}"]
        turns.append({"role": "user", "text": _DST_PHRASES[slot].format(v=value), "state": list(state)})
        turns.append({"role": "sys", "text": "네, 알겠습니다. 더 필요하신 것이 있나요?"})
    turns.append({"role": "user", "text": "감사합니다.", "state": list(state)})
    return {"guid": f"wos-v1_train_{n:05d}", "domains": sorted({s.split("-")[0] for s in slots}), "dialogue": turns}


GENERATORS: dict[str, Callable[[random.Random, int], dict[str, Any]]] = {
    "tc": _tc, "nli": _nli, "sts": _sts, "ner": _ner, "re": _re, "dp": _dp, "mrc": _mrc, "dst": _dst,
}
#: The ontology a synthetic release ships, for the generators whose records need one.
ONTOLOGIES: dict[str, dict[str, list[str]]] = {
    "dst": {slot: ["none", "dontcare", *values] for slot, values in _DST_SLOTS.items()}}


def synthetic_records(task_slug: str, n: int, seed: int = 13) -> list[dict[str, Any]]:
    rng = random.Random(f"{task_slug}:{seed}")
    return [GENERATORS[task_slug](rng, i) for i in range(n)]


def write_release(release_dir: Path, task_slug: str, splits: dict[str, list[dict[str, Any]]],
                  version: str = "1.1", ontology: dict[str, list[str]] | None = None) -> Path:
    """A release folder as the release builder lays it out: manifest.json and KLUE-named split files."""
    release_dir = Path(release_dir)
    release_dir.mkdir(parents=True, exist_ok=True)
    for split, records in splits.items():
        write_klue_file(release_dir / klue_file_name(task_slug, version, split), task_slug, records, version=version)
    if ontology is not None:
        (release_dir / f"wos-v{version}_ontology.json").write_text(json.dumps(ontology, ensure_ascii=False),
                                                                   encoding="utf-8")
    manifest = {"task_type": task_slug, "version": version, "splits": {s: len(r) for s, r in splits.items()}}
    (release_dir / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")
    return release_dir


def write_synthetic_release(release_dir: Path, task_slug: str, n: int, seed: int = 13) -> Path:
    """``n`` synthetic records split 80/10/10 in order (the generator is already random)."""
    records = synthetic_records(task_slug, n, seed)
    cut1, cut2 = int(n * 0.8), int(n * 0.9)
    splits = {"train": records[:cut1], "dev": records[cut1:cut2], "test": records[cut2:]}
    for split, rows in splits.items():
        for i, row in enumerate(rows):
            row["guid"] = row["guid"].replace("_train_", f"_{split}_").rsplit("_", 1)[0] + f"_{i:05d}"
    ontology = ONTOLOGIES.get(task_slug)
    return write_release(release_dir, task_slug, splits, ontology=ontology)
