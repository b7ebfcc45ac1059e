"""The agreement coefficients, as pure numpy over arrays (no Django, no database).

The report's Krippendorff's alpha comes from the ``krippendorff`` package with the level of measurement
passed explicitly; the bootstrap re-evaluates the same formula on resampled coincidence matrices
(:func:`alpha_from_coincidences`, checked against the package in the tests), because calling the package
a thousand times on 100,000 items would not fit the time budget. The timeline and leave-one-out alpha
(``package=False``) take the point estimate from the same coincidences: the package builds a
units × V × V array per call, which at 10,000 NER sentences costs half a second a checkpoint.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
from scipy import sparse

from .lazy import pd

LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: Resamples of the bootstrap confidence interval; the seed makes every report reproducible.
N_BOOT = 1000
SEED = 20210520  # KLUE's arXiv date; any fixed number would do
#: The bootstrap draws over distinct rows (a multinomial), unless that takes more than MAX_BINOMIALS binomial
#: draws and the distinct rows are more than 1/DRAW_ITEMS_ABOVE of the items: then over the items themselves
#: (see :func:`bootstrap_sums`).
MAX_BINOMIALS = 1_000_000
DRAW_ITEMS_ABOVE = 8


@dataclass
class Coefficient:
    """One number of the report, with what it was computed on."""

    name: str
    level: str
    value: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    #: Units the coefficient saw (items, characters, eojeol, turns…) and what a unit is.
    units: int = 0
    unit: str = "item"
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level, "value": _clean(self.value),
                "ci95": [_clean(self.ci95[0]), _clean(self.ci95[1])], "units": self.units, "unit": self.unit,
                **self.extra}


def _clean(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if not np.isfinite(value) else value


# -- value counts and coincidences ----------------------------------------------------------------


def value_counts(unit_codes: np.ndarray, value_codes: np.ndarray, n_units: int, n_values: int) -> np.ndarray:
    """The (units × values) matrix of how many coders gave each value to each unit."""
    flat = unit_codes.astype(np.int64) * n_values + value_codes.astype(np.int64)
    return np.bincount(flat, minlength=n_units * n_values).reshape(n_units, n_values)


def collapse_unanimous(counts: np.ndarray) -> np.ndarray:
    """An equivalent, shorter value-count matrix for the coincidence sums.

    A unit where all m coders chose value c adds exactly m to o[c, c]; so does one unit with Σm coders
    all choosing c. Merging the unanimous units per value therefore leaves the coincidence matrix, and
    alpha, unchanged, while shrinking e.g. NER's per-character matrix (mostly unanimous ``O``) a hundredfold.
    """
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts = counts[pairable]
    m = m[pairable]
    unanimous = counts.max(axis=1) == m
    merged = counts[unanimous].sum(axis=0)
    rows = [counts[~unanimous]]
    for value in np.flatnonzero(merged):
        row = np.zeros((1, counts.shape[1]), dtype=counts.dtype)
        row[0, value] = merged[value]
        rows.append(row)
    return np.concatenate(rows, axis=0)


def krippendorff_alpha(counts: np.ndarray, value_domain: np.ndarray, level: str) -> float | None:
    """Alpha from a (units × values) count matrix via the ``krippendorff`` package; ``None`` when undefined
    (no unit with two values, or a single value in use)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}")
    compact = collapse_unanimous(np.asarray(counts))
    used = compact.sum(axis=0) > 0
    if compact.shape[0] == 0 or used.sum() < 2:
        return None
    if level == "nominal":  # unused values change nothing for nominal data; dropping them saves memory
        compact, value_domain = compact[:, used], np.asarray(value_domain)[used]
    # as floats: the package's arithmetic is the same, without converting int64 arrays of units × V × V
    return float(krippendorff.alpha(value_counts=compact.astype(np.float64), value_domain=value_domain,
                                    level_of_measurement=level))


def unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Each unit's coincidence contribution, flattened: (units × V²)."""
    counts = counts.astype(np.float64)
    m = counts.sum(axis=1)
    denom = np.where(m >= 2, m - 1, np.inf)
    outer = counts[:, :, None] * counts[:, None, :]
    v = counts.shape[1]
    outer[:, np.arange(v), np.arange(v)] -= counts
    return (outer / denom[:, None, None]).reshape(len(counts), v * v)


