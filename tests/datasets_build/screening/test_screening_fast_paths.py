"""The shortcuts the lexicon screener takes for speed (a scan for any form or negative word before the views are
built, also when folding changes offsets) give exactly the hits of the full matching: every lexicon form embedded,
split by separators and digits, allowed words, the texts in tests/data and, with KLUE_DATA_DIR, every KLUE dev
text."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from datasets_build.screening import lexicon
from datasets_build.screening.lexicon import LEXICON_PATH, LexiconScreener

DATA = Path(__file__).parents[2] / "data"
LEXICON: dict[str, Any] = json.loads(LEXICON_PATH.read_text(encoding="utf-8"))
FAST = LexiconScreener()
FULL = LexiconScreener(shortcuts=False)

#: Put between a form's characters: what the views drop (spaces, punctuation, symbols, format characters, digits),
#: what they keep (a combining mark, a letter, a digit that is no decimal: ❶), and what folding lengthens (…, ㎞).
SEPARATORS = [" ", ".", "  ", "-", "_", "·", "ㆍ", "*", "1", "12", "٣", "❶", "²", "\u200b", "\u0301", "…", "㎞", " … ",
              "x", "가"]
#: Put around a form: nothing, words, another Hangul syllable (시 발표), insult tails, what folding lengthens.
CONTEXTS = ["{}", "아 {} 진짜", "{}표", "그{}", "{}들", "{}야", "2018{}", "{}…", "…{}", "㈜{} ", "({})",
            "{} 발표가 있었다"]


def _forms() -> list[str]:
    return [form for term in LEXICON["terms"] for form in term["forms"]]


def _split(form: str) -> Iterator[str]:
    for separator in SEPARATORS:
        yield separator.join(form)
        if len(form) > 2:  # one separator only, at each place
            for i in range(1, len(form)):
                yield form[:i] + separator + form[i:]


def lexicon_texts() -> Iterator[str]:
    for form in _forms():
        variants = [form, form.upper(), form.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)}), *_split(form)]
        for variant in variants:
            for context in CONTEXTS:
                yield context.format(variant)
    for term in LEXICON["terms"]:
        for allowed in term.get("allow", []):
            for variant in [allowed, *_split(allowed)]:
                yield from (context.format(variant) for context in CONTEXTS)
    bias = LEXICON["bias"]
    groups = [group for members in bias["groups"].values() for group in members]
    for i, negative in enumerate(bias["negatives"]):
        group, cue = groups[i % len(groups)], bias["cues"][i % len(bias["cues"])]
        yield f"{group} {cue}{negative}"
        yield f"{group}은 좋다. {cue}{negative}…"
        yield f"{negative}"
        yield " ".join(negative)
    # Conjoining jamo and compatibility jamo, which fold (and compose) differently as a whole and one at a time.
    yield from ["\u1109\u1175\u1107\u1161\u11af", "ㅅㅂ…", "ㅅ…ㅂ", "ㅅ\u1161ㅂ", "\u1109\u1107\u1161…", "ᄡ…", "ㅄ㎞"]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # tests/data/bad holds malformed and deeply nested files
        return None


def file_texts(path: Path) -> Iterator[str]:
    """Every line of a file and every string in its JSON (whole or per line); a TSV's columns too."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    yield from _strings(_json(raw))
    for line in raw.splitlines():
        yield line
        yield from line.split("\t")
        yield from _strings(_json(line))
        if line.startswith("## "):  # a KLUE NER sentence, also without its <entity:TYPE> markup
            yield re.sub(r"<([^<>:]*):[A-Z]{2,3}>", r"\1", line.split("\t")[-1])


def mismatches(texts: Iterable[str]) -> tuple[list[tuple[str, Any, Any]], int, int]:
    """The texts the two screeners disagree on, how many texts were compared, and how many had hits."""
    wrong, seen, hit = [], 0, 0
    for text in dict.fromkeys(texts):
        fast, full = FAST.screen(text), FULL.screen(text)
        seen += 1
        hit += bool(full)
        if fast != full:
            wrong.append((text, fast, full))
    return wrong, seen, hit


def test_every_form_split_and_embedded_gives_the_hits_of_the_full_matching():
    wrong, seen, hit = mismatches(lexicon_texts())
    assert wrong[:5] == []
    assert seen > 20_000 and hit > seen // 3  # the corpus does exercise the matching, not only the shortcut


def test_the_texts_in_tests_data_give_the_hits_of_the_full_matching():
    files = sorted(path for path in DATA.rglob("*") if path.is_file())
    wrong, seen, hit = mismatches(text for path in files for text in file_texts(path))
    assert wrong[:5] == []
    assert seen > 300 and hit > 50


def test_every_klue_dev_text_gives_the_hits_of_the_full_matching(klue_dir):
    files = sorted(path for path in klue_dir.iterdir() if path.suffix in (".json", ".tsv"))
    wrong, seen, _ = mismatches(text for path in files for text in file_texts(path))
    assert wrong[:5] == []
    assert seen > 50_000


@pytest.mark.parametrize("text", ["씨❶발…", "씨1발…", "병²신 ㎞", "개 새 끼…", "ㅅ ㅂ…"])
def test_forms_are_found_when_folding_changes_offsets(text):
    assert FAST.screen(text) == FULL.screen(text) != []


@pytest.mark.parametrize("text", ["서울시는 내년 예산을 발표했다", "경기 침체…수출 감소 이어져", "면적 84㎡ 아파트",
                                  "노인들은 복지관에서 점심을 드신다"])
def test_texts_without_any_form_skip_the_views(monkeypatch, text):
    def no_views(text: str) -> None:
        raise AssertionError("the views were built")

    monkeypatch.setattr(lexicon, "_squeeze_both", no_views)
    assert FAST.screen(text) == []


def test_views_folded_a_character_at_a_time_map_back_to_each_character():
    def reference(text: str) -> tuple[lexicon._View, lexicon._View]:
        chars: tuple[list[str], list[int], list[str], list[int]] = ([], [], [], [])
        for i, ch in enumerate(text):
            for view, part in enumerate(lexicon._fold(ch)):
                for c in part:
                    chars[2 * view].append(c)
                    chars[2 * view + 1].append(i)
        return lexicon._View("".join(chars[0]), chars[1]), lexicon._View("".join(chars[2]), chars[3])

    texts = [text for text in dict.fromkeys(lexicon_texts()) if len(unicodedata.normalize("NFKC", text)) != len(text)]
    assert len(texts) > 5_000
    assert [text for text in texts if lexicon._squeeze_both(text) != reference(text)][:5] == []
