"""WoS (dst): per-slot classifiers over the dialogue history, values taken from ontology spans.

For every user turn the history (all utterances so far) is hashed into word uni/bigrams. Each slot
seen in train gets a linear classifier (SGD, logistic loss) choosing ``none``, ``dontcare``, one of its
values (slots with few values, e.g. yes/no, area, price) or ``span`` (open slots): the ontology value
of that slot mentioned last in the history, else its most frequent train value.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import SGDClassifier

from exports.metrics.dst import user_states

from ._base import Model, Predictor, Records, Scored, TaskBaseline, probability_stats

NONE, DONTCARE, SPAN = "none", "dontcare", "<span>"
#: A slot with at most this many distinct train values is classified value by value.
CLOSED_SLOT_MAX_VALUES = 12
_VECTORIZER = HashingVectorizer(n_features=1 << 18, ngram_range=(1, 2), alternate_sign=False, norm="l2",
                                token_pattern=r"\S+")


def split_state(entry: str) -> tuple[str, str]:
    """``"숙소-가격대-저렴"`` -> (``"숙소-가격대"``, ``"저렴"``); values may contain dashes, slots do not."""
    domain, slot, value = entry.split("-", 2)
    return f"{domain}-{slot}", value


def _turns(record: dict[str, Any]) -> list[str]:
    """The history text at every user turn."""
    history, out = [], []
    for turn in record["dialogue"]:
        history.append(turn.get("text") or "")
        if turn.get("role") == "user":
            out.append(" ".join(history))
    return out


def _ontology(train: Records, ontology: dict[str, list[str]] | None) -> dict[str, list[str]]:
    values: dict[str, set[str]] = defaultdict(set)
    for name, options in (ontology or {}).items():
        values[name].update(options)
    for record in train:
        for state in user_states(record):
            for entry in state:
                slot, value = split_state(entry)
                values[slot].add(value)
    return {slot: sorted(v - {NONE, DONTCARE}) for slot, v in values.items()}


def train_dst(train: Records, seed: int, ontology: dict[str, list[str]] | None = None) -> Model:
    values = _ontology(train, ontology)
    texts: list[str] = []
    states: list[dict[str, str]] = []
    for record in train:
        texts += _turns(record)
        states += [dict(split_state(e) for e in state) for state in user_states(record)]
    features = _VECTORIZER.transform(texts)
    seen = Counter(slot for state in states for slot in state)
    value_counts = {slot: Counter(s[slot] for s in states if slot in s) for slot in seen}
    closed = {slot for slot in seen if len(set(value_counts[slot]) - {DONTCARE}) <= CLOSED_SLOT_MAX_VALUES}

    def target(slot: str, state: dict[str, str]) -> str:
        value = state.get(slot, NONE)
        return value if value in (NONE, DONTCARE) or slot in closed else SPAN

    models: dict[str, SGDClassifier] = {}
    for slot in sorted(seen):
        targets = [target(slot, s) for s in states]
        if len(set(targets)) < 2:
            continue
        models[slot] = SGDClassifier(loss="log_loss", alpha=1e-5, max_iter=6, tol=None, random_state=seed)
        models[slot].fit(features, targets)
    # A slot filled in every training turn (so no classifier) keeps its majority value.
    constant = {slot: Counter(target(slot, s) for s in states).most_common(1)[0][0] for slot in seen
                if slot not in models}
    fallback = {slot: counts.most_common(1)[0][0] for slot, counts in value_counts.items()}

    def last_mentioned(slot: str, text: str) -> str:
        positions = [(text.rfind(v), v) for v in values.get(slot, []) if v and v in text]
        return max(positions)[1] if positions else fallback[slot]

    def predict(records: Records) -> list[dict[str, Any]]:
        histories = [_turns(r) for r in records]
        flat = [t for h in histories for t in h]
        if not flat:
            return [dict(r) for r in records]
        x = _VECTORIZER.transform(flat)
        decided = {slot: model.predict(x) for slot, model in models.items()}
        decided.update({slot: np.full(len(flat), value, dtype=object) for slot, value in constant.items()})
        out, k = [], 0
        for record, history in zip(records, histories, strict=True):
            turns, u = [], 0
            for turn in record["dialogue"]:
                turn = dict(turn)
                if turn.get("role") == "user":
                    state = []
                    for slot in sorted(decided):
                        value = decided[slot][k + u]
                        if value == SPAN:
                            value = last_mentioned(slot, history[u])
                        if value != NONE:
                            state.append(f"{slot}-{value}")
                    turn["state"] = state
                    u += 1
                turns.append(turn)
            k += len(history)
            out.append({**record, "dialogue": turns})
        return out

    def scored(records: Records) -> list[Scored]:
        """Per user turn: the least sure slot decision (its top probability and margin); the dialogue's
        confidence is the mean over its turns, its margin the smallest."""
        predicted = predict(records)
        histories = [_turns(r) for r in records]
        flat = [t for h in histories for t in h]
        stats = {}
        if flat:
            x = _VECTORIZER.transform(flat)
            stats = {slot: probability_stats(model.predict_proba(x)) for slot, model in models.items()}
        out, k = [], 0
        for record, history in zip(predicted, histories, strict=True):
            turns, margins, entropies = [], [], []
            for u in range(len(history)):
                top = [float(s[0][k + u]) for s in stats.values()]
                margins.append(min((float(s[1][k + u]) for s in stats.values()), default=1.0))
                entropies.append(max((float(s[2][k + u]) for s in stats.values()), default=0.0))
                turns.append(min(top, default=1.0))
            k += len(history)
            out.append(Scored(record, float(np.mean(turns)) if turns else 1.0, min(margins, default=1.0),
                              float(np.mean(entropies)) if entropies else 0.0, turns))
        return out

    return Model(predict, scored)


def trivial_dst(train: Records) -> Predictor:
    def predict(records: Records) -> list[dict[str, Any]]:
        return [{**r, "dialogue": [{**t, "state": []} if t.get("role") == "user" else t for t in r["dialogue"]]}
                for r in records]

    return predict


BASELINE = TaskBaseline(train_dst, trivial_dst,
                        "per-slot linear classifiers (SGD, logistic) over hashed word n-grams of the history; "
                        "open-slot values from the ontology value mentioned last", "empty state")
