"""One Korean word per concept (docs/glossary.md).

* No two different English strings share one Korean string, unless they are true synonyms listed in
  ``SYNONYMS``: a Korean string shared by "Build" and "Building", or by "Dataset card" and "Dataset
  maintainer", is a fuzzy match that was never corrected.
* No Korean string uses a variant the glossary rejects (릴리스 for 배포, 레이블 for 라벨, …).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from .catalogue import CATALOGUE, parse_po

GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "glossary.md"

#: English strings that truly mean the same and may share their Korean string.
SYNONYMS: list[set[str]] = [
    {"PII", "Personal information"},
    {"Instructions", "Task instructions"},
    {"Gold", "Gold answer"},
    {"Sources & licences", "Sources and licences"},
    {"Label", "labelling"},  # the stage's title and its name
    {"Validate", "validation"},
    {"Adjudicate", "adjudication"},
    {"DEPREL", "dependency relation"},
    {"date", "day"},
    {"Keep each item's split", "the items' own splits kept"},
    {"Gold rule", "the gold rule"},
]


def _same(msgid: str) -> str:
    """What two English strings have in common when Korean cannot tell them apart: the case of a heading, a
    plural's s, a final full stop."""
    key = msgid.lower().rstrip(".")
    return key[:-1] if key.endswith("s") else key


def shared_translations(entries: list[dict]) -> dict[str, list[str]]:
    """Korean strings that two different English strings share, unless the allow-list makes them synonyms."""
    by_korean: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        if entry["msgid"] and not entry["obsolete"] and entry["msgstr"]:
            by_korean[entry["msgstr"][0]].add(entry["msgid"])
    allowed = {_same(msgid): group_no for group_no, group in enumerate(SYNONYMS) for msgid in group}
    shared = {}
    for korean, msgids in by_korean.items():
        meanings = {allowed.get(_same(msgid), _same(msgid)) for msgid in msgids}
        if len(meanings) > 1:
            shared[korean] = sorted(msgids)
    return shared


def rejected_variants() -> dict[str, str]:
    """Every rejected Korean variant in the glossary's table, with the term chosen instead."""
    variants = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Concept", "") or set(cells[0]) <= {"-"}:
            continue
        for variant in filter(None, (v.strip() for v in cells[2].split(","))):
            variants[variant] = cells[1]
    return variants


def test_no_korean_string_is_shared_by_two_meanings():
    assert shared_translations(parse_po(CATALOGUE)) == {}


def test_the_check_sees_a_fuzzy_match_and_lets_plurals_and_synonyms_pass():
    entries = [{"msgid": m, "msgstr": {0: s}, "obsolete": False} for m, s in [
        ("Build", "빌드 중"), ("Building", "빌드 중"), ("File", "파일"), ("Files", "파일"),
        ("Release", "배포"), ("release", "배포"), ("PII", "개인정보"), ("Personal information", "개인정보")]]
    assert shared_translations(entries) == {"빌드 중": ["Build", "Building"]}


def test_the_glossary_table_is_read():
    variants = rejected_variants()
    assert variants["릴리스"] == "배포"
    assert variants["레이블"] == "라벨"
    assert variants["단순 기준"] == "자명한 기준선"
    assert variants["검수 검토"] == "검토 대기열"
    assert len(variants) >= 20


def test_no_korean_string_uses_a_rejected_variant():
    variants = rejected_variants()
    found = {}
    for entry in parse_po(CATALOGUE):
        if entry["obsolete"] or not entry["msgid"]:
            continue
        for text in entry["msgstr"].values():
            if hits := [f"{v} → {variants[v]}" for v in variants if re.search(re.escape(v), text)]:
                found[entry["msgid"]] = hits
    assert found == {}


#: English words of a concept and the glossary's Korean term for it: a translation of a string that names the
#: concept uses the term (a variant the glossary does not list, such as 예약 for a lease, is caught here).
CONCEPT_WORDS = {
    r"\blease": "할당", r"\breleases?\b": "배포", r"\badjudicat": "판정", r"\bannotators?\b": "주석자",
    r"\bguidelines?\b": "지침", r"\bscreen(?:ing|ed)\b": "검수", r"\bsplits?\b": "분할", r"\bgold\b": "정답",
    r"\bagreement\b": "일치도", r"\bitems?\b": "항목", r"\bsuggester\b": "제안 모델", r"\bmaintainers?\b": "유지관리자",
    r"\bchecksums?\b": "체크섬", r"\blabels?\b": "라벨", r"\bdeploy": "설치·운영",
}
#: Strings whose Korean rightly leaves the concept's term out: another sense of the word ("evenly split", a
#: metric's own name), a proper name (Label Studio), a stored identifier list, a sentence whose subject Korean drops.
CONCEPT_EXCEPTIONS = {
    "joint goal agreement", "joint goal agreement, mean over pairs", "Observed agreement",
    "entropy of the labels (0 = unanimous, 1 = evenly split)",
    "Label Studio export (JSON)", "Label Studio JSON tasks",
    "majority, mean, span_majority, unanimous, dawid_skene, adjudication, known_answer…",
    "screening review", "Screening review",  # the review queue: 검토 대기열
    "Remove %(label)s", "%(labels)s cannot be removed or renamed: %(reason)s", "label the selection with a type",
    "Imported %(items)s and %(annotations)s.", "Found by the screening when the item was imported.",
    "the gold label of this item changed (version %(seen)s → %(now)s) while you were deciding; reload and decide "
    "again",  # "gold label" is 정답
    "Label Studio export",
    # The budget's JSON keys, named as the API takes them.
    'must be an object with "splits" and "rules"; got %(value)r', "unknown key %(key)r; expected splits, rules",
    'a rule must be an object such as {"k": 3, "split": "train", "sample": 0.05}; got %(value)r',
    "unknown key %(key)r; expected k, split, sample, seed, source, label", "annotators must be a list of usernames",
}


def concept_misses(entries: list[dict]) -> dict[str, list[str]]:
    """Translations of strings naming a concept of :data:`CONCEPT_WORDS` that do not use the concept's term."""
    misses = {}
    for entry in entries:
        text = " ".join(entry["msgstr"].values())
        if entry["obsolete"] or not text or entry["msgid"] in CONCEPT_EXCEPTIONS:
            continue
        if missing := [term for pattern, term in CONCEPT_WORDS.items()
                       if re.search(pattern, entry["msgid"], re.I) and term not in text]:
            misses[entry["msgid"]] = missing
    return misses


def test_a_string_naming_a_concept_uses_its_term():
    assert concept_misses(parse_po(CATALOGUE)) == {}


def test_the_concept_check_sees_another_word_for_the_lease():
    entries = [{"msgid": m, "msgstr": {0: s}, "obsolete": False} for m, s in [
        ("Lease time (minutes)", "항목 예약 시간(분)"), ("Lease expired", "할당 만료"),
        ("Evenly split", "고르게 갈림")]]
    assert concept_misses(entries) == {"Lease time (minutes)": ["할당"], "Evenly split": ["분할"]}
