"""Train/dev/test splits that do not leak: stratified by label, grouped, duplicates kept together.

Items are first joined into *components*: items that share a group key (the same premise, passage,
dialogue or source document), the same content hash (exact duplicates) or a near-duplicate group (the
import's MinHash groups, ``datasets_build.models.NearDuplicate``) are one component, found with a sparse
connected-components pass. Each split gets an integer quota per label — the exact share rounded down
or up, the roundings spread so that split sizes follow the ratios too — and components are dealt in a
seeded order, biggest first, each to the split whose quotas for its labels are furthest behind. Single
items then fill the quotas exactly (while items of a label remain, some split still has room for one),
so every split is within one item of its exact share of every label; groups can overshoot by their
size, which is the price of keeping them whole.

Everything works on compact numpy columns (8 bytes per key), so a million items cost tens of
megabytes, not a million Python objects. The same columns, seed and ratios give the same assignment.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy.sparse import coo_matrix, vstack
from scipy.sparse.csgraph import connected_components

SPLIT_NAMES = ("train", "dev", "test")
NO_LABEL = -1
#: Key code of "no key" (an item without a group key).
NO_KEY = 0
_KEY_MASK = (1 << 62) - 1


class SplitSpecError(ValueError):
    """Ratios that do not describe a split."""


def parse_ratios(text: str | Sequence[float]) -> dict[str, float]:
    """``"0.8,0.1,0.1"`` -> ``{"train": 0.8, "dev": 0.1, "test": 0.1}`` (two values: train and dev)."""
    if isinstance(text, str):
        try:
            values = [float(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise SplitSpecError(f"ratios must be numbers separated by commas, got {text!r}") from None
    else:
        values = [float(v) for v in text]
    if not 2 <= len(values) <= len(SPLIT_NAMES):
        raise SplitSpecError(f"give 2 or 3 ratios (train,dev[,test]), got {len(values)}")
    if any(v < 0 for v in values) or not abs(sum(values) - 1.0) < 1e-6:
        raise SplitSpecError(f"ratios must be non-negative and sum to 1, got {values}")
    return dict(zip(SPLIT_NAMES, values, strict=False))


def key_code(text: str) -> int:
    """A 62-bit code for a key string (group key, content hash); ``""`` is :data:`NO_KEY`."""
    if not text:
        return NO_KEY
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return (int.from_bytes(digest, "big") & _KEY_MASK) or 1


@dataclass
class SplitUnits:
    """The columns a split needs, one entry per item, in a fixed (id) order.

    ``add`` appends one item; ``link`` records near-duplicate links by item id (an item and its group, which
    is named by an item id that need not be among the units). Columns grow in
    ``array`` buffers (8 bytes an entry) and become numpy arrays on :meth:`freeze`.
    """

    label_names: dict[str, int] = field(default_factory=dict)
    _ids: array = field(default_factory=lambda: array("q"))
    _labels: array = field(default_factory=lambda: array("i"))
    _groups: array = field(default_factory=lambda: array("q"))
    _hashes: array = field(default_factory=lambda: array("q"))
    _links: list[np.ndarray] = field(default_factory=list)
    ids: np.ndarray | None = None
    labels: np.ndarray | None = None
    groups: np.ndarray | None = None
    hashes: np.ndarray | None = None
    #: (m, 2) indexes into the columns of items that are near duplicates of each other (each linked item
    #: with its component's first, see :func:`_linked_positions`).
    pairs: np.ndarray | None = None

    def add(self, item_id: int, *, label: str | None, group_key: str, content_hash: str) -> None:
        self._ids.append(item_id)
        if label is None:
            self._labels.append(NO_LABEL)
        else:
            self._labels.append(self.label_names.setdefault(label, len(self.label_names)))
        self._groups.append(key_code(group_key))
        self._hashes.append(key_code(content_hash))

    def link(self, links: np.ndarray) -> None:
        """Record ``links``, an ``(m, 2)`` array of item ids."""
        self._links.append(np.asarray(links, dtype=np.int64).reshape(-1, 2))

    def __len__(self) -> int:
        return len(self._ids) if self.ids is None else len(self.ids)

    def freeze(self) -> SplitUnits:
        self.ids = np.frombuffer(self._ids, dtype=np.int64).copy()
        if len(self.ids) > 1 and not np.all(self.ids[1:] > self.ids[:-1]):
            raise ValueError("items must be added in increasing id order")
        self.labels = np.frombuffer(self._labels, dtype=np.int32).copy()
        self.groups = np.frombuffer(self._groups, dtype=np.int64).copy()
        self.hashes = np.frombuffer(self._hashes, dtype=np.int64).copy()
        self.pairs = _linked_positions(self.ids, np.concatenate([np.zeros((0, 2), np.int64), *self._links]))
        self._ids = self._labels = self._groups = self._hashes = array("q")
        self._links = []
        return self

    def label_of(self, code: int) -> str | None:
        if code == NO_LABEL:
            return None
        return next(name for name, value in self.label_names.items() if value == code)


def _linked_positions(ids: np.ndarray, links: np.ndarray) -> np.ndarray:
    """Links by item id -> links by position in ``ids``, connected through items that are not among them too
    (a near-duplicate group's member left out of a release still holds the group together): every present
    item of a linked component is paired with the component's first present item."""
    if not len(links) or not len(ids):
        return np.zeros((0, 2), dtype=np.int64)
    nodes, inverse = np.unique(links.ravel(), return_inverse=True)
    ends = inverse.reshape(-1, 2)
    graph = coo_matrix((np.ones(len(ends), dtype=np.int8), (ends[:, 0], ends[:, 1])), shape=(len(nodes), len(nodes)))
    _, component = connected_components(graph, directed=False)
    positions = np.minimum(np.searchsorted(ids, nodes), len(ids) - 1)
    present = ids[positions] == nodes
    component, positions = component[present], positions[present]
    order = np.lexsort((positions, component))
    component, positions = component[order], positions[order]
    first = np.concatenate(([True], component[1:] != component[:-1])) if len(component) else np.zeros(0, bool)
    heads = positions[first][np.cumsum(first) - 1]
    return np.stack([heads[~first], positions[~first]], axis=1).astype(np.int64)


def components(units: SplitUnits) -> np.ndarray:
    """Component number per item: items sharing a group key or a content hash, or linked as near
    duplicates, end up in one component (transitively)."""
    n = len(units)
    rows: list[np.ndarray] = [units.pairs[:, 0]]
    cols: list[np.ndarray] = [units.pairs[:, 1]]
    offset = n
    for keys in (units.groups, units.hashes):
        has_key = np.nonzero(keys != NO_KEY)[0]
        _, key_node = np.unique(keys[has_key], return_inverse=True)
        rows.append(has_key)
        cols.append(key_node.astype(np.int64) + offset)
        offset += int(key_node.max()) + 1 if len(key_node) else 0
    row = np.concatenate(rows)
    col = np.concatenate(cols)
    graph = coo_matrix((np.ones(len(row), dtype=np.int8), (row, col)), shape=(offset, offset))
    _, labels = connected_components(graph, directed=False)
    return labels[:n]


def quotas(shares: Sequence[float], totals: Sequence[int]) -> list[list[int]]:
    """Items per split and label: each the exact share rounded down or up, summing to the label's total,
    and each split's size its exact share of all items rounded down or up (controlled rounding).

    ``quotas([0.8, 0.1, 0.1], [7, 7])`` -> ``[[5, 6], [1, 1], [1, 0]]``: no label is more than one item
    away from its exact share (5.6 and 0.7) in any split, and the splits hold 11, 2 and 1 of 14 items
    (11.2, 1.4 and 1.4 exactly).

    Which cells round up is a small linear programme: each label rounds up as many cells as it has items
    left over, each split's intake stays between the floor and the ceiling of its own leftover, and the
    largest fractions are preferred. Its constraints are a bipartite incidence matrix (totally unimodular),
    so the simplex method's vertex is integral, and the exact fractional shares prove one exists
    (Bacharach 1966); rounding cells one label at a time could leave a split several items off its share.
    """
    # The ratio meant, not the float nearest to it: 0.1 is 1/10 and 4 / 7 is 4/7.
    exact_shares = [Fraction(share).limit_denominator(10**6) for share in shares]
    whole = sum(exact_shares)
    exact_shares = [share / whole for share in exact_shares]
    k, n_labels = len(shares), len(totals)
    exact = [[share * total for total in totals] for share in exact_shares]
    result = [[math.floor(x) for x in row] for row in exact]
    cells = [(label, s) for label in range(n_labels) for s in range(k) if exact[s][label] != result[s][label]]
    if not cells:
        return result
    rest = [total - sum(result[s][label] for s in range(k)) for label, total in enumerate(totals)]
    n = sum(totals)
    low = [math.floor(share * n) - sum(result[s]) for s, share in enumerate(exact_shares)]
    high = [math.ceil(share * n) - sum(result[s]) for s, share in enumerate(exact_shares)]
    from scipy.optimize import linprog  # a second to import: only release builds pay it

    columns = np.arange(len(cells))
    ones = np.ones(len(cells))
    per_label = coo_matrix((ones, ([label for label, _ in cells], columns)), shape=(n_labels, len(cells)))
    per_split = coo_matrix((ones, ([s for _, s in cells], columns)), shape=(k, len(cells)))
    fractions = np.array([float(exact[s][label] - result[s][label]) for label, s in cells])
    solution = linprog(-fractions, A_ub=vstack([per_split, -per_split]), b_ub=np.array(high + [-x for x in low]),
                       A_eq=per_label, b_eq=np.array(rest), bounds=(0, 1), method="highs-ds")
    rounded = np.rint(solution.x) if solution.success else None
    if rounded is None or not np.allclose(solution.x, rounded, atol=1e-6):
        raise ArithmeticError(f"no controlled rounding of the split quotas: {solution.message}")
    for (label, s), up in zip(cells, rounded.astype(int).tolist(), strict=True):
        result[s][label] += up
    return result


def assign_splits(units: SplitUnits, ratios: dict[str, float], seed: int) -> np.ndarray:
    """Split code per item (an index into ``list(ratios)``): grouped, stratified, deterministic."""
    n = len(units)
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    comp = components(units)
    n_comp = int(comp.max()) + 1
    sizes = np.bincount(comp, minlength=n_comp)
    # Biggest components first (small ones then even out the quotas); a seeded shuffle breaks ties.
    shuffle = np.random.default_rng(seed).permutation(n_comp)
    comp_order = np.lexsort((shuffle, -sizes))
    members = np.argsort(comp, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))

    # Label codes shifted so that "no label" is a stratum of its own (column 0).
    strata = units.labels.astype(np.int64) + 1
    n_strata = int(strata.max()) + 1
    totals = np.bincount(strata, minlength=n_strata).tolist()
    shares = list(ratios.values())
    k = len(shares)
    deficit = quotas(shares, totals)
    overall = [float(sum(row)) for row in deficit]
    codes = np.empty(n, dtype=np.uint8)
    strata_list = strata.tolist()
    members_list = members.tolist()
    for c in comp_order.tolist():
        start, size = int(starts[c]), int(sizes[c])
        indexes = members_list[start:start + size]
        if size == 1:
            counts = {strata_list[indexes[0]]: 1}
        else:
            counts = {}
            for i in indexes:
                counts[strata_list[i]] = counts.get(strata_list[i], 0) + 1
        best, best_score = 0, None
        for s in range(k):
            if shares[s] == 0:
                continue
            row = deficit[s]
            # The label quotas decide; among equal ones, the split furthest behind overall.
            score = (sum(row[label] * count for label, count in counts.items()), overall[s])
            if best_score is None or score > best_score:
                best, best_score = s, score
        row = deficit[best]
        for label, count in counts.items():
            row[label] -= count
        overall[best] -= size
        codes[indexes] = best
    return codes


