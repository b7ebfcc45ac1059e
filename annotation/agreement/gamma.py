"""Mathet et al.'s γ for spans (Y. Mathet, A. Widlöcher, J.-P. Métivier, "The Unified and Holistic Method Gamma (γ)
for Inter-Annotator Agreement Measure and Alignment", Computational Linguistics 41(3):437–479, 2015), as the
``pygamma-agreement`` package computes it with its defaults (Titeux & Riad, "pygamma-agreement: Gamma γ measure for
inter/intra-annotator agreement in Python", JOSS 6(62):2989, 2021).

A *unitary alignment* takes one unit or nothing (∅) from each of the m annotators; its disorder is the mean over the
m(m − 1)/2 annotator pairs of the dissimilarity of their two units, Δ∅ = 1 when either is ∅, else the combined
dissimilarity α·d_pos + β·d_cat with α = β = 1, d_pos = ((|s₁ − s₂| + |e₁ − e₂|) / (l₁ + l₂))² and d_cat = 0 for the
same category, 1 otherwise. The best *alignment* is the set of unitary alignments that holds every unit exactly once
with the least total disorder (an integer programme; here scipy's HiGHS ``milp``); its disorder divided by the mean
number of units per annotator is the observed disorder. γ = 1 − observed / expected, where the expected disorder is the
mean observed disorder of random continua drawn from the data's statistics (pygamma's ``StatisticalContinuumSampler``:
per annotator, a normal number of units, then normal gaps and normal lengths, categories by their frequency).

Goldset's items are separate continua: a unit is never aligned with a unit of another item (on a continuum that laid
the items end to end, far enough apart, such an alignment would always cost more than leaving both alone). A random
continuum is drawn item by item from the statistics of the items (units per annotator and item, gaps, lengths,
categories), so on a corpus of one item this is pygamma's γ. A unitary alignment whose disorder is at least that of
its units left alone (k units: k·Δ∅) is never needed for the minimum and is not offered to the solver.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .lazy import pd
from .unitizing import SpanRows, observed_units

DELTA_EMPTY = 1.0
#: Random continua drawn for the expected disorder (pygamma's default is 30, then more for its precision level).
SAMPLES = 30
#: γ is computed on at most this many items (a seeded sample): the alignment is an integer programme per item.
MAX_ITEMS = 300


@dataclass
class GammaResult:
    value: float | None
    observed: float
    expected: float
    items: int
    units: int
    samples: int


def _dissimilarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Combined dissimilarity of every unit of a (rows start, end, category code) with every unit of b, with a
    last row and column Δ∅ for "no unit"."""
    out = np.full((len(a) + 1, len(b) + 1), DELTA_EMPTY)
    if len(a) and len(b):
        starts = np.abs(a[:, None, 0] - b[None, :, 0])
        ends = np.abs(a[:, None, 1] - b[None, :, 1])
        lengths = (a[:, 1] - a[:, 0])[:, None] + (b[:, 1] - b[:, 0])[None, :]
        positional = ((starts + ends) / lengths) ** 2 * DELTA_EMPTY
        categorical = (a[:, None, 2] != b[None, :, 2]) * DELTA_EMPTY
        out[:-1, :-1] = positional + categorical
    return out


