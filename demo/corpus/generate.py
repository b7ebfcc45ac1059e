"""Write ``demo/corpus/generated/<task>.jsonl``: more demo records for the eight task types.

The hand-written files beside this script hold 24-44 records per task, too few for a release whose dev
split must have 20 records before its baseline check may pass. This script adds records built from
Korean sentence patterns and small word lists, deterministically (a fixed seed per task, no clock, no
network), so that the committed files can be checked against it (``tests/demo/test_demo.py``):

    python demo/corpus/generate.py          # rewrite the files
    python demo/corpus/generate.py --check  # exit 1 if a committed file differs

The label of every record follows from how it was built (a headline about a match is 스포츠, a
hypothesis that negates the premise is a contradiction …), which is the signal the shipped baselines
learn. Every company, venue and place of business is fictional; the only people named are public
historical figures, as in the hand-written files.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "generated"
#: Generated guids continue the hand-written numbering from here: goldset-demo-<task>-1001, …
FIRST_NUMBER = 1001

Record = dict[str, Any]


def _guid(task: str, n: int) -> str:
    return f"goldset-demo-{task}-{FIRST_NUMBER + n:04d}"


# -- tc: YNAT headlines -------------------------------------------------------------------------------

_TC: dict[str, tuple[list[str], list[str], list[str]]] = {
    "IT과학": (
        ["가상전자", "한빛소프트", "누리통신", "국내 연구진", "미래과학원"],
        ["인공지능 반도체", "6G 시험망", "양자 암호 칩", "초소형 배터리", "자율주행 소프트웨어", "로봇 손 센서"],
        ["개발", "공개", "시연 성공", "상용화 착수", "특허 등록"],
    ),
    "경제": (
        ["코스피", "원·달러 환율", "수출", "소비자물가", "한빛물산 주가"],
        ["석 달 만에 상승", "1년 만에 최저", "두 달 연속 하락", "예상보다 큰 폭 증가", "반년 만에 반등"],
        ["금리 동결 영향", "반도체 호조에", "유가 급등 여파", "외국인 매수세에", "내수 부진 속"],
    ),
    "사회": (
        ["가람시", "서해시", "누리구", "새봄군", "한울시"],
        ["어린이 통학로", "공공도서관 야간 개방", "폭염 대피소", "무료 법률 상담", "노인 일자리 사업"],
        ["확대 운영", "전면 시행", "신청 접수 시작", "예산 두 배로", "시범 도입"],
    ),
    "생활문화": (
        ["올가을", "이번 주말", "연말", "봄맞이", "여름방학"],
        ["뮤지컬 신작", "전통 공예 전시", "캠핑 요리 축제", "클래식 야외 공연", "그림책 원화전"],
        ["막 올라", "관람객 몰려", "예매 시작", "무료 개방", "한 달간 열려"],
    ),
    "세계": (
        ["미국", "일본", "프랑스", "브라질", "인도"],
        ["대통령 선거", "총리 연설", "국경 협상", "기후 정상회의", "대규모 파업"],
        ["앞두고 긴장", "결과 발표", "외신 주목", "각국 반응 엇갈려", "합의 불발"],
    ),
    "스포츠": (
        ["가람 FC", "서해 타이거즈", "누리 블루윙스", "한울 레인저스", "새봄 유나이티드"],
        ["결승골로", "연장 접전 끝에", "9회 역전승으로", "홈 경기에서", "원정 경기에서"],
        ["3연승", "시즌 첫 승", "선두 탈환", "우승 확정", "플레이오프 진출"],
    ),
    "정치": (
        ["여야", "국회", "정부", "국무회의", "행정안전부"],
        ["추경 예산안", "선거구 획정", "지방분권 법안", "국정감사 일정", "개헌 논의"],
        ["합의 불발", "처리 합의", "본회의 통과", "협상 재개", "의결"],
    ),
}


def tc_records(rng: random.Random, per_label: int = 14) -> list[Record]:
    records: list[Record] = []
    for label, (subjects, middles, ends) in _TC.items():
        combos = [(s, m, e) for s in subjects for m in middles for e in ends]
        for subject, middle, end in rng.sample(combos, per_label):
            title = f"{subject}, {end} {middle}" if label == "경제" else f"{subject}, {middle} {end}"
            records.append({"title": title, "label": label})
    rng.shuffle(records)
    for n, record in enumerate(records):
        month, day = 1 + n % 12, 1 + (n * 7) % 28
        hour, minute = n % 12 or 12, (n * 13) % 60
        noon = "오전" if n % 2 else "오후"
        record.update(
            guid=_guid("tc", n),
            predefined_news_category=record["label"],
            url=f"https://news.example.com/article/2026{month:02d}{day:02d}{n:04d}",
            date=f"2026.{month:02d}.{day:02d}. {noon} {hour}:{minute:02d}",
        )
    return [{k: r[k] for k in ("guid", "title", "label", "predefined_news_category", "url", "date")} for r in records]


# -- sts: review and dialogue sentence pairs ------------------------------------------------------------

#: (first wording, second wording) of one statement, grouped by what the statements are about.
_STS_FACTS: dict[str, list[tuple[str, str]]] = {
    "airbnb-rtt": [
        ("방이 넓고 아주 깨끗했어요", "객실이 널찍하고 매우 청결했습니다"),
        ("역에서 걸어서 5분이면 도착해요", "역까지 도보로 5분밖에 걸리지 않습니다"),
        ("호스트가 체크인을 친절하게 도와주셨어요", "집주인이 입실 절차를 상냥하게 안내해 주었습니다"),
        ("밤에도 조용해서 푹 잘 수 있었어요", "밤에 소음이 없어서 편하게 잠들었습니다"),
        ("주방 도구가 잘 갖춰져 있었어요", "조리 기구가 빠짐없이 준비되어 있었습니다"),
        ("창밖으로 바다가 한눈에 보였어요", "창문 너머로 바다 전망이 시원하게 펼쳐졌습니다"),
    ],
    "policy": [
        ("청년 월세 지원 신청은 다음 달 1일부터 받습니다", "청년 주거비 지원 접수는 내달 1일에 시작됩니다"),
        ("공공 자전거 이용 요금이 올해 동결됩니다", "올해 공유 자전거 요금은 오르지 않습니다"),
        (
            "어린이 예방접종은 보건소에서 무료로 받을 수 있습니다",
            "보건소에서 아동 예방접종을 비용 없이 받을 수 있습니다",
        ),
        ("전입 신고는 온라인으로도 할 수 있습니다", "주소 이전 신고를 인터넷으로 처리할 수 있습니다"),
        ("폐가전은 전화 한 통이면 무상으로 수거해 갑니다", "못 쓰는 가전제품은 전화로 신청하면 무료로 가져갑니다"),
        ("심야 버스 노선이 세 개 더 생깁니다", "밤늦게 다니는 버스 노선이 3개 늘어납니다"),
    ],
    "paraKQC": [
        ("내일 아침 일곱 시에 알람 맞춰 줘", "내일 오전 7시로 알람을 설정해 줘"),
        ("거실 불 좀 꺼 줄래", "거실 전등을 꺼 줘"),
        ("이번 주 토요일 날씨 어때", "이번 토요일에 날씨가 어떨지 알려 줘"),
        ("엄마한테 늦는다고 문자 보내 줘", "어머니께 늦을 거라고 메시지 보내 줘"),
        ("가까운 약국이 어디 있어", "근처에 있는 약국 위치 알려 줘"),
        ("음악 소리 조금만 줄여 줘", "노래 볼륨을 약간 낮춰 줘"),
    ],
}


def _sts_pair(rng: random.Random, source: str, target: int) -> tuple[str, str]:
    """Two sentences whose similarity the pattern fixes: 5 the same statement in other words, 3 one of two
    statements shared, 1 two statements on the same subject, 0 statements from unrelated sources."""
    facts = _STS_FACTS[source]
    a, b = rng.sample(range(len(facts)), 2)
    if target == 5:
        return facts[a][0] + ".", facts[a][1] + "."
    if target == 3:
        return f"{facts[a][0]}. {facts[b][0]}.", f"{facts[a][1]}."
    if target == 1:
        return facts[a][0] + ".", f"{facts[b][1]}."
    other = rng.choice([name for name in _STS_FACTS if name != source])
    return facts[a][0] + ".", f"{rng.choice(_STS_FACTS[other])[1]}."


def sts_records(rng: random.Random, n: int = 96) -> list[Record]:
    targets = [5, 3, 1, 0] * (n // 4 + 1)
    records = []
    seen: set[tuple[str, str]] = set()
    while len(records) < n:
        target = targets[len(records)]
        source = rng.choice(list(_STS_FACTS))
        s1, s2 = _sts_pair(rng, source, target)
        if rng.random() < 0.5:  # either side may be the longer or the original one
            s1, s2 = s2, s1
        if (s1, s2) in seen:
            continue
        seen.add((s1, s2))
        # three raters around the pattern's score: most agree, some are one point off
        scores = [min(5, max(0, target + rng.choice((0, 0, 0, 0, -1, 1)))) for _ in range(3)]
        real = sum(scores) / len(scores)
        counts = [scores.count(v) for v in range(6)]
        records.append(
            {
                "guid": _guid("sts", len(records)),
                "source": source,
                "sentence1": s1,
                "sentence2": s2,
                "labels": {"label": round(real + 1e-9, 1), "real-label": real, "binary-label": int(real >= 3.0)},
                "annotations": {
                    "agreement": ":".join(map(str, counts)),
                    "annotators": ["11", "12", "13"],
                    "annotations": scores,
                },
            }
        )
    return records


# -- nli: premises with one hypothesis per label -----------------------------------------------------------

_NLI_SUBJECTS = [
    "가람시",
    "서해시 교육청",
    "한빛물산",
    "누리구 보건소",
    "새봄 도서관",
    "한울시 체육회",
    "가상전자",
    "미래과학원",
]
_NLI_EVENTS = [
    ("시민 건강 강좌", "강좌"),
    ("신입 사원 채용 설명회", "설명회"),
    ("여름 독서 캠프", "캠프"),
    ("지역 농산물 장터", "장터"),
    ("청소년 코딩 대회", "대회"),
    ("무료 법률 상담회", "상담회"),
    ("야간 걷기 행사", "행사"),
    ("봉사자 발대식", "발대식"),
]
_NLI_TIMES = [
    ("지난 토요일", "지난 일요일"),
    ("이번 달 초", "지난달 말"),
    ("어제 오후", "오늘 아침"),
    ("지난 3일", "지난 10일"),
]
_NLI_PLACES = ["시청 대강당", "중앙공원 야외무대", "본사 1층 로비", "구민회관", "체육관", "시립미술관 앞마당"]
#: Neutral hypotheses: a plausible fact the premise does not settle ({s}: the organiser, {e}: the event).
_NLI_EXTRA = [
    "{e}에는 참가자가 예상보다 적었다.",
    "{s}{t} 내년에도 {e}{o} 열 계획이다.",
    "{e} 비용은 모두 후원금으로 마련했다.",
    "{e} 참석자 대부분은 20대였다.",
    "{s}{t} {e}{o} 준비하는 데 석 달이 걸렸다.",
    "지역 방송이 {e}{o} 생중계했다.",
]


def nli_records(rng: random.Random, premises: int = 32) -> list[Record]:
    records: list[Record] = []
    combos = [(s, e, t, p) for s in _NLI_SUBJECTS for e in _NLI_EVENTS for t in _NLI_TIMES for p in _NLI_PLACES]
    for subject, (event, short), (when, other_when), place in rng.sample(combos, premises):
        topic = _topic(subject)
        premise = f"{subject}{topic} {when} {place}에서 {event}{_object(event)} 열었다."
        source = rng.choice(["wikinews", "policy", "wikitree"])
        hypotheses = {
            "entailment": rng.choice(
                [
                    f"{place}에서 {short}{_subject(short)} 열렸다.",
                    f"{subject}{topic} {short}{_object(short)} 개최했다.",
                    f"{when} {subject}{_ga(subject)} 주최한 {short}{_subject(short)} 있었다.",
                ]
            ),
            "contradiction": rng.choice(
                [
                    f"{subject}{topic} {event}{_object(event)} 열지 않았다.",
                    f"{subject}{topic} {other_when}에 {event}{_object(event)} 열었다.",
                    f"{event}{_topic(event)} 취소되어 {place}에서는 아무 행사도 없었다.",
                ]
            ),
            "neutral": rng.choice(_NLI_EXTRA).format(s=subject, t=topic, e=event, o=_object(event)),
        }
        for label, hypothesis in hypotheses.items():
            records.append(
                {
                    "guid": "",
                    "source": source,
                    "premise": premise,
                    "hypothesis": hypothesis,
                    "gold_label": label,
                    "author": label,
                }
            )
    for n, record in enumerate(records):
        record["guid"] = _guid("nli", n)
    return records


def _has_final(word: str) -> bool:
    """Whether the last syllable of ``word`` has a final consonant (받침), which chooses the particle."""
    last = word[-1]
    return "가" <= last <= "힣" and (ord(last) - ord("가")) % 28 != 0


def _object(word: str) -> str:
    return "을" if _has_final(word) else "를"


def _subject(word: str) -> str:
    return "이" if _has_final(word) else "가"


def _ga(word: str) -> str:
    return _subject(word)


def _ro(word: str) -> str:
    """으로 after a final consonant other than ㄹ, else 로."""
    final = (ord(word[-1]) - ord("가")) % 28 if "가" <= word[-1] <= "힣" else 0
    return "으로" if final not in (0, 8) else "로"


def _topic(word: str) -> str:
    return "은" if _has_final(word) else "는"


# -- ner: sentences with entity markup ------------------------------------------------------------------

_ORGS = ["가상전자", "한빛물산", "누리통신", "미래과학원", "가람 FC", "서해 타이거즈", "새봄제약", "한울은행"]
_LOCS = ["판교", "부산", "광주", "대전", "제주도", "강릉", "인천항", "전주 한옥마을", "여의도", "세종시"]
_DATES = ["2026년 3월", "지난달 12일", "올해 초", "2025년 11월", "다음 달 5일", "지난해 여름", "6월 1일"]
_TIMES = ["오후 7시", "오전 10시 30분", "새벽 5시", "밤 9시", "정오"]
#: (what, how many, what the company decided to do with it)
_QTYS = [
    ("신제품", "3종", "출시하기로"),
    ("직원", "200명", "새로 뽑기로"),
    ("매장", "12곳", "새로 열기로"),
    ("투자금", "500억 원", "추가로 투입하기로"),
]
_CROWDS = [("관람객", "1만 명"), ("관중", "2만 명"), ("시민", "5천 명"), ("여행객", "3만 명")]
_PEOPLE = ["세종", "이순신", "장영실", "정약용", "신사임당", "김구"]
_NER_PATTERNS: list[Callable[[random.Random], str]] = [
    lambda r: f"<{r.choice(_ORGS)}:OG>는 <{r.choice(_DATES)}:DT> <{r.choice(_LOCS)}:LC>에서 새 서비스를 선보였다.",
    lambda r: (lambda thing, n, plan: f"<{r.choice(_ORGS)}:OG>는 올해 {thing} <{n}:QT>을 {plan} 했다.")(
        *r.choice(_QTYS)
    ),
    lambda r: f"<{r.choice(_DATES)}:DT> <{r.choice(_TIMES)}:TI> <{r.choice(_LOCS)}:LC> 일대에 강한 비가 내렸다.",
    lambda r: f"<{r.choice(_PEOPLE)}:PS>의 업적을 기리는 전시가 <{r.choice(_LOCS)}:LC>에서 열린다.",
    lambda r: (lambda thing, n: f"<{r.choice(_LOCS)}:LC> 축제에 {thing} <{n}:QT>이 몰렸다.")(*r.choice(_CROWDS)),
    lambda r: f"<{r.choice(_ORGS)}:OG>와 <{r.choice(_ORGS)}:OG>는 <{r.choice(_DATES)}:DT> 업무 협약을 맺었다.",
    lambda r: f"경기는 <{r.choice(_TIMES)}:TI>에 <{r.choice(_LOCS)}:LC> 종합운동장에서 시작된다.",
    lambda r: f"<{r.choice(_PEOPLE)}:PS> 탄생을 기념해 <{r.choice(_ORGS)}:OG>가 장학금을 내놓았다.",
]


def ner_records(rng: random.Random, n: int = 96) -> list[Record]:
    sentences: list[str] = []
    while len(sentences) < n:
        sentence = _NER_PATTERNS[len(sentences) % len(_NER_PATTERNS)](rng)
        if sentence not in sentences and not _same_org_twice(sentence):
            sentences.append(sentence)
    return [{"guid": _guid("ner", i), "sentence": s} for i, s in enumerate(sentences)]


def _same_org_twice(sentence: str) -> bool:
    orgs = [o for o in _ORGS if f"<{o}:OG>" in sentence]
    return any(sentence.count(f"<{o}:OG>") > 1 for o in orgs)


# -- re: one relation per sentence ------------------------------------------------------------------------

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
        _ORGS,
        ["1998년", "2003년", "2011년", "1987년", "2015년"],
    ),
    (
        "org:place_of_headquarters",
        "ORG",
        "LOC",
        ["{S}의 본사는 {O}에 있다.", "{O}에 본사를 둔 {S}{는} 올해 매출이 늘었다."],
        _ORGS,
        ["판교", "부산", "대전", "광주", "인천"],
    ),
    (
        "org:product",
        "ORG",
        "POH",
        ["{S}{는} 지난해 {O}{를} 출시했다.", "{O}{는} {S}{가} 만든 제품이다."],
        _ORGS,
        ["누리폰 X", "한빛 청소기", "가람 워치", "새봄 비타민", "미래 태블릿"],
    ),
    (
        "org:member_of",
        "ORG",
        "ORG",
        ["{S}{는} {O}에 가입한 회원사다.", "{O}{는} {S}{를} 새 회원사로 받았다."],
        _ORGS,
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
        _ORGS,
        ["명동", "강남", "해운대", "홍대"],
    ),
    ("no_relation", "PER", "ORG", ["{O}{는} {S}의 이름을 딴 문화 행사를 후원한다."], _FIGURES, _ORGS),
]
_PARTICLES = {"{는}": _topic, "{를}": _object, "{가}": _subject}


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


def re_records(rng: random.Random, n: int = 96) -> list[Record]:
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
                "guid": _guid("re", len(records)),
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


# -- dp: head-final sentences from analysed eojeol ----------------------------------------------------------

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


def dp_records(rng: random.Random, n: int = 96) -> list[Record]:
    records: list[Record] = []
    seen: set[str] = set()
    while len(records) < n:
        subject = rng.choice(_DP_SUBJECTS)
        rows: list[tuple[str, str, str, str, str]] = []  # form, lemma, pos, deprel, role
        rows.append((*_noun(subject, _subject(subject[0]), "JKS"), "NP_SBJ", "verb"))
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
        rows.append((*_noun(obj, _object(obj[0]), "JKO"), "NP_OBJ", "verb"))
        rows.append((*rng.choice(verbs), "VP", "root"))
        sentence = " ".join(r[0] for r in rows)
        if sentence in seen:
            continue
        seen.add(sentence)
        last = len(rows)
        heads = [0 if role == "root" else last if role == "verb" else i + 2 for i, (*_, role) in enumerate(rows)]
        records.append(
            {
                "guid": _guid("dp", len(records)),
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


# -- mrc: news passages with questions of the three types ---------------------------------------------------

_MRC_TOWNS = ["가람시", "서해시", "누리군", "새봄시", "한울군", "다온시", "하늬시", "여울군"]
_MRC_FACILITIES = [
    ("청소년 수련관", "수련관"),
    ("공공 수영장", "수영장"),
    ("생활 체육관", "체육관"),
    ("어린이 도서관", "도서관"),
    ("반려동물 놀이터", "놀이터"),
    ("노인 복지관", "복지관"),
]
_MRC_MONTHS = ["3월", "4월", "5월", "9월", "10월", "11월"]
_MRC_PLACES = ["옛 버스터미널 부지", "중앙공원 북쪽", "시청 맞은편", "강변 산책로 옆", "폐교된 초등학교 자리"]
_MRC_COSTS = ["85억 원", "120억 원", "64억 원", "210억 원", "47억 원"]
_MRC_DAYS = ["월요일", "화요일", "수요일"]


def mrc_records(rng: random.Random, passages: int = 36) -> list[Record]:
    records: list[Record] = []
    combos = [(t, f) for t in _MRC_TOWNS for f in _MRC_FACILITIES]
    for p, (town, (facility, short)) in enumerate(rng.sample(combos, passages)):
        month, place, cost, day = (
            rng.choice(_MRC_MONTHS),
            rng.choice(_MRC_PLACES),
            rng.choice(_MRC_COSTS),
            rng.choice(_MRC_DAYS),
        )
        users = rng.choice(["600명", "350명", "1천 명", "800명"])
        sentences = [
            f"{town}{_topic(town)} {place}에 {facility}{_object(facility)} 새로 지어 {month}에 문을 연다고 밝혔다.",
            f"사업비는 모두 {cost}이 들었으며, 이 가운데 절반은 국비로 마련했다.",
            f"{short}{_topic(short)} 매주 {day}에 쉬고, 나머지 요일에는 오전 9시부터 오후 8시까지 운영한다.",
            f"{town}{_topic(town)} 개관 첫해 하루 이용객을 평균 {users}으로 예상했다.",
            f'{town} 관계자는 "주민 의견을 모아 프로그램을 계속 늘리겠다"고 말했다.',
        ]
        context = " ".join(sentences)
        title = f"{town}, {place}에 {facility} {month} 개관"
        questions = [
            (
                f"{town}{_ga(town)} {place}에 새로 지은 {facility}{_topic(facility)} 언제 문을 여나?",
                1,
                month,
                sentences[0],
            ),
            (f"{facility}{_object(facility)} 짓는 데 사업비는 모두 얼마가 들었나?", 1, cost, sentences[1]),
            (f"새로 문을 여는 {short}{_topic(short)} 매주 무슨 요일에 쉬나?", 2, day, sentences[2]),
            (f"{town}{_topic(town)} 개관 첫해 하루 이용객을 평균 몇 명으로 예상했나?", 2, users, sentences[3]),
        ]
        chosen = rng.sample(questions, 2 if p % 3 == 0 else 3)
        if p % 3 == 0:  # every third passage also has a question it cannot answer
            chosen.append((f"{facility}의 설계를 맡은 건축가는 누구인가?", 3, town, sentences[0]))
        for question, qtype, answer, sentence in chosen:
            start = context.index(sentence) + sentence.index(answer)
            span = [{"text": answer, "answer_start": start}]
            record: Record = {
                "guid": "",
                "title": title,
                "context": context,
                "news_category": "사회",
                "source": "goldset-demo",
                "question": question,
                "question_type": qtype,
                "is_impossible": qtype == 3,
                "answers": [] if qtype == 3 else span,
            }
            if qtype == 3:
                record["plausible_answers"] = span
            records.append(record)
    for n, record in enumerate(records):
        record["guid"] = _guid("mrc", n)
    return records


# -- dst: WoS dialogues over the demo ontology -------------------------------------------------------------


def _dst_restaurant(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    area, price, kind = (
        rng.choice(_values(ontology, "식당-지역")),
        rng.choice(_values(ontology, "식당-가격대")),
        rng.choice(_values(ontology, "식당-종류")),
    )
    name, day, people = (
        rng.choice(_values(ontology, "식당-이름")),
        rng.choice(_values(ontology, "식당-예약 요일")),
        rng.choice(_values(ontology, "식당-예약 명수")),
    )
    state = [f"식당-지역-{area}", f"식당-가격대-{price}", f"식당-종류-{kind}"]
    priced = {"저렴": "저렴한", "적당": "적당한", "비싼": "비싼"}[price]
    turns = [
        {"role": "user", "text": f"{area}에 가격대가 {priced} {kind}{_subject(kind)} 있을까요?", "state": list(state)},
        {"role": "sys", "text": f"네, '{name}'{_object(name)} 추천드려요. 예약을 도와드릴까요?"},
    ]
    state += [f"식당-이름-{name}", f"식당-예약 요일-{day}", f"식당-예약 명수-{people}"]
    turns += [
        {"role": "user", "text": f"좋아요. {name}{_ro(name)} {day}에 {people}명 예약해 주세요.", "state": list(state)},
        {"role": "sys", "text": "예약이 완료되었습니다. 더 필요하신 것이 있을까요?"},
    ]
    return ["식당"], turns


def _dst_hotel(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    area, kind = rng.choice(_values(ontology, "숙소-지역")), rng.choice(_values(ontology, "숙소-종류"))
    parking = rng.choice(["yes", "no"])
    name, nights = rng.choice(_values(ontology, "숙소-이름")), rng.choice(_values(ontology, "숙소-예약 기간"))
    state = [f"숙소-지역-{area}", f"숙소-종류-{kind}"]
    turns = [
        {"role": "user", "text": f"{area}에 있는 {kind}{_object(kind)} 찾고 있어요.", "state": list(state)},
        {"role": "sys", "text": "주차가 필요하신가요?"},
    ]
    state.append(f"숙소-주차 가능-{parking}")
    answer = (
        "네, 차를 가져가서 주차가 되면 좋겠어요."
        if parking == "yes"
        else "아니요, 대중교통으로 갈 거라 주차는 필요 없어요."
    )
    turns += [
        {"role": "user", "text": answer, "state": list(state)},
        {"role": "sys", "text": f"'{name}'{_subject(name)} 조건에 맞습니다. 며칠 묵으시나요?"},
    ]
    state += [f"숙소-이름-{name}", f"숙소-예약 기간-{nights}"]
    turns += [
        {"role": "user", "text": f"{name}{_ro(name)} {nights}박 예약할게요.", "state": list(state)},
        {"role": "sys", "text": "예약되었습니다. 즐거운 여행 되세요."},
    ]
    return ["숙소"], turns


def _dst_taxi(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    start, end = rng.sample(_values(ontology, "택시-출발지"), 1)[0], rng.choice(_values(ontology, "택시-도착지"))
    leave = rng.choice(_values(ontology, "택시-출발 시간"))
    state = [f"택시-출발지-{start}", f"택시-도착지-{end}"]
    turns = [
        {"role": "user", "text": f"{start}에서 {end}까지 가는 택시를 불러 주세요.", "state": list(state)},
        {"role": "sys", "text": "몇 시에 출발하실 건가요?"},
    ]
    state.append(f"택시-출발 시간-{leave}")
    turns += [
        {"role": "user", "text": f"{leave}에 출발할게요.", "state": list(state)},
        {"role": "sys", "text": "택시 예약이 끝났습니다. 차량 번호는 문자로 보내 드릴게요."},
    ]
    return ["택시"], turns


def _dst_sight(rng: random.Random, ontology: dict[str, list[str]]) -> tuple[list[str], list[Record]]:
    kind, area = rng.choice(_values(ontology, "관광-종류")), rng.choice(_values(ontology, "관광-지역"))
    name = rng.choice(_values(ontology, "관광-이름"))
    state = [f"관광-종류-{kind}", f"관광-지역-{area}"]
    turns = [
        {"role": "user", "text": f"{area}에서 가 볼 만한 {kind} 있나요?", "state": list(state)},
        {"role": "sys", "text": f"'{name}'{_subject(name)} 인기가 많습니다. 교육적인 곳을 찾으시나요?"},
    ]
    state += [f"관광-이름-{name}", "관광-교육적-yes"]
    turns += [
        {
            "role": "user",
            "text": f"네, 아이들과 갈 거라 교육적인 곳이면 좋아요. {name}{_subject(name)} 좋겠네요.",
            "state": list(state),
        },
        {"role": "sys", "text": "좋은 선택입니다. 즐거운 시간 보내세요."},
    ]
    return ["관광"], turns


def _values(ontology: dict[str, list[str]], slot: str) -> list[str]:
    return [v for v in ontology[slot] if v not in ("none", "dontcare")]


def dst_records(rng: random.Random, n: int = 96) -> list[Record]:
    ontology = json.loads((HERE / "dst_ontology.json").read_text(encoding="utf-8"))
    makers = [_dst_restaurant, _dst_hotel, _dst_taxi, _dst_sight]
    records: list[Record] = []
    seen: set[str] = set()
    while len(records) < n:
        domains, dialogue = makers[len(records) % len(makers)](rng, ontology)
        key = json.dumps(dialogue, ensure_ascii=False)
        if key in seen:
            continue
        seen.add(key)
        records.append({"guid": _guid("dst", len(records)), "domains": domains, "dialogue": dialogue})
    return records


GENERATORS: dict[str, Callable[[random.Random], list[Record]]] = {
    "tc": tc_records,
    "sts": sts_records,
    "nli": nli_records,
    "ner": ner_records,
    "re": re_records,
    "dp": dp_records,
    "mrc": mrc_records,
    "dst": dst_records,
}


def generated(task: str) -> str:
    """The JSONL text of the generated file of ``task`` (seeded by the task's position, so reproducible)."""
    rng = random.Random(f"goldset-demo-{task}")
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in GENERATORS[task](rng))


def _files() -> Iterator[tuple[Path, str]]:
    for task in GENERATORS:
        yield OUT / f"{task}.jsonl", generated(task)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs")
    args = parser.parse_args(argv)
    stale = []
    for path, text in _files():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python demo/corpus/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
