"""KLUE-DP: an arc-factored head selector over the POS column, and a DEPREL classifier.

Korean is head-final: every eojeol but the last attaches to one on its right (all of KLUE-DP dev
does), and the last one is the root. For each eojeol a logistic regression scores every eojeol to its
right from POS/morpheme features of both ends, their distance and the predicates in between; the best
scoring one is the head. A second logistic regression labels the arc.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.feature_extraction import FeatureHasher
from sklearn.linear_model import SGDClassifier

from ._base import Model, Predictor, Records, Scored, TaskBaseline, majority, probability_stats, softmax

_PREDICATE_ENDINGS = ("EC", "EF", "ETM", "ETN")
_HASHER = FeatureHasher(n_features=1 << 18, input_type="string", alternate_sign=False)


def _eojeol(record: dict[str, Any], i: int) -> dict[str, str]:
    tags = record["pos"][i].split("+")
    morphemes = record["lemma"][i].split(" ")
    last_morpheme = morphemes[-1] if len(morphemes) == len(tags) else record["word_form"][i][-1:]
    return {"first": tags[0], "last": tags[-1], "lastm": f"{tags[-1]}:{last_morpheme}",
            "pos": "+".join(tags[-3:]), "pred": str(tags[-1] in _PREDICATE_ENDINGS or tags[-1].startswith("V"))}


def _distance(d: int) -> str:
    return str(d) if d <= 4 else "5-6" if d <= 6 else "7-10" if d <= 10 else "11+"


def _arc_features(words: list[dict[str, str]], predicates: np.ndarray, i: int, j: int) -> list[str]:
    d, h = words[i], words[j]
    dist = _distance(j - i)
    between = int(predicates[j] - predicates[i + 1]) if j > i + 1 else 0
    last = str(j == len(words) - 1)
    vb = min(between, 3)
    features = [f"dl={d['last']}|hl={h['last']}", f"dl={d['last']}|hl={h['last']}|dist={dist}",
                f"dm={d['lastm']}|hl={h['last']}", f"dl={d['last']}|hf={h['first']}", f"dm={d['lastm']}|dist={dist}",
                f"dl={d['last']}|last={last}", f"dl={d['last']}|vb={vb}", f"dist={dist}|vb={vb}",
                f"dp={d['pos']}|hp={h['pos']}", f"dm={d['lastm']}|hm={h['lastm']}", f"hm={h['lastm']}",
                f"dl={d['last']}|hl={h['last']}|vb={vb}", f"last={last}|vb={vb}"]
    return features


def _sentence(record: dict[str, Any]) -> tuple[list[dict[str, str]], np.ndarray]:
    words = [_eojeol(record, i) for i in range(len(record["pos"]))]
    # predicates[k] = number of predicate eojeols before position k, to count those between two eojeols
    flags = [w["pred"] == "True" for w in words]
    return words, np.concatenate([[0], np.cumsum(flags)])


def _arcs(record: dict[str, Any]) -> Iterator[tuple[int, int, list[str]]]:
    """(dependent, candidate head, features) for every eojeol but the last and every eojeol to its right."""
    words, predicates = _sentence(record)
    for i in range(len(words) - 1):
        for j in range(i + 1, len(words)):
            yield i, j, _arc_features(words, predicates, i, j)


def _label_features(words: list[dict[str, str]], i: int, head: int) -> list[str]:
    d = words[i]
    h = words[head - 1] if head > 0 else {"last": "ROOT", "first": "ROOT", "lastm": "ROOT", "pos": "ROOT"}
    return [f"dl={d['last']}", f"dm={d['lastm']}", f"df={d['first']}", f"dp={d['pos']}", f"hl={h['last']}",
            f"dm={d['lastm']}|hl={h['last']}", f"df={d['first']}|dl={d['last']}", f"hf={h['first']}|dl={d['last']}"]


def train_dp(train: Records, seed: int, ontology: Any = None) -> Model:
    arc_features, arc_targets, label_features, labels = [], [], [], []
    for record in train:
        heads = [int(h) for h in record["head"]]
        for i, j, features in _arcs(record):
            arc_features.append(features)
            arc_targets.append(heads[i] == j + 1)
        words, _ = _sentence(record)
        for i, head in enumerate(heads):
            label_features.append(_label_features(words, i, head))
            labels.append(record["deprel"][i])
    # SGD on the logistic loss: L-BFGS/liblinear are too slow on the candidate arcs of a full-size release.
    arcs = SGDClassifier(loss="log_loss", alpha=1e-6, max_iter=10, tol=None, random_state=seed)
    arcs.fit(_HASHER.transform(arc_features), arc_targets)
    labeller = SGDClassifier(loss="log_loss", alpha=1e-6, max_iter=10, tol=None, random_state=seed)
    labeller.fit(_HASHER.transform(label_features), labels)

    def predict(records: Records) -> list[dict[str, Any]]:
        candidates = [(n, i, j, f) for n, r in enumerate(records) for i, j, f in _arcs(r)]
        scores = arcs.decision_function(_HASHER.transform([c[3] for c in candidates])) if candidates else []
        heads = [[0] * len(r["pos"]) for r in records]
        best: dict[tuple[int, int], float] = {}
        for (n, i, j, _), score in zip(candidates, scores, strict=True):
            if score > best.get((n, i), -np.inf):
                best[(n, i)] = score
                heads[n][i] = j + 1
        rows = [(n, i) for n, r in enumerate(records) for i in range(len(r["pos"]))]
        features = [_label_features(_sentence(records[n])[0], i, heads[n][i]) for n, i in rows]
        predicted = labeller.predict(_HASHER.transform(features)) if rows else []
        deprels = [[""] * len(r["pos"]) for r in records]
        for (n, i), label in zip(rows, predicted, strict=True):
            deprels[n][i] = str(label)
        return [{**r, "head": h, "deprel": d} for r, h, d in zip(records, heads, deprels, strict=True)]

    def scored(records: Records) -> list[Scored]:
        """Per eojeol: a softmax over its candidate heads' scores (the last eojeol is the root for sure) times
        the labeller's probability of its DEPREL; the sentence's confidence is the mean over its arcs, its
        margin the smallest head margin."""
        predicted = predict(records)
        candidates = [(n, i, j, f) for n, r in enumerate(records) for i, j, f in _arcs(r)]
        scores = arcs.decision_function(_HASHER.transform([c[3] for c in candidates])) if candidates else []
        by_dependent: dict[tuple[int, int], list[float]] = {}
        for (n, i, _, _), score in zip(candidates, scores, strict=True):
            by_dependent.setdefault((n, i), []).append(float(score))
        rows = [(n, i) for n, r in enumerate(predicted) for i in range(len(r["head"]))]
        features = [_label_features(_sentence(records[n])[0], i, predicted[n]["head"][i]) for n, i in rows]
        label_top = probability_stats(labeller.predict_proba(_HASHER.transform(features)))[0] if rows else []
        label_p = {row: float(p) for row, p in zip(rows, label_top, strict=True)}
        out = []
        for n, record in enumerate(predicted):
            confidences, margins, entropies = [], [], []
            for i in range(len(record["head"])):
                head_scores = by_dependent.get((n, i))
                if head_scores:
                    top, margin, entropy = (float(v[0]) for v in probability_stats(softmax(head_scores)))
                else:
                    top, margin, entropy = 1.0, 1.0, 0.0
                confidences.append(top * label_p.get((n, i), 1.0))
                margins.append(margin)
                entropies.append(entropy)
            out.append(Scored(record, float(np.mean(confidences)) if confidences else 1.0, min(margins, default=1.0),
                              float(np.mean(entropies)) if entropies else 0.0, confidences))
        return out

    return Model(predict, scored)


def trivial_dp(train: Records) -> Predictor:
    """Attach every eojeol to the next one (the last is the root), with the most frequent DEPREL."""
    label = majority([d for r in train for d in r["deprel"]])

    def predict(records: Records) -> list[dict[str, Any]]:
        return [{**r, "head": [i + 2 for i in range(len(r["head"]) - 1)] + [0], "deprel": [label] * len(r["head"])}
                for r in records]

    return predict


BASELINE = TaskBaseline(train_dp, trivial_dp,
                        "arc-factored head selection (logistic regression over POS/morpheme pairs, distance, "
                        "predicates in between; heads to the right, last eojeol root) + logistic-regression "
                        "DEPREL labeller",
                        "attach to the next eojeol, majority DEPREL")