def distinct_rows(matrix: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct rows, inverse, counts) of a 2-D array, like ``np.unique(axis=0)`` but ordered by a random
    projection (one 1-D sort instead of a row-wise lexicographic one); checked exactly, with the lexicographic
    order as fallback. Rows of small integers (value counts) are told apart by an exact integer key instead.

    ``weights`` says how many times each row occurs: the counts are then those of the repeated matrix.
    """
    matrix = np.ascontiguousarray(matrix)
    if matrix.shape[0] == 0:
        return matrix, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    direction = np.random.default_rng(0).random(matrix.shape[1])
    keys = _row_keys(matrix)
    if keys is None:
        # Row by row (not a BLAS product, whose blocking can round two identical rows differently and split them).
        projection = (matrix.astype(np.float64) * direction).sum(axis=1)
        _, first, inverse = np.unique(projection, return_index=True, return_inverse=True)
        distinct = matrix[first]
        if not np.array_equal(distinct[inverse], matrix):  # two different rows projected alike: never in practice
            distinct, inverse = np.unique(matrix, axis=0, return_inverse=True)
    else:
        inverse, uniques = pd.factorize(keys)  # hashing, no sort
        first = np.empty(len(uniques), dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(inverse) - 1, -1, -1)
        distinct = matrix[first]
        projection = (distinct.astype(np.float64) * direction).sum(axis=1)
        # the order the projection path gives (or, when two rows project alike, the lexicographic one)
        order = (np.argsort(projection, kind="stable") if len(np.unique(projection)) == len(projection)
                 else np.lexsort(distinct.T[::-1]))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        distinct, inverse = distinct[order], rank[inverse.ravel()]
    inverse = inverse.ravel()
    counts = (np.bincount(inverse, minlength=len(distinct)) if weights is None
              else np.bincount(inverse, weights=weights, minlength=len(distinct)).round().astype(np.int64))
    return distinct, inverse, counts


def _row_keys(matrix: np.ndarray) -> np.ndarray | None:
    """One exact int64 per row of a small-integer matrix (the row read as digits), or ``None`` if it would not fit."""
    if not np.issubdtype(matrix.dtype, np.integer):
        return None
    low, high = int(matrix.min()), int(matrix.max())
    base = high - low + 1
    if matrix.shape[1] * np.log2(base) >= 62:
        return None
    # column by column: no converted copy of the whole matrix
    keys = np.zeros(len(matrix), dtype=np.int64)
    for column in range(matrix.shape[1] - 1, -1, -1):
        keys *= base
        keys += matrix[:, column]
        if low:
            keys -= low
    return keys


def item_coincidences(counts: np.ndarray, unit_item: np.ndarray, n_items: int) -> np.ndarray:
    """Coincidence contributions summed per item (items × V²), for a bootstrap that resamples items.

    Computed once per distinct value-count row, so per-character or per-eojeol units stay cheap.
    """
    pairable = counts.sum(axis=1) >= 2
    counts, unit_item = counts[pairable], unit_item[pairable]
    v = counts.shape[1]
    if len(counts) == 0:
        return np.zeros((n_items, v * v))
    distinct, inverse, _ = distinct_rows(counts)
    contributions = unit_coincidences(distinct)
    membership = sparse.csr_matrix((np.ones(len(inverse)), (unit_item, inverse)),
                                   shape=(n_items, len(distinct)))
    return np.asarray(membership @ contributions)


def item_rows(counts: np.ndarray, unit_item: np.ndarray | None, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """The items' coincidence rows (V² each; items with a pairable unit only) as (distinct rows, how many items
    have each). With ``unit_item=None`` the units are the items: identical value-count rows give identical
    coincidence rows, so they are computed once per distinct count row (a few hundred for 100,000 items)."""
    if unit_item is None:
        distinct, _, multiplicity = distinct_rows(counts[counts.sum(axis=1) >= 2])
        return unit_coincidences(distinct), multiplicity
    per_item = item_coincidences(counts, unit_item, n_items)
    per_item = per_item[per_item.sum(axis=1) > 0]
    return per_item, np.ones(len(per_item), dtype=np.int64)


def coincidences(rows: np.ndarray, multiplicity: np.ndarray) -> np.ndarray:
    """The summed coincidence matrix (flattened) of :func:`item_rows`."""
    return (rows * multiplicity[:, None]).sum(axis=0)


def distance_matrix(value_domain: np.ndarray, level: str, n_v: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distances δ²(c, k) for one or many marginals ``n_v`` (…, V) → (…, V, V)."""
    v = len(value_domain)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (*n_v.shape[:-1], v, v))
    values = np.asarray(value_domain, dtype=np.float64)
    if level == "interval":
        return np.broadcast_to((values[:, None] - values[None, :]) ** 2, (*n_v.shape[:-1], v, v))
    if level == "ratio":
        total = values[:, None] + values[None, :]
        diff = values[:, None] - values[None, :]
        d = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
        return np.broadcast_to(d, (*n_v.shape[:-1], v, v))
    # ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)²
    cum = np.cumsum(n_v, axis=-1)
    lo = np.minimum.outer(np.arange(v), np.arange(v))
    hi = np.maximum.outer(np.arange(v), np.arange(v))
    before = np.concatenate([np.zeros((*n_v.shape[:-1], 1)), cum], axis=-1)
    between = before[..., hi + 1] - before[..., lo]
    return (between - (n_v[..., :, None] + n_v[..., None, :]) / 2) ** 2


