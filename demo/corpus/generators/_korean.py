"""What the demo generators share: the guid numbering, Korean particles chosen by 받침, the fictional
organisations (named in both the NER and the RE sentences)."""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]
#: Generated guids continue the hand-written numbering from here: goldset-demo-<task>-1001, …
FIRST_NUMBER = 1001
ORGS = ["가상전자", "한빛물산", "누리통신", "미래과학원", "가람 FC", "서해 타이거즈", "새봄제약", "한울은행"]


def guid(task: str, n: int) -> str:
    return f"goldset-demo-{task}-{FIRST_NUMBER + n:04d}"


def has_final(word: str) -> bool:
    """Whether the last syllable of ``word`` has a final consonant (받침), which chooses the particle."""
    last = word[-1]
    return "가" <= last <= "힣" and (ord(last) - ord("가")) % 28 != 0


def obj_particle(word: str) -> str:
    return "을" if has_final(word) else "를"


def subj_particle(word: str) -> str:
    return "이" if has_final(word) else "가"


def ro_particle(word: str) -> str:
    """으로 after a final consonant other than ㄹ, else 로."""
    final = (ord(word[-1]) - ord("가")) % 28 if "가" <= word[-1] <= "힣" else 0
    return "으로" if final not in (0, 8) else "로"


def topic_particle(word: str) -> str:
    return "은" if has_final(word) else "는"

