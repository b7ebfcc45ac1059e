"""KLUE-NER: a linear-chain CRF over characters with character-class and context-window features."""

from __future__ import annotations

import math
import unicodedata
from typing import Any

import sklearn_crfsuite

from ._base import Model, Predictor, Records, Scored, TaskBaseline


def char_class(char: str) -> str:
    if char == " ":
        return "SP"
    if "가" <= char <= "힣":
        return "HG"
    if char.isdigit():
        return "DG"
    if char.isascii() and char.isalpha():
        return "LT"
    return unicodedata.category(char)[:1]


def sentence_features(chars: list[str]) -> list[dict[str, Any]]:
    """Per character: itself, its class, neighbours within two positions and the bigrams around it."""
    padded = ["<s>", "<s>", *chars, "</s>", "</s>"]
    classes = ["BOS", "BOS", *(char_class(c) for c in chars), "EOS", "EOS"]
    features = []
    for i in range(2, len(padded) - 2):
        features.append({
            "c": padded[i], "k": classes[i],
            "c-1": padded[i - 1], "c+1": padded[i + 1], "c-2": padded[i - 2], "c+2": padded[i + 2],
            "b-1": padded[i - 1] + padded[i], "b+1": padded[i] + padded[i + 1],
            "t": padded[i - 1] + padded[i] + padded[i + 1],
            "k-1": classes[i - 1] + classes[i], "k+1": classes[i] + classes[i + 1],
        })
    return features


def train_ner(train: Records, seed: int, ontology: Any = None) -> Model:
    # Averaged perceptron: L-BFGS scores a few points more but is too slow for the baseline check's time
    # budget on a full-size release (docs/performance.md). crfsuite visits the sentences in order, so the
    # model is deterministic without a seed.
    crf = sklearn_crfsuite.CRF(algorithm="ap", max_iterations=10, all_possible_transitions=True)
    crf.fit([sentence_features(r["chars"]) for r in train], [r["tags"] for r in train])

    def predict(records: Records) -> list[dict[str, Any]]:
        tags = crf.predict([sentence_features(r["chars"]) for r in records])
        return [{**r, "tags": list(t)} for r, t in zip(records, tags, strict=True)]

    def scored(records: Records) -> list[Scored]:
        """Tags from the Viterbi path; per character the marginal of its tag, the margin to the runner-up
        and the entropy; the sentence is as sure as its least sure character, and each predicted entity
        as its least sure character (``parts``, in order of the entities)."""
        features = [sentence_features(r["chars"]) for r in records]
        out = []
        for record, tags, marginals in zip(records, crf.predict(features), crf.predict_marginals(features),
                                           strict=True):
            chosen, margins, entropies = [], [], []
            for tag, probs in zip(tags, marginals, strict=True):
                values = sorted(probs.values(), reverse=True)
                chosen.append(float(probs.get(tag, 0.0)))
                margins.append(values[0] - (values[1] if len(values) > 1 else 0.0))
                clipped = [min(max(v, 1e-12), 1.0) for v in values]
                entropies.append(-sum(v * math.log(v) for v in clipped) / math.log(len(values)) if len(values) > 1
                                 else 0.0)
            spans = [min(chosen[s:e]) for s, e in _span_bounds(list(tags))]
            out.append(Scored({**record, "tags": list(tags)}, min(chosen, default=1.0), min(margins, default=1.0),
                              max(entropies, default=0.0), spans))
        return out

    return Model(predict, scored)


def _span_bounds(tags: list[str]) -> list[tuple[int, int]]:
    """[start, end) of each entity in a tag sequence, reading a stray I- as the start of an entity."""
    bounds: list[tuple[int, int]] = []
    kind: str | None = None
    start = 0
    for i, tag in enumerate([*tags, "O"]):
        if tag == "O" or tag.startswith("B-") or (tag.startswith("I-") and tag[2:] != kind):
            if kind is not None:
                bounds.append((start, i))
            kind, start = (tag[2:], i) if tag != "O" else (None, i)
    return bounds


def trivial_ner(train: Records) -> Predictor:
    return lambda records: [{**r, "tags": ["O"] * len(r["tags"])} for r in records]


BASELINE = TaskBaseline(train_ner, trivial_ner,
                        "linear-chain CRF (sklearn-crfsuite, averaged perceptron) over characters: character, class, "
                        "+-2 window, bigrams",
                        "all O")
