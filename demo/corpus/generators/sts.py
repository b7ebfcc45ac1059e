"""Review, policy and smart-speaker sentence pairs whose similarity the pattern fixes, with three raters around it."""

from __future__ import annotations

import random

from ._korean import Record, guid

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


def records(rng: random.Random, n: int = 96) -> list[Record]:
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
                "guid": guid("sts", len(records)),
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
