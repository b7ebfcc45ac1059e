"""Character n-gram baselines: YNAT (tc), KLUE-NLI (nli), KLUE-RE (re), KLUE-STS (sts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import SGDClassifier
from sklearn.preprocessing import normalize

from exports.metrics.classification import sts_value
from exports.metrics.re import RELATIONS

from ._base import Model, Predictor, Records, Scored, TaskBaseline, majority, probability_stats, with_label
from .char_ngrams import CharTfidf


def _char_tfidf(max_features: int = 200_000, ngrams: tuple[int, int] = (1, 3)) -> TfidfVectorizer:
    """Character n-gram TF-IDF; up to trigrams counted by numpy (``CharTfidf``: scikit-learn's matrix, faster)."""
    return CharTfidf(analyzer="char_wb", ngram_range=ngrams, min_df=2, sublinear_tf=True,
                     max_features=max_features, dtype=np.float32)


def _logreg(seed: int, alpha: float = 2e-5) -> SGDClassifier:
    """Logistic regression fitted by SGD: L-BFGS is too slow on a large TF-IDF vocabulary
    (docs/performance.md).
    The one-vs-rest fits run on two threads (SGD releases the GIL; each class has its own seed drawn up front,
    so the model is the same as on one)."""
    return SGDClassifier(loss="log_loss", alpha=alpha, max_iter=15, tol=None, random_state=seed, n_jobs=2)


# -- tc --------------------------------------------------------------------------------------------

def _scored_labels(records: Records, key: str, probs: np.ndarray, classes: Any) -> list[Scored]:
    """The most probable class of each record with its probability, margin and entropy."""
    top, margin, entropy = probability_stats(probs)
    labels = np.asarray(classes)[probs.argmax(axis=1)]
    return [Scored({**r, key: str(label)}, float(t), float(m), float(e))
            for r, label, t, m, e in zip(records, labels, top, margin, entropy, strict=True)]


def _classifier_model(model: SGDClassifier, features: Any, key: str) -> Model:
    def predict(records: Records) -> list[dict[str, Any]]:
        return with_label(records, key, model.predict(features(records)))

    def scored(records: Records) -> list[Scored]:
        return _scored_labels(records, key, model.predict_proba(features(records)), model.classes_)

    return Model(predict, scored)


def train_tc(train: Records, seed: int, ontology: Any = None) -> Model:
    vectorizer = _char_tfidf()
    model = _logreg(seed).fit(vectorizer.fit_transform([r["title"] for r in train]), [r["label"] for r in train])
    return _classifier_model(model, lambda records: vectorizer.transform([r["title"] for r in records]), "label")


def trivial_label(key: str) -> Any:
    def trivial(train: Records) -> Predictor:
        value = majority([r[key] for r in train])
        return lambda records: with_label(records, key, [value] * len(records))

    return trivial


# -- nli -------------------------------------------------------------------------------------------

def _pair_features(vectorizer: TfidfVectorizer, first: list[str], second: list[str]) -> sp.csr_matrix:
    """Hypothesis n-grams, the n-grams it shares with the premise and the ones it adds (negations, new facts)."""
    p, h = vectorizer.transform(first), vectorizer.transform(second)
    shared = h.multiply(p > 0)
    return sp.hstack([h, shared, h - shared]).tocsr()


def train_nli(train: Records, seed: int, ontology: Any = None) -> Model:
    vectorizer = _char_tfidf(150_000).fit([r["premise"] for r in train] + [r["hypothesis"] for r in train])

    def features(records: Records) -> sp.csr_matrix:
        return _pair_features(vectorizer, [r["premise"] for r in records], [r["hypothesis"] for r in records])

    model = _logreg(seed).fit(features(train), [r["gold_label"] for r in train])
    return _classifier_model(model, features, "gold_label")


# -- re --------------------------------------------------------------------------------------------

def marked_sentence(record: dict[str, Any]) -> str:
    """The sentence with typed entity markers around subject and object (end_idx is inclusive)."""
    text = record["sentence"]
    subj, obj = record["subject_entity"], record["object_entity"]
    marks = [(subj["start_idx"], f"⟦S:{subj['type']} "), (subj["end_idx"] + 1, " ⟧"),
             (obj["start_idx"], f"⟦O:{obj['type']} "), (obj["end_idx"] + 1, " ⟧")]
    for position, mark in sorted(marks, key=lambda m: m[0], reverse=True):
        text = text[:position] + mark + text[position:]
    return text


def _between(record: dict[str, Any]) -> str:
    subj, obj = record["subject_entity"], record["object_entity"]
    start = min(subj["end_idx"], obj["end_idx"]) + 1
    end = max(subj["start_idx"], obj["start_idx"])
    order = "S>O" if subj["start_idx"] < obj["start_idx"] else "O>S"
    return f"{order} {subj['type']}-{obj['type']} {record['sentence'][start:end][:60]}"


def train_re(train: Records, seed: int, ontology: Any = None) -> Model:
    whole = _char_tfidf(150_000, (2, 4)).fit([marked_sentence(r) for r in train])
    between = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), min_df=2, sublinear_tf=True,
                              dtype=np.float32).fit([_between(r) for r in train])

    def features(records: Records) -> sp.csr_matrix:
        return sp.hstack([whole.transform([marked_sentence(r) for r in records]),
                          between.transform([_between(r) for r in records])]).tocsr()

    model = _logreg(seed).fit(features(train), [r["label"] for r in train])
    columns = [RELATIONS.index(label) for label in model.classes_]

    def probabilities(records: Records) -> np.ndarray:
        probs = np.zeros((len(records), len(RELATIONS)))
        probs[:, columns] = model.predict_proba(features(records))
        return probs

    def predict(records: Records) -> list[dict[str, Any]]:
        probs = probabilities(records)
        labels = [RELATIONS[i] for i in probs.argmax(axis=1)]
        return [{**r, "label": label, "probs": p.tolist()} for r, label, p in zip(records, labels, probs, strict=True)]

    return Model(predict, lambda records: _scored_labels(records, "label", probabilities(records), RELATIONS))


