"""Word lists the task types' synthetic records share (``TaskType.synthetic_record``).

Small templated Korean, not corpus data: every name is fictional or a common noun. The leading underscore
keeps the registry's auto-discovery from treating this module as a task type.
"""

from __future__ import annotations

PEOPLE = ["김민준", "이서연", "박지호", "최유진", "정하늘", "강도윤", "조수아", "윤서준", "장예린", "임태양"]
PLACES = ["서울", "부산", "대구", "인천", "광주", "대전", "울산", "제주", "수원", "전주"]
ORGS = ["한빛전자", "푸른은행", "새봄대학교", "누리병원", "하나물산", "바다항공", "별빛방송", "초록농협"]
NOUNS = ["회의", "계획", "보고서", "사진", "음식", "책", "영화", "노래", "공원", "시장", "학교", "가게"]
#: (stem, past tense) of a verb.
VERBS = [("보", "봤다"), ("만들", "만들었다"), ("찾", "찾았다"), ("읽", "읽었다"), ("사", "샀다"), ("팔", "팔았다")]
FILLER = ["오늘", "발표", "전망", "논란", "확대", "강화", "첫", "새", "올해", "주요"]
