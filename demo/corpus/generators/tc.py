"""YNAT headlines: ``<who>, <what> <happened>`` from seven topic word lists; the label is the list the
words came from."""

from __future__ import annotations

import random

from ._korean import Record, guid

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


def records(rng: random.Random, per_label: int = 14) -> list[Record]:
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
            guid=guid("tc", n),
            predefined_news_category=record["label"],
            url=f"https://news.example.com/article/2026{month:02d}{day:02d}{n:04d}",
            date=f"2026.{month:02d}.{day:02d}. {noon} {hour}:{minute:02d}",
        )
    return [{k: r[k] for k in ("guid", "title", "label", "predefined_news_category", "url", "date")} for r in records]