def trivial_re(train: Records) -> Predictor:
    """Majority relation, with the training label distribution as probabilities."""
    labels = [r["label"] for r in train]
    value = majority(labels)
    prior = np.asarray([labels.count(rel) for rel in RELATIONS], dtype=float) / max(len(labels), 1)
    return lambda records: [{**r, "label": value, "probs": prior.tolist()} for r in records]


# -- sts -------------------------------------------------------------------------------------------

def _grams(text: str, n: int) -> set[str]:
    text = " ".join(text.split())
    return {text[i:i + n] for i in range(max(len(text) - n + 1, 0))}


def _similarities(vectorizers: list[TfidfVectorizer], records: Records) -> np.ndarray:
    first = [r["sentence1"] for r in records]
    second = [r["sentence2"] for r in records]
    columns = []
    for vectorizer in vectorizers:
        a, b = normalize(vectorizer.transform(first)), normalize(vectorizer.transform(second))
        columns.append(np.asarray(a.multiply(b).sum(axis=1)).ravel())
    for n in (1, 2):
        grams = [(_grams(x, n), _grams(y, n)) for x, y in zip(first, second, strict=True)]
        columns.append([len(g & h) / max(len(g | h), 1) for g, h in grams])
        columns.append([len(g & h) / max(len(g), 1) for g, h in grams])
        columns.append([len(g & h) / max(len(h), 1) for g, h in grams])
    words = [(set(x.split()), set(y.split())) for x, y in zip(first, second, strict=True)]
    columns.append([len(g & h) / max(len(g | h), 1) for g, h in words])
    lengths = np.asarray([[len(x), len(y)] for x, y in zip(first, second, strict=True)], dtype=float)
    columns.append(np.minimum(lengths[:, 0], lengths[:, 1]) / np.maximum(lengths.max(axis=1), 1))
    columns.append(np.abs(lengths[:, 0] - lengths[:, 1]))
    return np.column_stack(columns)


