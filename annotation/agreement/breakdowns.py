"""Agreement that says what to fix: per label (one-vs-rest α), per annotator pair (Cohen's κ) and per guideline
version (the headline coefficient of each version and the change between consecutive ones), each with an item
bootstrap interval.

Every bootstrap here draws all its resamples at once (a multinomial over the distinct rows, as
:func:`.coefficients.bootstrap_sums` does): no Python loop runs per resample. The formulas and references are in
docs/agreement.md.
"""

from __future__ import annotations

import warnings
from itertools import pairwise
from typing import Any

import numpy as np

from . import coefficients as co
from .measures import Headline
from .measures.base import MIN_SHARED, Categories

#: A guideline version's agreement is compared with the previous version's only when both rest on at least this
#: many items with two or more annotations made under them; below it the dashboard says the samples are too small.
MIN_VERSION_ITEMS = 30

TOO_FEW = "too_few_items"
IMPROVED = "improved"
WORSENED = "worsened"
UNCLEAR = "no_clear_difference"


def per_label(categories: Categories, *, seed: int = co.SEED, n_boot: int = co.N_BOOT) -> dict[str, Any]:
    """Each category's one-vs-rest Krippendorff's α (nominal, on the matrix binarised to "this label" against
    "any other"), with its item-bootstrap interval and the items and annotations it rests on."""
    labels, v = categories.labels, len(categories.labels)
    ok = categories.codes >= 0
    counts = co.value_counts(categories.item_codes[ok], categories.codes[ok], categories.n_items, max(v, 1))
    counts = counts[counts.sum(axis=1) >= 2]
    entries: list[dict[str, Any]] = [
        {"label": label, "items": int((counts[:, c] > 0).sum()), "annotations": int(counts[:, c].sum()),
         "value": None, "ci95": [None, None]} for c, label in enumerate(labels)]
    out = {"kind": categories.kind, "level": "nominal", "items": len(counts), "labels": entries}
    if not len(counts):
        return out
    values = co.binary_alpha(co.binary_parts(counts).sum(axis=0)[None, :], v)[0]
    intervals: list[tuple[float | None, float | None]] = [(None, None)] * v
    sums = co.resampled_sums(counts, seed=seed, n_boot=n_boot, reduce=co.binary_parts) if n_boot else None
    if sums is not None:
        intervals = co.column_percentiles(co.binary_alpha(sums, v))
    for entry, value, ci in zip(entries, values.tolist(), intervals, strict=True):
        value = co._clean(value)
        entry["value"] = value
        entry["ci95"] = [co._clean(ci[0]), co._clean(ci[1])] if value is not None else [None, None]
    return out


def per_pair(categories: Categories, *, seed: int = co.SEED, n_boot: int = co.N_BOOT,
             min_shared: int = MIN_SHARED) -> dict[str, Any]:
    """Cohen's κ of every pair of annotators sharing at least ``min_shared`` items, with a bootstrap interval that
    resamples the pair's shared items (a multinomial over the cells of their label × label table)."""
    v = max(len(categories.labels), 1)
    ok = categories.codes >= 0
    annotator_ids, annotator_codes = np.unique(categories.annotators[ok], return_inverse=True)
    matrix = np.full((categories.n_items, len(annotator_ids)), -1, dtype=np.int64)
    matrix[categories.item_codes[ok], annotator_codes.ravel()] = categories.codes[ok]
    present = matrix >= 0
    shared = present.T.astype(np.int64) @ present.astype(np.int64)
    rng = np.random.default_rng(seed)
    pairs = []
    for i, j in zip(*np.nonzero(np.triu(shared >= min_shared, k=1)), strict=True):
        both = present[:, i] & present[:, j]
        table = np.bincount(matrix[both, i] * v + matrix[both, j], minlength=v * v).astype(np.float64)
        n = int(table.sum())
        kappa = co._clean(co._kappa_from_tables(table.reshape(1, v, v))[0])
        ci: tuple[float | None, float | None] = (None, None)
        if kappa is not None and n_boot:
            cells = np.flatnonzero(table)  # only the cells in use: the draw costs their number, not V²
            draws = np.zeros((n_boot, v * v))
            draws[:, cells] = rng.multinomial(n, table[cells] / n, size=n_boot)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ci = co._percentiles(co._kappa_from_tables(draws.reshape(n_boot, v, v)))
        pairs.append({"a": int(annotator_ids[i]), "b": int(annotator_ids[j]), "items": n,
                      "observed": float(np.trace(table.reshape(v, v)) / n), "value": kappa,
                      "ci95": [co._clean(ci[0]), co._clean(ci[1])]})
    below = int(np.triu((shared > 0) & (shared < min_shared), k=1).sum())
    return {"metric": "cohen_kappa", "kind": categories.kind, "min_shared_items": min_shared,
            "annotators": [int(a) for a in annotator_ids], "pairs": pairs, "pairs_below_minimum": below}