def alpha_from_coincidences(o: np.ndarray, value_domain: np.ndarray, level: str) -> np.ndarray:
    """Alpha from coincidence matrices (…, V, V): the formula of the ``krippendorff`` package, batched."""
    n_v = o.sum(axis=-1)
    n = n_v.sum(axis=-1)
    e = (n_v[..., :, None] * n_v[..., None, :] - n_v[..., :, None] * np.eye(o.shape[-1])) / (n - 1)[..., None, None]
    d = distance_matrix(value_domain, level, n_v)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (o * d).sum(axis=(-2, -1)) / (e * d).sum(axis=(-2, -1))


# -- bootstrap over items ---------------------------------------------------------------------------


def bootstrap_sums(per_item: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *, seed: int = SEED,
                   n_boot: int = N_BOOT, weights: np.ndarray | None = None,
                   reduce: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[float | None, float | None]:
    """95 % percentile interval of ``statistic`` over item resamples, for statistics of per-item sums.

    Resampling N items with replacement is a multinomial draw over the items; items with identical
    rows are interchangeable, so drawing over distinct rows with their multiplicities is the same
    distribution at a fraction of the cost. ``statistic`` maps summed rows (B × d) to B values.
    ``weights``: how many items each row stands for (rows already distinct). ``reduce``: a linear map of the
    rows to the fewer sums the statistic needs, applied before the resampled sums (``statistic`` then gets
    reduced sums).
    """
    sums = resampled_sums(per_item, seed=seed, n_boot=n_boot, weights=weights, reduce=reduce)
    return (None, None) if sums is None else _percentiles(statistic(sums))


def resampled_sums(per_item: np.ndarray, *, seed: int = SEED, n_boot: int = N_BOOT, weights: np.ndarray | None = None,
                   reduce: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray | None:
    """The summed rows of ``n_boot`` item resamples (B × d), drawn as :func:`bootstrap_sums` describes; ``None``
    with fewer than two items. For statistics with several values per resample (per label, per type)."""
    n = int(weights.sum()) if weights is not None else len(per_item)
    if n < 2:
        return None
    distinct, inverse, counts = distinct_rows(per_item, weights)
    rows = reduce(distinct) if reduce is not None else distinct
    rng = np.random.default_rng(seed)
    if len(distinct) * n_boot > MAX_BINOMIALS and len(distinct) * DRAW_ITEMS_ABOVE > n:
        # Most of many items differ (spans, trees): a multinomial over almost n rows costs a binomial draw per row
        # and resample, drawing n item indices is cheaper. Same distribution, other random numbers.
        item_row = inverse if weights is None else np.repeat(inverse, weights)
        return _resampled_sums(rng, item_row, rows, n_boot)
    return rng.multinomial(n, counts / n, size=n_boot).astype(np.float64) @ rows


def column_percentiles(values: np.ndarray) -> list[tuple[float | None, float | None]]:
    """:func:`_percentiles` of each column of (B × k) replicates."""
    return [_percentiles(column) for column in np.asarray(values).T]


def _resampled_sums(rng: np.random.Generator, item_row: np.ndarray, rows: np.ndarray, n_boot: int) -> np.ndarray:
    """Σ rows[item_row[i]] over n items drawn with replacement, for each of ``n_boot`` resamples (B × d)."""
    n, k = len(item_row), len(rows)
    chunk = max(1, 4_000_000 // n)
    out = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        picks = item_row[rng.integers(0, n, (size, n))] + (np.arange(size) * k)[:, None]
        out.append(np.bincount(picks.ravel(), minlength=size * k).reshape(size, k).astype(np.float64) @ rows)
    return np.concatenate(out)


#: While :func:`keep_replicates` is active, every bootstrap hands it its replicates (one array of n_boot values).
_kept_replicates: ContextVar[list[np.ndarray] | None] = ContextVar("kept_replicates", default=None)


@contextmanager
def keep_replicates() -> Iterator[list[np.ndarray]]:
    """Collect the bootstrap replicates behind the intervals computed inside the block, in order: the per-version
    report differences two coefficients' replicates, whatever measure computed them."""
    kept: list[np.ndarray] = []
    token = _kept_replicates.set(kept)
    try:
        yield kept
    finally:
        _kept_replicates.reset(token)


def _percentiles(values: np.ndarray) -> tuple[float | None, float | None]:
    kept = _kept_replicates.get()
    if kept is not None:
        kept.append(np.asarray(values, dtype=np.float64))
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return (None, None)
    lo, hi = np.percentile(values, [2.5, 97.5])
    return (float(lo), float(hi))


def coincidence_alpha(counts: np.ndarray, value_domain: np.ndarray, level: str) -> float | None:
    """Alpha by the package's formula from the summed coincidences, without the package; ``None`` when undefined."""
    return alpha_with_ci(counts, None, len(counts), value_domain, level, n_boot=0, package=False)[0]


def alpha_with_ci(counts: np.ndarray, unit_item: np.ndarray | None, n_items: int, value_domain: np.ndarray,
                  level: str, *, seed: int = SEED, n_boot: int = N_BOOT, package: bool = True
                  ) -> tuple[float | None, tuple[float | None, float | None]]:
    """Alpha (from the package, or with ``package=False`` from the coincidences) and its item-bootstrap interval.

    ``unit_item[u]`` is the item of unit u; ``None`` when every unit is an item of its own.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level of measurement {level!r}")
    if package:
        value = krippendorff_alpha(counts, value_domain, level)
        if value is None:
            return None, (None, None)
    rows, multiplicity = item_rows(np.asarray(counts), unit_item, n_items)
    return rows_alpha_with_ci(rows, multiplicity, value_domain, level, seed=seed, n_boot=n_boot,
                              value=value if package else None)


def rows_alpha_with_ci(rows: np.ndarray, multiplicity: np.ndarray, value_domain: np.ndarray, level: str, *,
                       seed: int = SEED, n_boot: int = N_BOOT, value: float | None = None
                       ) -> tuple[float | None, tuple[float | None, float | None]]:
    """:func:`alpha_with_ci` from the items' coincidence rows (:func:`item_rows`); ``value``: the alpha when
    already known (from the package), else it is computed from the coincidences."""
    v = len(value_domain)
    if value is None:
        value = _clean(alpha_from_coincidences(coincidences(rows, multiplicity).reshape(v, v), value_domain, level))
        if value is None:
            return None, (None, None)
    if not n_boot:
        return value, (None, None)
    if level == "nominal":  # nominal alpha needs V + 1 sums of the V² coincidences
        ci = bootstrap_sums(rows, lambda s: _nominal_alpha(s, v), seed=seed, n_boot=n_boot, weights=multiplicity,
                            reduce=lambda r: _nominal_parts(r, v))
    else:
        ci = bootstrap_sums(rows, lambda s: alpha_from_coincidences(s.reshape(-1, v, v), value_domain, level),
                            seed=seed, n_boot=n_boot, weights=multiplicity)
    return value, ci


def _nominal_parts(rows: np.ndarray, v: int) -> np.ndarray:
    """Coincidence rows (K × V²) → (K × V+1): each value's pairable count, then the agreeing pairs (diagonal)."""
    o = rows.reshape(-1, v, v)
    return np.hstack([o.sum(axis=2), np.trace(o, axis1=1, axis2=2)[:, None]])


def _nominal_alpha(parts: np.ndarray, v: int) -> np.ndarray:
    """Nominal alpha from summed :func:`_nominal_parts`: 1 − (n − agreeing)(n − 1) / (n² − Σ n_c²), the package's
    formula with δ = 1 off the diagonal."""
    n_v = parts[:, :v]
    n = n_v.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (n - parts[:, v]) * (n - 1) / (n ** 2 - (n_v ** 2).sum(axis=1))


# -- one-vs-rest alpha (per label, per relation) ---------------------------------------------------------


def binary_parts(counts: np.ndarray) -> np.ndarray:
    """Per unit (rows of pairable value counts, U × V) and label c, the sums binary nominal α needs for "c" against
    "not c": (n_c, n_rest, agreeing pairs) → (U × 3V). Agreeing pairs: [n_c(n_c − 1) + r(r − 1)] / (m − 1)."""
    counts = counts.astype(np.float64)
    m = counts.sum(axis=1, keepdims=True)
    rest = m - counts
    agreeing = (counts * (counts - 1) + rest * (rest - 1)) / (m - 1)
    return np.stack([counts, rest, agreeing], axis=2).reshape(len(counts), -1)


def binary_alpha(sums: np.ndarray, v: int) -> np.ndarray:
    """One-vs-rest nominal α of each label from summed :func:`binary_parts` (B × 3V → B × V):
    1 − (n − agreeing)(n − 1) / (n² − n_c² − n_rest²)."""
    parts = sums.reshape(len(sums), v, 3)
    ones, rest, agreeing = parts[..., 0], parts[..., 1], parts[..., 2]
    n = ones + rest
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (n - agreeing) * (n - 1) / (n ** 2 - ones ** 2 - rest ** 2)


# -- kappas -------------------------------------------------------------------------------------------


def fleiss_kappa_from_counts(counts: np.ndarray) -> float | None:
    """Fleiss' kappa from an (items × categories) table with the same number of raters per item."""
    counts = np.asarray(counts, dtype=np.float64)
    if len(counts) == 0:
        return None
    return float(_fleiss_from_sums(_fleiss_rows(counts).sum(axis=0)[None, :], counts.shape[1])[0])


def _fleiss_rows(counts: np.ndarray) -> np.ndarray:
    """Per-item sums Fleiss' kappa is built from: [n_ij…, Σ_j n_ij², n_i, n_i², 1]."""
    n = counts.sum(axis=1, keepdims=True)
    return np.hstack([counts, (counts ** 2).sum(axis=1, keepdims=True), n, n ** 2, np.ones_like(n)])


def _fleiss_from_sums(sums: np.ndarray, v: int) -> np.ndarray:
    col = sums[:, :v]
    sq, n_sum, items = sums[:, v], sums[:, v + 1], sums[:, v + 3]
    raters = n_sum / items  # constant per item by the precondition
    p_j = col / n_sum[:, None]
    p_bar = (sq - n_sum) / (items * raters * (raters - 1))
    p_e = (p_j ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p_bar - p_e) / (1 - p_e)


def fleiss_with_ci(counts: np.ndarray, *, seed: int = SEED, n_boot: int = N_BOOT
                   ) -> tuple[float | None, tuple[float | None, float | None]]:
    counts = np.asarray(counts, dtype=np.float64)
    value = fleiss_kappa_from_counts(counts)
    rows = _fleiss_rows(counts)
    v = counts.shape[1]
    return value, bootstrap_sums(rows, lambda s: _fleiss_from_sums(s, v), seed=seed, n_boot=n_boot)


def cohen_kappa(a: np.ndarray, b: np.ndarray, n_values: int) -> float | None:
    """Cohen's kappa of two coders' integer codes on the same items (``None`` when chance agreement is 1)."""
    if len(a) == 0:
        return None
    table = np.bincount(a * n_values + b, minlength=n_values * n_values).reshape(n_values, n_values)
    return _kappa_from_tables(table[None].astype(np.float64))[0]


def _kappa_from_tables(tables: np.ndarray) -> np.ndarray:
    n = tables.sum(axis=(-2, -1))
    p_o = np.trace(tables, axis1=-2, axis2=-1) / n
    p_e = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1) / n ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_e < 1, (p_o - p_e) / (1 - p_e), np.nan)


# -- pairwise correlations and set agreement -------------------------------------------------------------


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def f1_from_counts(tp: np.ndarray, n_a: np.ndarray, n_b: np.ndarray) -> np.ndarray:
    """Dice/F1 of two sets from |A∩B|, |A|, |B|; two empty sets agree perfectly (1.0)."""
    tp, total = np.asarray(tp, dtype=np.float64), np.asarray(n_a, dtype=np.float64) + np.asarray(n_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, 2 * tp / total, 1.0)


def _rank_groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(one-hot item → distinct value matrix, index of each item's value), for :func:`weighted_midranks`."""
    distinct, inverse = np.unique(x, return_inverse=True)
    inverse = inverse.ravel()
    onehot = np.zeros((len(x), len(distinct)))
    onehot[np.arange(len(x)), inverse] = 1
    return onehot, inverse


def weighted_midranks(x: np.ndarray, w: np.ndarray, groups: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> np.ndarray:
    """Average ranks of ``x`` in the sample that repeats item i ``w[b, i]`` times, for every row b of ``w``.

    Equals ``scipy.stats.rankdata(np.repeat(x, w[b]))`` mapped back to the items, so a Spearman correlation
    of a bootstrap resample needs no re-sorting.
    """
    onehot, inverse = groups or _rank_groups(x)
    group = w @ onehot  # (B, K) weight of each distinct value
    before = np.cumsum(group, axis=1) - group
    return (before + (group + 1) / 2)[:, inverse]


def weighted_corr(x: np.ndarray, y: np.ndarray, w: np.ndarray, *, rank: bool = False,
                  groups: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
                  ) -> np.ndarray:
    """Pearson (or Spearman, ``rank=True``) correlation of x and y under item weights ``w`` (B × n) → (B,)."""
    if rank:
        gx, gy = groups or (None, None)
        x, y = weighted_midranks(x, w, gx), weighted_midranks(y, w, gy)
    else:
        x, y = np.broadcast_to(x, w.shape), np.broadcast_to(y, w.shape)
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        dx = x - (w * x).sum(axis=1, keepdims=True) / total
        dy = y - (w * y).sum(axis=1, keepdims=True) / total
        r = (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    return np.where((w > 0).sum(axis=1) >= 3, r, np.nan)


def pairwise_correlations(matrix: np.ndarray, present: np.ndarray, pairs: list[tuple[int, int]], *, rank: bool,
                          seed: int = SEED, n_boot: int = N_BOOT
                          ) -> tuple[list[float | None], float | None, tuple[float | None, float | None]]:
    """Per-pair correlations over shared items, their mean, and the item-bootstrap interval of the mean."""
    n = len(matrix)
    prepared = []
    for i, j in pairs:
        idx = np.flatnonzero(present[:, i] & present[:, j])
        x, y = matrix[idx, i], matrix[idx, j]
        prepared.append((idx, x, y, (_rank_groups(x), _rank_groups(y)) if rank else None))
    per_pair = [weighted_corr(x, y, np.ones((1, len(idx))), rank=rank, groups=g)[0] for idx, x, y, g in prepared]
    values = [_clean(v) for v in per_pair]
    finite = [v for v in values if v is not None]
    mean = float(np.mean(finite)) if finite else None
    if not pairs or not n_boot or n < 2:
        return values, mean, (None, None)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 5_000_000 // n))
    means = []
    for start in range(0, n_boot, chunk):
        w = rng.multinomial(n, np.full(n, 1 / n), size=min(chunk, n_boot - start)).astype(np.float64)
        rs = np.column_stack([weighted_corr(x, y, w[:, idx], rank=rank, groups=g) for idx, x, y, g in prepared])
        with warnings.catch_warnings():  # resamples where no pair has variance give NaN, dropped below
            warnings.simplefilter("ignore", RuntimeWarning)
            means.append(np.nanmean(rs, axis=1))
    return values, mean, _percentiles(np.concatenate(means))
