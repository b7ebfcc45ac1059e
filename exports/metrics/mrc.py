"""KLUE-MRC: exact match and the official "ROUGE-W" (longest common *substring* F1), max over answers.

Predictions are ``{guid: answer_text}``; an unanswerable question's only gold answer is ``""``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

import numpy as np

from ._common import ScoringError, pct

# The official pattern is meant to blank quotes and Korean brackets, but as written it is one character
# class followed by the literal text "()‘’", so in practice it almost never matches. Reproduced as is.
_OFFICIAL_BRACKETS = re.compile(r"[\'\"《》<>〈〉]\(\)\‘\’")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """Official normalisation: lower-case, (ineffective) bracket pattern, drop ASCII punctuation, collapse spaces."""
    text = _OFFICIAL_BRACKETS.sub(" ", text.lower())
    text = "".join(c for c in text if c not in _ASCII_PUNCTUATION)
    return " ".join(text.split())


def _f1(common: int, pred: str, gold: str) -> float:
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def rouge_w_single(pred: str, gold: str) -> float:
    """Official: F1 of the longest common contiguous substring (difflib, default autojunk as the official code)."""
    if gold == "":
        return float(pred == gold)
    match = SequenceMatcher(None, pred, gold).find_longest_match(0, len(pred), 0, len(gold))
    return _f1(match.size, pred, gold)


def lcs_length(a: str, b: str) -> int:
    """Longest common subsequence length (characters, not necessarily contiguous)."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for char in a:
        current = [0]
        for j, other in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if char == other else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_lcs_single(pred: str, gold: str) -> float:
    """Corrected: character ROUGE-L style F1 on the longest common subsequence."""
    if gold == "":
        return float(pred == gold)
    return _f1(lcs_length(pred, gold), pred, gold)


def gold_answers(record: Mapping[str, Any]) -> list[str]:
    """Normalised gold answers; ``[""]`` for an unanswerable question (plausible answers are ignored)."""
    answers = [normalize_answer(a["text"]) for a in record.get("answers") or []]
    return answers or [""]


def _best(pred: str, golds: Sequence[str], single: Any) -> float:
    return max([0.0] + [single(pred, gold) for gold in golds])


def score_mrc(gold: Sequence[Mapping[str, Any]], pred: Mapping[str, str]) -> dict[str, float]:
    if not gold:
        raise ScoringError("nothing to score")
    missing = [str(r["guid"]) for r in gold if r["guid"] not in pred]
    if missing:
        raise ScoringError(f"{len(missing)} question(s) have no predicted answer, first: {missing[0]}")
    em, rouge, rouge_lcs = [], [], []
    for record in gold:
        answer = normalize_answer(str(pred[record["guid"]] or ""))
        golds = gold_answers(record)
        em.append(max([0.0] + [float(answer == g) for g in golds]))
        rouge.append(_best(answer, golds, rouge_w_single))
        rouge_lcs.append(_best(answer, golds, rouge_lcs_single))
    return {"exact_match": pct(np.mean(em)), "rouge_w": pct(np.mean(rouge)), "rouge_w_lcs": pct(np.mean(rouge_lcs))}