def _versions_of(versions: np.ndarray) -> list[int]:
    return sorted({int(v) for v in versions[np.isfinite(versions)].tolist()})


def per_version(versions: np.ndarray, item_ids: np.ndarray, headline: Headline, *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> dict[str, Any]:
    """The headline coefficient of the annotations made under each guideline version (on the items with two or
    more of them) and the change from each version to the next with an independent-bootstrap interval.

    ``versions`` and ``item_ids``: per row of the headline's frame, the guideline version (NaN: none recorded)
    and the item.
    """
    _, item_codes = np.unique(item_ids, return_inverse=True)
    item_codes = item_codes.ravel()
    entries: list[dict[str, Any]] = []
    replicates: dict[int, np.ndarray] = {}
    for version in _versions_of(versions):
        made = versions == version
        per_item = np.bincount(item_codes[made], minlength=int(item_codes.max()) + 1)
        rows = made & (per_item >= 2)[item_codes]
        entry: dict[str, Any] = {"version": version, "annotations": int(made.sum()),
                                 "items": int((per_item >= 2).sum()), "value": None, "ci95": [None, None]}
        if rows.any():
            # each version its own seed: the two resamples of a difference are independent
            with co.keep_replicates() as kept:
                coefficient = headline(rows, seed=seed + version, n_boot=n_boot).as_dict()
            entry.update(value=coefficient["value"], ci95=coefficient["ci95"], name=coefficient["name"],
                         level=coefficient["level"])
            if kept and coefficient["value"] is not None:
                replicates[version] = kept[-1]
        entries.append(entry)
    changes = [_change(before, after, replicates) for before, after in pairwise(entries)]
    unversioned = int((~np.isfinite(versions)).sum())
    return {"versions": entries, "changes": changes, "min_items": MIN_VERSION_ITEMS,
            "annotations_without_version": unversioned}


def _change(before: dict[str, Any], after: dict[str, Any], replicates: dict[int, np.ndarray]) -> dict[str, Any]:
    """After − before with the percentile interval of the difference of independent replicates, and the verdict
    (docs/agreement.md states the rule)."""
    change: dict[str, Any] = {"from": before["version"], "to": after["version"], "difference": None,
                              "ci95": [None, None], "verdict": TOO_FEW}
    if before["value"] is None or after["value"] is None:
        return change
    change["difference"] = after["value"] - before["value"]
    r0, r1 = replicates.get(before["version"]), replicates.get(after["version"])
    if r0 is not None and r1 is not None and len(r0) == len(r1):
        lo, hi = co._percentiles(r1 - r0)
        change["ci95"] = [lo, hi]
    if min(before["items"], after["items"]) < MIN_VERSION_ITEMS or change["ci95"][0] is None:
        return change
    lo, hi = change["ci95"]
    change["verdict"] = IMPROVED if lo > 0 else WORSENED if hi < 0 else UNCLEAR
    return change


def report_sections(categories: Categories | None, versions: np.ndarray, item_ids: np.ndarray,
                    headline: Headline | None, *, seed: int, n_boot: int) -> dict[str, Any]:
    """The report's ``per_label``, ``pair_kappa`` and ``guideline_versions`` keys (``None`` where they do not
    apply: no categories for structured tasks, no counted item)."""
    sections: dict[str, Any] = {"per_label": None, "pair_kappa": None, "guideline_versions": None}
    if categories is not None and categories.n_items:
        sections["per_label"] = per_label(categories, seed=seed, n_boot=n_boot)
        sections["pair_kappa"] = per_pair(categories, seed=seed, n_boot=n_boot)
    if headline is not None and len(item_ids):
        sections["guideline_versions"] = per_version(versions, item_ids, headline, seed=seed, n_boot=n_boot)
    return sections