#: STS confidence: 1 − expected absolute error / this many points (half the 0–5 scale).
STS_ERROR_SCALE = 2.5


def train_sts(train: Records, seed: int, ontology: Any = None) -> Model:
    texts = [r["sentence1"] for r in train] + [r["sentence2"] for r in train]
    vectorizers = [TfidfVectorizer(analyzer="char_wb", ngram_range=ngrams, sublinear_tf=True).fit(texts)
                   for ngrams in ((1, 1), (2, 3))]
    # Plain gradient boosting: the histogram variant's OpenMP threads stall on a busy 2-core machine.
    model = GradientBoostingRegressor(n_estimators=120, max_depth=3, learning_rate=0.08, random_state=seed)
    x_train, y_train = _similarities(vectorizers, train), np.asarray([sts_value(r) for r in train])
    model.fit(x_train, y_train)
    error_model: list[Any] = []

    def expected_error(x: np.ndarray) -> np.ndarray:
        """A second regressor, fitted on first use (scoring only), predicts the absolute error from
        out-of-fold residuals: a regression has no class probabilities to be sure or unsure with."""
        if not error_model:
            from sklearn.model_selection import KFold, cross_val_predict

            if len(y_train) >= 6:
                light = GradientBoostingRegressor(n_estimators=60, max_depth=3, learning_rate=0.1, random_state=seed)
                folds = KFold(3, shuffle=True, random_state=seed)
                residual = np.abs(cross_val_predict(light, x_train, y_train, cv=folds) - y_train)
                error_model.append(GradientBoostingRegressor(n_estimators=60, max_depth=2, random_state=seed)
                                   .fit(x_train, residual))
            else:
                error_model.append(None)
        if error_model[0] is None:
            return np.full(len(x), STS_ERROR_SCALE / 2)
        return np.clip(error_model[0].predict(x), 0.0, None)

    def predict(records: Records) -> list[dict[str, Any]]:
        values = np.clip(model.predict(_similarities(vectorizers, records)), 0.0, 5.0)
        return [{**r, "labels": {"label": round(float(v), 1), "real-label": float(v)}}
                for r, v in zip(records, values, strict=True)]

    def scored(records: Records) -> list[Scored]:
        x = _similarities(vectorizers, records)
        values = np.clip(model.predict(x), 0.0, 5.0)
        confidence = np.clip(1 - expected_error(x) / STS_ERROR_SCALE, 0.0, 1.0)
        return [Scored({**r, "labels": {"label": round(float(v), 1), "real-label": float(v)}}, float(c), float(c),
                       float(1 - c)) for r, v, c in zip(records, values, confidence, strict=True)]

    return Model(predict, scored)


def trivial_sts(train: Records) -> Predictor:
    """The training mean for every pair (Pearson r is undefined for a constant: it counts as 0)."""
    mean = float(np.mean([sts_value(r) for r in train]))
    return lambda records: [{**r, "labels": {"label": round(mean, 1), "real-label": mean}} for r in records]


TC_BASELINE = TaskBaseline(train_tc, trivial_label("label"),
                           "char 1-3-gram TF-IDF of the title + logistic regression", "majority topic")
NLI_BASELINE = TaskBaseline(train_nli, trivial_label("gold_label"),
                            "char 1-3-gram TF-IDF of the hypothesis, its n-grams shared with / new to the premise "
                            "+ logistic regression",
                            "majority label")
RE_BASELINE = TaskBaseline(train_re, trivial_re,
                           "char 2-4-gram TF-IDF of the sentence with typed entity markers + the text between the "
                           "entities + logistic regression (probabilities for AUPRC)",
                           "majority relation, label prior as probabilities")
STS_BASELINE = TaskBaseline(train_sts, trivial_sts,
                            "char n-gram cosine / Jaccard / containment similarities of the two sentences "
                            "+ gradient-boosted regression", "training mean")
