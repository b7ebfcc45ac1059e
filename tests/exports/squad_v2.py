"""The official SQuAD v2.0 scorer's exact match and F1 (evaluate-v2.0.py's definitions), for the tests that
score a release's SQuAD files."""

from __future__ import annotations

import collections
import re
import string
from typing import Any


# The official SQuAD v2.0 evaluation script's normalisation and scores (evaluate-v2.0.py).
def _normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.compile(r"\b(a|an|the)\b", re.UNICODE).sub(" ", s)
    return " ".join(s.split())


def _get_tokens(s: str) -> list[str]:
    return _normalize_answer(s).split() if s else []


def _compute_exact(a_gold: str, a_pred: str) -> int:
    return int(_normalize_answer(a_gold) == _normalize_answer(a_pred))


def _compute_f1(a_gold: str, a_pred: str) -> float:
    gold_toks, pred_toks = _get_tokens(a_gold), _get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return float(gold_toks == pred_toks)
    if num_same == 0:
        return 0.0
    precision, recall = num_same / len(pred_toks), num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def squad_v2_scores(dataset: list[dict[str, Any]], preds: dict[str, str]) -> tuple[float, float, int]:
    exact, f1 = {}, {}
    for article in dataset:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                gold_answers = [a["text"] for a in qa["answers"] if _normalize_answer(a["text"])] or [""]
                exact[qa["id"]] = max(_compute_exact(a, preds[qa["id"]]) for a in gold_answers)
                f1[qa["id"]] = max(_compute_f1(a, preds[qa["id"]]) for a in gold_answers)
    return 100.0 * sum(exact.values()) / len(exact), 100.0 * sum(f1.values()) / len(f1), len(exact)
