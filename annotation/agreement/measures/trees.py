"""Dependency trees (dp): pairwise UAS and LAS, alpha on heads and on labels; the units are eojeol."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from .base import MeasureResult
from .pairwise import StructuredMeasure, pair_agreement, pair_coefficient, units_alpha


class TreeMeasure(StructuredMeasure):
    """Dependency trees: pairwise UAS and LAS, alpha (nominal) on heads and on labels; units are eojeol."""

    primary_name = "krippendorff_alpha_heads"
    primary_level = "nominal"

    def _tokens(self, frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            [(row, item, annotator, i, head, deprel)
             for row, item, annotator, p in zip(frame.index, frame["item"], frame["annotator"], frame["payload"],
                                                strict=True)
             for i, (head, deprel) in enumerate(zip(p.get("heads") or [], p.get("deprels") or [], strict=False))],
            columns=["row", "item", "annotator", "index", "head", "deprel"])

    def _alphas(self, tokens: pd.DataFrame, *, seed: int, n_boot: int, which: tuple[str, ...]) -> list[Coefficient]:
        item_codes, _ = pd.factorize(tokens["item"], sort=True)
        unit_codes, units = pd.factorize(pd.MultiIndex.from_arrays([tokens["item"], tokens["index"]]))
        unit_item = np.zeros(len(units), dtype=np.int64)
        unit_item[unit_codes] = item_codes
        n_items = int(item_codes.max()) + 1 if len(item_codes) else 0
        out = []
        for column in which:
            out.append(units_alpha(f"krippendorff_alpha_{column}s", unit_codes, tokens[column].astype(str).to_numpy(),
                                    unit_item, n_items, seed=seed, n_boot=n_boot, unit="eojeol"))
        return out

    @staticmethod
    def _per_relation(tokens: pd.DataFrame, *, seed: int, n_boot: int
                      ) -> tuple[dict[str, float | None], dict[str, list[float | None]]]:
        """Each DEPREL's one-vs-rest α over the eojeol (nominal, "this relation" against any other, as the per-label
        α of categorical tasks), with an interval that resamples whole sentences: an eojeol's sums are added up per
        sentence first."""
        unit_codes, units = pd.factorize(pd.MultiIndex.from_arrays([tokens["item"], tokens["index"]]))
        item_codes, _ = pd.factorize(tokens["item"], sort=True)
        relation_codes, relations = pd.factorize(tokens["deprel"].astype(str), sort=True)
        v = len(relations)
        if not v:
            return {}, {}
        counts = co.value_counts(unit_codes, relation_codes, len(units), v)
        unit_item = np.zeros(len(units), dtype=np.int64)
        unit_item[unit_codes] = item_codes
        pairable = counts.sum(axis=1) >= 2
        parts = co.binary_parts(counts[pairable])
        per_item = np.zeros((int(item_codes.max()) + 1, parts.shape[1]))
        np.add.at(per_item, unit_item[pairable], parts)
        per_item = per_item[np.bincount(unit_item[pairable], minlength=len(per_item)) > 0]
        values = co.binary_alpha(per_item.sum(axis=0)[None, :], v)[0]
        sums = co.resampled_sums(per_item, seed=seed, n_boot=n_boot) if n_boot and len(per_item) else None
        intervals = co.column_percentiles(co.binary_alpha(sums, v)) if sums is not None else [(None, None)] * v
        names = [str(r) for r in relations]
        return ({name: co._clean(value) for name, value in zip(names, values.tolist(), strict=True)},
                {name: [co._clean(lo), co._clean(hi)] for name, (lo, hi) in zip(names, intervals, strict=True)})

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        return self._alphas(self._tokens(frame), seed=seed, n_boot=n_boot, which=("head",))[0]

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.reset_index(drop=True)
        tokens = self._tokens(frame)
        alphas = self._alphas(tokens, seed=seed, n_boot=n_boot, which=("head", "deprel"))
        values, intervals = self._per_relation(tokens, seed=seed, n_boot=n_boot)
        alphas[1].extra.update(per_relation=values, per_relation_ci95=intervals)
        merged = tokens.merge(tokens, on=["item", "index"], suffixes=("_a", "_b"))
        merged = merged[merged["annotator_a"] < merged["annotator_b"]]
        same_head = (merged["head_a"] == merged["head_b"]).to_numpy()
        same_both = same_head & (merged["deprel_a"] == merged["deprel_b"]).to_numpy()
        base = merged[["item"]].assign(a=merged["annotator_a"], b=merged["annotator_b"], den=1.0)
        uas = pair_agreement(base.assign(num=same_head.astype(float)).groupby(["item", "a", "b"], as_index=False)
                             [["num", "den"]].sum(), seed=seed, n_boot=n_boot)
        las = pair_agreement(base.assign(num=same_both.astype(float)).groupby(["item", "a", "b"], as_index=False)
                             [["num", "den"]].sum(), seed=seed, n_boot=n_boot)
        coefficients = [*alphas, pair_coefficient("pairwise_uas", "nominal", uas, "item"),
                        pair_coefficient("pairwise_las", "nominal", las, "item")]
        deprels = tokens["deprel"].astype(str)
        labels = sorted(deprels.unique().tolist())
        counts = deprels.value_counts()
        by_annotator = {int(a): [int((group == label).sum()) for label in labels]
                        for a, group in deprels.groupby(tokens["annotator"])}
        return self._result(coefficients, "krippendorff_alpha_heads", las, "las", "1 − LAS between the annotators",
                            {"labels": labels, "project": [int(counts.get(label, 0)) for label in labels],
                             "by_annotator": by_annotator})

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        pairs = list(zip(payload.get("heads") or [], payload.get("deprels") or [], gold.get("heads") or [],
                         gold.get("deprels") or [], strict=False))
        return float(np.mean([h == gh and d == gd for h, d, gh, gd in pairs])) if pairs else 0.0

    def describe(self, payload: dict[str, Any]) -> str:
        return " ".join(f"{i + 1}→{h}:{d}" for i, (h, d) in enumerate(zip(payload.get("heads") or [],
                                                                         payload.get("deprels") or [], strict=False)))