def leakage_report(units: SplitUnits, codes: np.ndarray, split_names: Sequence[str], *,
                   examples: int = 5) -> dict[str, object]:
    """What crosses splits: exact duplicates (content hash), groups (premise, passage, dialogue, source
    document) and near-duplicate pairs. ``clean`` is true when nothing does."""

    def crossing(keys: np.ndarray) -> tuple[int, list[int]]:
        has_key = keys != NO_KEY
        if not has_key.any():
            return 0, []
        # The keys in more than one split: sorted by key, then split, a key leaks where its split changes
        # (np.unique over (key, split) rows sorted whole rows, several times slower).
        key, split = keys[has_key], codes[has_key]
        order = np.lexsort((split, key))
        key, split = key[order], split[order]
        leaking = np.unique(key[1:][(key[1:] == key[:-1]) & (split[1:] != split[:-1])])
        sample = [int(units.ids[np.nonzero(keys == value)[0][0]]) for value in leaking[:examples]]
        return len(leaking), sample

    exact, exact_examples = crossing(units.hashes)
    groups, group_examples = crossing(units.groups)
    if len(units.pairs):
        across = codes[units.pairs[:, 0]] != codes[units.pairs[:, 1]]
        near = int(across.sum())
        near_examples = [[int(units.ids[a]), int(units.ids[b])] for a, b in units.pairs[across][:examples]]
    else:
        near, near_examples = 0, []
    return {
        "clean": exact == 0 and groups == 0 and near == 0,
        "exact_duplicates_across_splits": exact,
        "groups_across_splits": groups,
        "near_duplicates_across_splits": near,
        "near_duplicate_pairs_checked": len(units.pairs),
        "examples": {"exact_duplicates": exact_examples, "groups": group_examples,
                     "near_duplicates": near_examples},
        "splits": list(split_names),
    }


def split_label_counts(units: SplitUnits, codes: np.ndarray, split_names: Sequence[str]) -> dict[str, dict]:
    """{split: {label: n}} (labels in first-seen order; unlabelled items are not counted)."""
    result: dict[str, dict[str, int]] = {}
    for s, name in enumerate(split_names):
        in_split = units.labels[codes == s]
        counts = np.bincount(in_split[in_split != NO_LABEL], minlength=len(units.label_names))
        result[name] = {label: int(counts[code]) for label, code in units.label_names.items() if counts[code]}
    return result
