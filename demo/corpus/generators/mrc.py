"""Local-news passages with questions of the three KLUE-MRC types, worded after their sentence."""

from __future__ import annotations

import random

from ._korean import Record, guid, obj_particle, subj_particle, topic_particle

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


def records(rng: random.Random, passages: int = 36) -> list[Record]:
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
            f"{town}{topic_particle(town)} {place}에 {facility}{obj_particle(facility)} "
            f"새로 지어 {month}에 문을 연다고 밝혔다.",
            f"사업비는 모두 {cost}이 들었으며, 이 가운데 절반은 국비로 마련했다.",
            f"{short}{topic_particle(short)} 매주 {day}에 쉬고, 나머지 요일에는 오전 9시부터 오후 8시까지 운영한다.",
            f"{town}{topic_particle(town)} 개관 첫해 하루 이용객을 평균 {users}으로 예상했다.",
            f'{town} 관계자는 "주민 의견을 모아 프로그램을 계속 늘리겠다"고 말했다.',
        ]
        context = " ".join(sentences)
        title = f"{town}, {place}에 {facility} {month} 개관"
        questions = [
            (
                f"{town}{subj_particle(town)} {place}에 새로 지은 {facility}{topic_particle(facility)} 언제 문을 여나?",
                1,
                month,
                sentences[0],
            ),
            (f"{facility}{obj_particle(facility)} 짓는 데 사업비는 모두 얼마가 들었나?", 1, cost, sentences[1]),
            (f"새로 문을 여는 {short}{topic_particle(short)} 매주 무슨 요일에 쉬나?", 2, day, sentences[2]),
            (f"{town}{topic_particle(town)} 개관 첫해 하루 이용객을 평균 몇 명으로 예상했나?", 2, users, sentences[3]),
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
        record["guid"] = guid("mrc", n)
    return records
