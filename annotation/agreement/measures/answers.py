"""Answer spans (mrc): pairwise exact match and character F1 as KLUE's scorer normalises answers, alpha on
answerability; per question type."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from django.utils.translation import gettext

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from ..unitizing import SpanRows, rows_unitizing_alpha, unitizing_coefficient
from .base import MeasureResult
from .pairwise import StructuredMeasure, pair_agreement, pair_coefficient, pair_rows

_ASCII_PUNCTUATION = str.maketrans("", "", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def normalise_answer(text: str) -> str:
    """As KLUE's MRC scorer: lower-case, drop ASCII punctuation (not Korean brackets), collapse whitespace."""
    return " ".join(text.lower().translate(_ASCII_PUNCTUATION).split())


def char_f1(a: str, b: str) -> float:
    """F1 over the characters (spaces ignored) of two normalised answers; two empty answers agree."""
    x, y = Counter(normalise_answer(a).replace(" ", "")), Counter(normalise_answer(b).replace(" ", ""))
    if not x and not y:
        return 1.0
    common = sum((x & y).values())
    return 0.0 if common == 0 else 2 * common / (sum(x.values()) + sum(y.values()))


class AnswerMeasure(StructuredMeasure):
    """Answer spans: pairwise exact match and character F1, alpha (nominal) on answerability; per question type."""

    fields = {"payload": "payload", "question_type": "item.question_type", "context_length": "length(item.context)"}
    primary_name = "pairwise_char_f1"
    primary_level = "nominal"

    @staticmethod
    def _answer(payload: dict[str, Any] | None) -> str | None:
        answer = (payload or {}).get("answer")
        return None if answer is None else str(answer.get("text", ""))

    def _pairs(self, frame: pd.DataFrame) -> pd.DataFrame:
        answers = [self._answer(p) for p in frame["payload"]]
        pairs = pair_rows(frame)
        a = [answers[r] for r in pairs["row_a"]]
        b = [answers[r] for r in pairs["row_b"]]
        return pairs.assign(
            exact=[float(normalise_answer(x or "") == normalise_answer(y or "") and (x is None) == (y is None))
                   for x, y in zip(a, b, strict=True)],
            f1=[char_f1(x or "", y or "") if (x is None) == (y is None) else 0.0 for x, y in zip(a, b, strict=True)],
            den=1.0)

    def _question_types(self, frame: pd.DataFrame) -> dict[int, str]:
        """The type the writer chose (their payload), else the item's (imported questions)."""
        types: dict[int, str] = {}
        for item, payload, item_type in zip(frame["item"], frame["payload"], frame["question_type"], strict=True):
            qtype = (payload or {}).get("question_type") or item_type
            if qtype not in (None, ""):
                types[int(item)] = str(qtype)
        return types

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        frame = frame.reset_index(drop=True)
        f1 = pair_agreement(self._pairs(frame).rename(columns={"f1": "num"}), seed=seed, n_boot=n_boot)
        return pair_coefficient("pairwise_char_f1", "nominal", f1, "item")

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.reset_index(drop=True)
        pairs = self._pairs(frame)
        exact = pair_agreement(pairs.rename(columns={"exact": "num"}), seed=seed, n_boot=n_boot)
        f1 = pair_agreement(pairs.rename(columns={"f1": "num"}), seed=seed, n_boot=n_boot)
        qtypes = self._question_types(frame)
        pairs["qtype"] = pairs["item"].map(qtypes).fillna("unknown")
        per_type = {str(t): {"exact_match": float(g["exact"].mean()), "char_f1": float(g["f1"].mean()),
                             "items": int(g["item"].nunique())} for t, g in pairs.groupby("qtype")}
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        answerable = np.array([self._answer(p) is not None for p in frame["payload"]], dtype=np.int64)
        counts = co.value_counts(item_codes, answerable, len(item_index), 2)
        value, ci = co.alpha_with_ci(counts, None, len(item_index), np.arange(2), "nominal",
                                     seed=seed, n_boot=n_boot)
        coefficients = [
            pair_coefficient("pairwise_exact_match", "nominal", exact, "item", per_question_type={
                t: v["exact_match"] for t, v in per_type.items()}),
            pair_coefficient("pairwise_char_f1", "nominal", f1, "item", per_question_type={
                t: v["char_f1"] for t, v in per_type.items()}),
            Coefficient("krippendorff_alpha_answerable", "nominal", value, ci, units=int((counts.sum(1) >= 2).sum()),
                        extra={"values": "answerable / unanswerable"}),
            self._unitizing(frame, item_codes, len(item_index), seed=seed, n_boot=n_boot),
        ]
        labels = ["answerable", "unanswerable"]
        by_annotator = {int(a): [int(g.sum()), int(len(g) - g.sum())]
                        for a, g in pd.Series(answerable).groupby(frame["annotator"].to_numpy())}
        project_counts = [int(answerable.sum()), int(len(answerable) - answerable.sum())]
        result = self._result(coefficients, "pairwise_char_f1", f1, "char_f1",
                              "1 − character F1 between the annotators' answers",
                              {"labels": labels, "project": project_counts, "by_annotator": by_annotator})
        result.coefficients[0].extra["question_types"] = per_type
        return result

    @staticmethod
    def _span_rows(frame: pd.DataFrame, item_codes: np.ndarray, n_items: int) -> SpanRows:
        """The answer spans in the passages; "no answer" marks no span."""
        lengths = np.zeros(n_items, dtype=np.int64)
        lengths[item_codes] = pd.to_numeric(frame["context_length"], errors="coerce").fillna(0).to_numpy(np.int64)
        spans = [(row, int(a["start"]), int(a["start"]) + len(str(a.get("text", ""))))
                 for row, a in enumerate((p or {}).get("answer") for p in frame["payload"])
                 if isinstance(a, dict) and isinstance(a.get("start"), int)]
        rows, begin, end = (np.array(column, dtype=np.int64) for column in zip(*spans, strict=True)) if spans else (
            np.zeros(0, dtype=np.int64),) * 3
        return SpanRows(item_codes.astype(np.int64), n_items, lengths, rows, begin, end,
                        np.full(len(rows), "answer", dtype=object))

    def span_rows(self, frame: pd.DataFrame, schema: dict[str, Any]) -> SpanRows:
        item_codes, item_index = pd.factorize(frame["item"], sort=True)
        return self._span_rows(frame, item_codes, len(item_index))

    @classmethod
    def _unitizing(cls, frame: pd.DataFrame, item_codes: np.ndarray, n_items: int, *, seed: int,
                   n_boot: int) -> Coefficient:
        """Krippendorff's αu of the answer spans in the passages (:mod:`..unitizing`): an answer one particle longer
        than another earns partial credit."""
        result, m, items, left_out = rows_unitizing_alpha(cls._span_rows(frame, item_codes, n_items), seed=seed,
                                                          n_boot=n_boot)
        return unitizing_coefficient(result, m, items, left_out, "per_category")

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        mine, known = self._answer(payload), self._answer(gold)
        if (mine is None) != (known is None):
            return 0.0
        return char_f1(mine or "", known or "")

    def item_labels(self, frame: pd.DataFrame) -> pd.Series:
        return frame["payload"].map(lambda p: "unanswerable" if self._answer(p) is None else "answerable")

    def describe(self, payload: dict[str, Any]) -> str:
        answer = self._answer(payload)
        return gettext("(unanswerable)") if answer is None else answer

    def spans(self, payload: dict[str, Any] | None) -> list[tuple[int, int, str]]:
        answer = (payload or {}).get("answer")
        if not isinstance(answer, dict) or not isinstance(answer.get("start"), int):
            return []
        return [(answer["start"], answer["start"] + len(str(answer.get("text", ""))), "answer")]

