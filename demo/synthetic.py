"""Synthetic Korean corpora of any size, built from a seed: the benchmarks' inputs (``bench/``), and the
tests' that check what the benchmarks measure (the parallel import, the PII detectors' fast paths).

Nothing here is real text: random syllables and words, with identifiers planted at fixed rates.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SYLLABLES = list("가나다라마바사아자차카타파하거너더러머버서어저처커터퍼허"
                 "고노도로모보소오조초코토포호구누두루무부수우주")
WORDS = [
    "정부는", "오늘", "국회에서", "경제", "정책을", "발표했다", "시장", "금리가", "올랐다", "선수들이",
    "경기에서", "승리했다", "날씨가", "맑겠다", "반도체", "수출이", "늘었다", "인공지능", "기술을",
    "개발한", "대학", "연구진은", "지역", "주민들은", "병원", "의료진이", "학생들", "교육", "환경",
    "문제를", "논의했다", "서울", "부산",
]
SURNAMES = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임"]
GIVEN = ["민수", "지훈", "서연", "하은", "도윤", "수빈", "예준", "지우", "현우", "유진"]


def write_headlines(path: Path, n: int, seed: int = 7) -> None:
    """Headlines of random words; 1 in 10 carries a phone number, 1 in 25 an e-mail, 1 in 100 repeats
    an earlier headline with one character changed (a near duplicate)."""
    rng = np.random.default_rng(seed)
    vocabulary = ["".join(rng.choice(SYLLABLES, size=rng.integers(2, 5))) for _ in range(3000)]
    recent: list[str] = []
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            if recent and i % 100 == 99:
                title = recent[int(rng.integers(len(recent)))] + "!"
            else:
                words = rng.choice(vocabulary, size=int(rng.integers(8, 16)))
                title = " ".join(words) + f" {i}"
                if i % 10 == 3:
                    title += f" 문의 010-{rng.integers(1000, 9999)}-{rng.integers(1000, 9999)}"
                if i % 25 == 7:
                    title += f" 메일 user{i}@example.com"
                recent = [*recent[-49:], title]
            out.write(json.dumps({"guid": f"bench-{i:06d}", "title": title, "label": "사회"}, ensure_ascii=False)
                      + "\n")


def write_sentences(path: Path, megabytes: float, seed: int = 11) -> int:
    """Sentences of random words; every fifth carries one identifier. Returns the byte size."""
    rng = np.random.default_rng(seed)
    target = int(megabytes * 1024 * 1024)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            lines = []
            for i in range(2000):
                sentence = " ".join(rng.choice(WORDS, size=int(rng.integers(6, 14))))
                kind = i % 25
                if kind == 0:
                    sentence += f" 문의는 010-{rng.integers(1000, 9999)}-{rng.integers(1000, 9999)}로 하면 된다"
                elif kind == 5:
                    sentence += f" 제보는 reporter{rng.integers(1, 999)}@example.co.kr 로 보내 달라"
                elif kind == 10:
                    sentence += f" 주민번호 {rng.integers(700101, 991231)}-{rng.integers(1000000, 2999999)} 가 유출됐다"
                elif kind == 15:
                    sentence += f" 계좌 110-{rng.integers(100, 999)}-{rng.integers(100000, 999999)} 로 입금했다"
                elif kind == 20:
                    sentence += f" {rng.choice(SURNAMES)}{rng.choice(GIVEN)} 씨는 이렇게 말했다"
                lines.append(sentence + ".")
            chunk = "\n".join(lines) + "\n"
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
    return written
