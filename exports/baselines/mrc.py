"""KLUE-MRC: a lexical-overlap sentence selector, a span ranker inside the chosen sentence, and an
answerability threshold below which the answer is empty.

The sentence sharing most character bigrams with the question is chosen; its eojeols (and pairs of
eojeols), with trailing particles stripped and words of the question excluded, are the candidate
answers. A logistic model scores them from the question's wh-word, the candidate's shape and its
distance to the question's words; the threshold on that score is tuned on train for ROUGE-W.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from sklearn.feature_extraction import FeatureHasher
from sklearn.linear_model import SGDClassifier

from exports.metrics.mrc import gold_answers, normalize_answer, rouge_w_single

from ._base import Model, Predictor, Records, Scored, TaskBaseline

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+|\n+")
_PARTICLES = sorted(
    ["에서는", "에게서", "으로써", "으로서", "이라는", "이라고", "에서", "에게", "으로", "부터", "까지", "처럼",
     "보다", "이다", "이며", "이고", "라는", "라고", "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과",
     "도", "만"],
    key=len, reverse=True)
_WH = ("누구", "언제", "어디", "몇", "무엇", "무슨", "얼마", "어떤", "어느", "왜", "어떻게", "뭐")
_HASHER = FeatureHasher(n_features=1 << 18, input_type="string", alternate_sign=False)
_MAX_CANDIDATES = 60


def strip_particle(word: str) -> str:
    word = word.strip("\"'“”‘’()[]《》〈〉<>,.?!·")
    for particle in _PARTICLES:
        if word.endswith(particle) and len(word) > len(particle):
            return word[: -len(particle)]
    return word


def _bigrams(text: str) -> set[str]:
    text = text.replace(" ", "")
    return {text[i:i + 2] for i in range(len(text) - 1)}


def _shape(text: str) -> str:
    return "".join("9" if c.isdigit() else "a" if c.isascii() and c.isalpha() else "가" if "가" <= c <= "힣" else c
                   for c in text[-2:])


def _candidates(record: dict[str, Any]) -> tuple[float, list[tuple[str, list[str]]]]:
    """(overlap of the best sentence, [(candidate text, features)])."""
    question = record["question"]
    q_bigrams = _bigrams(question)
    sentences = [s for s in _SENTENCE_END.split(record.get("context") or "") if s.strip()]
    if not sentences or not q_bigrams:
        return 0.0, []
    overlaps = [len(q_bigrams & _bigrams(s)) / len(q_bigrams) for s in sentences]
    best = int(np.argmax(overlaps))
    words = sentences[best].split()
    q_stems = {strip_particle(w) for w in question.split()}
    matched = [i for i, w in enumerate(words) if strip_particle(w) in q_stems]
    wh = next((w for w in _WH if w in question), "none")
    overlap_bucket = str(min(int(overlaps[best] * 10), 9))
    out = []
    for i in range(len(words)):
        for width in (1, 2):
            if i + width > len(words):
                continue
            span = " ".join([*words[i:i + width - 1], strip_particle(words[i + width - 1])])
            if not span or strip_particle(words[i]) in q_stems:
                continue
            distance = min((abs(i - m) for m in matched), default=99)
            side = "none" if not matched else "before" if i < min(matched) else "after" if i > max(matched) else "in"
            dist = str(distance) if distance <= 4 else "far"
            features = [f"wh={wh}|shape={_shape(span)}", f"wh={wh}|w={width}", f"dist={dist}", f"side={side}",
                        f"wh={wh}|dist={dist}", f"shape={_shape(span)}|w={width}", f"ov={overlap_bucket}",
                        f"wh={wh}|num={any(c.isdigit() for c in span)}", f"suffix={words[i + width - 1][-1:]}",
                        f"wh={wh}|last={span[-1:]}", f"len={min(len(span), 8)}"]
            out.append((span, features))
    return overlaps[best], out[:_MAX_CANDIDATES]


def _best(model: SGDClassifier, records: Records) -> list[tuple[str, float]]:
    found = [_candidates(r)[1] for r in records]
    flat = [features for candidates in found for _, features in candidates]
    scores = model.decision_function(_HASHER.transform(flat)) if flat else np.zeros(0)
    out, k = [], 0
    for candidates in found:
        if not candidates:
            out.append(("", -np.inf))
            continue
        chunk = scores[k:k + len(candidates)]
        k += len(candidates)
        top = int(np.argmax(chunk))
        out.append((candidates[top][0], float(chunk[top])))
    return out


def train_mrc(train: Records, seed: int, ontology: Any = None) -> Model:
    features, targets = [], []
    for record in train:
        answers = {normalize_answer(strip_particle(a)) for a in gold_answers(record)} - {""}
        for span, span_features in _candidates(record)[1]:
            features.append(span_features)
            targets.append(normalize_answer(span) in answers)
    model = SGDClassifier(loss="log_loss", alpha=1e-5, max_iter=10, tol=None, random_state=seed)
    if not any(targets) or all(targets):
        return Model(trivial_mrc(train), lambda records: [Scored({"guid": r["guid"], "answer": ""}, 0.5, 0.0, 1.0)
                                                          for r in records])
    model.fit(_HASHER.transform(features), targets)

    # Answerability: the score threshold that maximises ROUGE-W on train (empty answer below it).
    best = _best(model, train)
    golds = [gold_answers(r) for r in train]
    with_span = np.asarray([max(rouge_w_single(normalize_answer(s), g) for g in gs)
                            for (s, _), gs in zip(best, golds, strict=True)])
    empty = np.asarray([float("" in gs) for gs in golds])
    scores = np.asarray([s for _, s in best])
    finite = scores[np.isfinite(scores)]
    grid = np.unique(np.quantile(finite, np.linspace(0, 1, 41))) if len(finite) else np.zeros(1)
    threshold = max(grid, key=lambda t: float(np.where(scores >= t, with_span, empty).sum()))
    if float(empty.sum()) >= float(np.where(scores >= threshold, with_span, empty).sum()):
        threshold = np.inf

    def predict(records: Records) -> dict[str, str]:
        return {r["guid"]: span if score >= threshold else ""
                for r, (span, score) in zip(records, _best(model, records), strict=True)}

    def scored(records: Records) -> list[Scored]:
        """The answer (or none, below the threshold); confidence is the logistic of the score's distance
        from the answerability threshold — near the threshold the model cannot tell answer from no answer."""
        out = []
        for record, (span, score) in zip(records, _best(model, records), strict=True):
            distance = 0.0 if not np.isfinite(threshold) and not np.isfinite(score) else (
                -10.0 if not np.isfinite(threshold) else score - threshold if np.isfinite(score) else -10.0)
            p = 1 / (1 + np.exp(-distance))
            answered = score >= threshold
            confidence = float(p if answered else 1 - p)
            entropy = float(-(p * np.log(max(p, 1e-12)) + (1 - p) * np.log(max(1 - p, 1e-12))) / np.log(2))
            out.append(Scored({"guid": record["guid"], "answer": span if answered else ""}, confidence,
                              abs(2 * confidence - 1), entropy))
        return out

    return Model(predict, scored)


def trivial_mrc(train: Records) -> Predictor:
    return lambda records: {r["guid"]: "" for r in records}


BASELINE = TaskBaseline(train_mrc, trivial_mrc,
                        "best-overlap sentence (character bigrams), eojeol span ranker (logistic, SGD) with a "
                        "train-tuned answerability threshold", "empty answer")