def _candidates(units: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The unitary alignments worth offering for one continuum: (T × m unit indices, len(units[j]) meaning ∅) and
    their disorders."""
    m = len(units)
    sizes = [len(u) + 1 for u in units]
    grid = np.indices(sizes).reshape(m, -1).T
    empty = np.array([len(u) for u in units])
    grid = grid[(grid != empty).any(axis=1)]
    pairs = list(combinations(range(m), 2))
    disorder = np.zeros(len(grid))
    for a, b in pairs:
        disorder += _dissimilarity(units[a], units[b])[grid[:, a], grid[:, b]]
    disorder /= len(pairs)
    held = (grid != empty).sum(axis=1)
    # singletons (disorder Δ∅) always stay, so every unit can be covered; the rest only when cheaper than apart
    keep = (held == 1) | ((disorder < held * DELTA_EMPTY) & (disorder <= m * DELTA_EMPTY))
    return grid[keep], disorder[keep]


def _best_total(continua: list[list[np.ndarray]]) -> float:
    """Σ over the continua of their best alignment's total disorder, as one integer programme (blocks per item)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    costs, rows, cols = [], [], []
    n_units = n_vars = 0
    for units in continua:
        offsets = np.cumsum([0, *[len(u) for u in units]])
        if offsets[-1] == 0:
            continue
        grid, disorder = _candidates(units)
        for j in range(len(units)):
            held = grid[:, j] < len(units[j])
            rows.append(n_units + offsets[j] + grid[held, j])
            cols.append(n_vars + np.flatnonzero(held))
        costs.append(disorder)
        n_units += int(offsets[-1])
        n_vars += len(disorder)
    if not n_vars:
        return 0.0
    matrix = coo_matrix((np.ones(sum(len(r) for r in rows)), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(n_units, n_vars)).tocsr()
    cost = np.concatenate(costs)
    result = milp(cost, constraints=LinearConstraint(matrix, 1, 1), integrality=np.ones(n_vars),
                  bounds=Bounds(0, 1))
    if not result.success:
        raise RuntimeError(f"no best alignment found: {result.message}")
    return float(cost @ np.round(result.x))


def observed_disorder(continua: list[list[np.ndarray]]) -> float:
    """The best alignment's disorder over the mean number of units per annotator."""
    m = len(continua[0]) if continua else 0
    units = sum(len(u) for units in continua for u in units)
    return _best_total(continua) / (units / m) if units else 0.0


@dataclass
class _Statistics:
    """What pygamma's statistical sampler keeps of the data: units per annotator (per item), gaps, lengths,
    categories and their frequencies."""

    count_mean: float
    count_std: float
    gap_mean: float
    gap_std: float
    length_mean: float
    length_std: float
    categories: np.ndarray
    weights: np.ndarray


def _statistics(continua: list[list[np.ndarray]]) -> _Statistics:
    counts, gaps, lengths, categories = [], [0.0], [], []
    for units in continua:
        for mine in units:
            counts.append(len(mine))
            if not len(mine):
                continue
            ordered = mine[np.argsort(mine[:, 0], kind="stable")]
            gaps += (ordered[1:, 0] - ordered[:-1, 1]).tolist()
            if ordered[0, 0] > 0:
                gaps.append(float(ordered[0, 0]))
            lengths += (ordered[:, 1] - ordered[:, 0]).tolist()
            categories += ordered[:, 2].tolist()
    values, frequency = np.unique(np.asarray(categories), return_counts=True)
    return _Statistics(float(np.mean(counts)), float(np.std(counts)), float(np.mean(gaps)), float(np.std(gaps)),
                       float(np.mean(lengths)), float(np.std(lengths)), values, frequency / frequency.sum())


def _random_continuum(stats: _Statistics, m: int, rng: np.random.Generator) -> list[np.ndarray]:
    units: list[np.ndarray] = []
    for _annotator in range(m):
        n = abs(int(rng.normal(stats.count_mean, stats.count_std)))
        if not any(len(u) for u in units):
            n = max(1, n)  # a continuum is never empty
        rows, last = [], 0.0
        for _ in range(n):
            start = last + rng.normal(stats.gap_mean, stats.gap_std)
            end = start + abs(rng.normal(stats.length_mean, stats.length_std))
            while end - start < 1e-6:
                end = start + abs(rng.normal(stats.length_mean, stats.length_std))
            rows.append((start, end, rng.choice(stats.categories, p=stats.weights)))
            last = end
        units.append(np.array(rows, dtype=np.float64).reshape(-1, 3))
    return units


def gamma(continua: list[list[np.ndarray]], *, seed: int = 0, samples: int = SAMPLES) -> GammaResult:
    """γ of continua (items), each a list of m arrays (one per annotator) of units (start, end, category code)."""
    m = len(continua[0]) if continua else 0
    n_units = sum(len(u) for units in continua for u in units)
    if m < 2 or not n_units:
        return GammaResult(None, 0.0, 0.0, len(continua), n_units, 0)
    observed = observed_disorder(continua)
    stats = _statistics(continua)
    rng = np.random.default_rng(seed)
    chance = [observed_disorder([_random_continuum(stats, m, rng) for _ in continua]) for _ in range(samples)]
    expected = float(np.mean(chance))
    value = 1.0 if observed == 0 else (1.0 - observed / expected if expected > 0 else None)
    return GammaResult(value, observed, expected, len(continua), n_units, samples)


def frame_gamma(units: pd.DataFrame, n_items: int, observers: int, *, seed: int = 0,
                max_items: int = MAX_ITEMS) -> GammaResult:
    """γ of ``units`` (columns ``item`` 0..n_items-1, ``observer`` 0..observers-1, ``begin``, ``end``,
    ``category``) over at most ``max_items`` items (a sample drawn with ``seed`` when there are more)."""
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(n_items, max_items, replace=False)) if n_items > max_items else np.arange(n_items)
    codes, _names = pd.factorize(units["category"], sort=True)
    table = np.column_stack([units["begin"].to_numpy(np.float64), units["end"].to_numpy(np.float64),
                             codes.astype(np.float64)])
    item, observer = units["item"].to_numpy(np.int64), units["observer"].to_numpy(np.int64)
    continua = [[table[(item == i) & (observer == j)] for j in range(observers)] for i in chosen]
    return gamma(continua, seed=seed)


def rows_gamma(rows: SpanRows, *, seed: int = 0, max_items: int = MAX_ITEMS) -> dict[str, object]:
    """γ of annotation rows' spans, on the items every one of the same annotators annotated (as αu counts them),
    at most ``max_items`` of them: the ``agreement --gamma`` figure."""
    observed = observed_units(rows)
    result = frame_gamma(observed.units, len(observed.lengths), observed.observers, seed=seed, max_items=max_items)
    return {"name": "gamma", "value": result.value, "observed_disorder": result.observed,
            "expected_disorder": result.expected, "items": result.items, "items_available": len(observed.lengths),
            "observers": observed.observers, "units": result.units, "random_continua": result.samples,
            "seed": seed, "dissimilarity": "combined (positional + categorical), delta_empty 1"}
