"""Toxicity and social-bias screening: the lexicon, its obfuscation handling, the plug-in interface, and the
precision/recall measured on the labelled sample (figures in docs/screening.md)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from datasets_build import screening
from datasets_build.screening import ScreenHit, screen_text
from datasets_build.screening.evaluate import evaluate
from datasets_build.screening.lexicon import LexiconScreener

SAMPLE = Path(__file__).parents[2] / "data" / "toxicity_sample.jsonl"


@pytest.mark.parametrize("text", ["씨발", "씨 발 진짜", "씨.발", "씨1발놈", "ㅅㅂ", "c발", "병1신", "ㅂㅅ", "개새끼야",
                                  "18놈"])
def test_profanity_and_its_obfuscations(text):
    hits = LexiconScreener().screen(text)
    assert hits and hits[0].kind == "toxic"


@pytest.mark.parametrize("text", ["시발점에서 출발", "시 발표가 있었다", "개 새끼를 낳았다", "엄마를 졸라서 샀다",
                                  "애자일 개발", "동성애자 인권 단체", "한 녀석이 왔다", "병신양요"])
def test_legitimate_words_are_not_hits(text):
    assert LexiconScreener().screen(text) == []


@pytest.mark.parametrize(("text", "category"), [
    ("김치녀들 답이 없다", "gender"), ("틀딱들 때문에", "age"), ("짱깨 음식", "nationality"), ("개독들", "religion"),
    ("전라디언", "region"), ("똥꼬충", "sexuality"), ("절름발이 주제에", "disability"),
])
def test_slurs_against_groups_carry_the_group(text, category):
    [hit] = LexiconScreener().screen(text)
    assert (hit.kind, hit.category) == ("toxic", category)


def test_generalising_statements_about_groups_are_bias():
    [hit] = LexiconScreener().screen("노인들은 다 세금만 축내는 짐짝이다")
    assert (hit.kind, hit.category, hit.start, hit.end) == ("bias", "age", 0, 3)
    assert LexiconScreener().screen("노인들은 복지관에서 점심을 드신다") == []  # a group, no negative generalisation


def test_hits_name_the_versioned_rule_and_map_to_original_offsets():
    screener = LexiconScreener()
    [hit] = screener.screen("아 진짜 씨 . 발")
    assert hit.rule == f"{screener.name}@{screener.version}:p01"
    assert (hit.start, hit.end) == (5, 10)


def test_the_screener_is_pluggable(settings, monkeypatch):
    class Shouting:
        name = "shouting"
        version = "1"

        def screen(self, text: str) -> list[ScreenHit]:
            return [ScreenHit("toxic", "shouting", 0, len(text), "shouting@1")] if text.isupper() else []

    monkeypatch.setattr("tests.datasets_build.screening.test_screening.Shouting", Shouting, raising=False)
    settings.GOLDSET_SCREENERS = ["tests.datasets_build.screening.test_screening.Shouting"]
    screening.configured_screeners.cache_clear()
    try:
        assert [h.category for h in screen_text("STOP")] == ["shouting"]
        assert screen_text("씨발") == []  # the lexicon screener is no longer configured
    finally:
        screening.configured_screeners.cache_clear()


def test_precision_and_recall_on_the_labelled_sample():
    result = evaluate(SAMPLE)
    assert result["records"] == 102
    # The figures docs/screening.md reports; the floor keeps a lexicon change from silently degrading them.
    assert result["any"]["precision"] >= 0.95 and result["any"]["recall"] >= 0.9
    assert result["toxic"]["precision"] >= 0.95 and result["toxic"]["recall"] >= 0.9
    assert result["bias"]["precision"] >= 0.9 and result["bias"]["recall"] >= 0.8


THREATS = Path(__file__).parents[2] / "data" / "threat_sample.jsonl"


@pytest.mark.parametrize("text", [
    "이런 멍청한 놈들은 다 죽어야 한다", "너 같은 건 그냥 죽어라", "그 정치인은 당장 죽었으면 좋겠다",
    "내가 너를 죽일 거야", "집 앞에서 기다렸다가 칼로 찔러 버릴 거야", "이런 놈은 죽어 마땅하다",
])
def test_threats_and_calls_for_violence_are_toxic(text):
    hits = [h for h in screen_text(text) if h.category == "threat"]
    assert hits and all(h.kind == "toxic" and h.rule.startswith("ko-threats@") for h in hits)


@pytest.mark.parametrize("text", [
    "죽을 만큼 힘들다", "배가 고파 죽겠다", "웃겨 죽겠네 진짜", "죽어라 공부해서 합격했다", "잡초를 죽여야 한다",
    "이 집 국물 맛이 죽인다", "범인이 피해자를 죽였다고 경찰이 밝혔다", "전복죽을 끓여 드렸다",
])
def test_figures_of_speech_and_reports_are_not_threats(text):
    assert screen_text(text) == []


def test_a_threat_hit_covers_the_verb_and_its_ending():
    text = "이런 멍청한 놈들은 다 죽어야 한다."
    [hit] = screen_text(text)
    assert text[hit.start:hit.end] == "죽어야 한다" and hit.rule.endswith(":must")


def test_precision_and_recall_on_the_threat_sample():
    result = evaluate(THREATS)
    assert result["records"] == 65
    # The figures docs/screening.md reports (0.96 / 0.90); the floor keeps a rule change from degrading them.
    assert result["toxic"]["precision"] >= 0.95 and result["toxic"]["recall"] >= 0.9


def test_a_repeated_sentence_is_analysed_once_with_the_same_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The threat screener keeps analysed sentences: a sentence met again (elsewhere in a text, in another
    record) gives the hits a fresh analysis gives, at its own offsets, without calling the analyser again; and
    the kept analyses go with the analyser."""
    from datasets_build import morph
    from datasets_build.screening import threats

    screener = threats.ThreatScreener()
    texts = [json.loads(line)["text"] for line in SAMPLE.with_name("threat_sample.jsonl").read_text(
        encoding="utf-8").splitlines()]
    with screener.let_go():
        fresh = [screener.screen(text) for text in texts]
        assert any(fresh)
        calls = []
        kiwi = morph._kiwi()
        with monkeypatch.context() as patched:
            patched.setattr(morph, "_kiwi", lambda: calls.append(1) or kiwi)
            assert [screener.screen(text) for text in texts] == fresh and not calls
            # Second sentence of a text: the same morphemes, shifted by where the sentence starts.
            moved = [screener.screen(f"좋은 아침입니다.\n{text}") for text in texts]
            assert not calls
        assert moved == [[dataclasses.replace(h, start=h.start + 10, end=h.end + 10) for h in hits] for hits in fresh]
    assert threats._morphemes.cache_info().currsize == 0
