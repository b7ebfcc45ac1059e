"""Split building: stratified within one item of the exact share, grouped, duplicates together, seeded."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasets_build.splits import (
    SplitSpecError,
    SplitUnits,
    assign_splits,
    leakage_report,
    parse_ratios,
    quotas,
    split_label_counts,
)

RATIOS = {"train": 0.8, "dev": 0.1, "test": 0.1}


def units_of(rows: list[tuple[str | None, str, str]], pairs: list[tuple[int, int]] = ()) -> SplitUnits:
    """rows: (label, group key, content hash) for items 1..n; pairs: near duplicates by item id."""
    units = SplitUnits()
    for i, (label, group, digest) in enumerate(rows, 1):
        units.add(i, label=label, group_key=group, content_hash=digest)
    units.link(np.array(pairs, dtype=np.int64))
    return units.freeze()


def test_parse_ratios():
    assert parse_ratios("0.8,0.1,0.1") == RATIOS
    assert parse_ratios("0.9,0.1") == {"train": 0.9, "dev": 0.1}
    for bad in ("0.8,0.1", "1", "a,b", "0.5,0.5,0.5,-0.5", "1.2,-0.2"):
        with pytest.raises(SplitSpecError):
            parse_ratios(bad)


@pytest.mark.parametrize("seed", [0, 1, 7, 2024])
def test_stratification_within_one_item_per_label_and_split(seed):
    rng = np.random.default_rng(seed)
    labels = ["a"] * 503 + ["b"] * 211 + ["c"] * 97 + ["d"] * 9 + ["e"] * 1
    rng.shuffle(labels)
    units = units_of([(label, "", f"h{i}") for i, label in enumerate(labels)])
    codes = assign_splits(units, RATIOS, seed)
    counts = split_label_counts(units, codes, list(RATIOS))
    for label in set(labels):
        n = labels.count(label)
        for split, share in RATIOS.items():
            got = counts[split].get(label, 0)
            assert abs(got - share * n) <= 1, (label, split, got, share * n)


def test_groups_never_straddle_splits():
    rows = []
    for g in range(300):
        size = 1 + g % 5  # groups of 1..5 items (e.g. NLI pairs written from one premise)
        rows += [("x" if (g + j) % 3 else "y", f"group-{g}", f"text-{g}-{j}") for j in range(size)]
    units = units_of(rows)
    codes = assign_splits(units, RATIOS, 3)
    for g in range(300):
        members = [i for i, row in enumerate(rows) if row[1] == f"group-{g}"]
        assert len(set(codes[members].tolist())) == 1
    report = leakage_report(units, codes, list(RATIOS))
    assert report["clean"] and report["groups_across_splits"] == 0
    # Sizes still follow the ratios roughly (groups are at most 5 items).
    shares = np.bincount(codes, minlength=3) / len(rows)
    assert np.allclose(shares, list(RATIOS.values()), atol=0.03)


def test_exact_and_near_duplicates_stay_together():
    rows = [("a" if i % 2 else "b", "", f"text-{i}") for i in range(400)]
    # Exact duplicates: items 10, 200 and 390 carry the same content hash.
    for i in (9, 199, 389):
        rows[i] = (rows[i][0], "", "same-text")
    # Near duplicates (from the import's MinHash pairs) chain 5 ~ 150 ~ 300, and 7 ~ 8.
    units = units_of(rows, pairs=[(5, 150), (150, 300), (7, 8)])
    for seed in range(10):
        codes = assign_splits(units, RATIOS, seed)
        assert len({codes[9], codes[199], codes[389]}) == 1
        assert len({codes[4], codes[149], codes[299]}) == 1
        assert codes[6] == codes[7]
        report = leakage_report(units, codes, list(RATIOS))
        assert report["clean"], report


def test_a_near_duplicate_group_stays_together_without_its_first_item():
    """Links name an item's group by its first item's id; when that item is not among the units (dropped at
    review, deleted), the group's other items still go to one split."""
    rows = [("a" if i % 2 else "b", "", f"text-{i}") for i in range(300)]
    units = units_of(rows, pairs=[(10, 9999), (20, 9999), (200, 9999), (5, 7)])
    assert len(units.pairs) == 3
    for seed in range(10):
        codes = assign_splits(units, RATIOS, seed)
        assert len({codes[9], codes[19], codes[199]}) == 1 and codes[4] == codes[6]
        assert leakage_report(units, codes, list(RATIOS))["clean"]


def test_leakage_report_finds_what_crosses():
    units = units_of([("a", "g1", "h1"), ("a", "g1", "h2"), ("b", "", "h1"), ("b", "", "h4"), ("a", "", "h5")],
                     pairs=[(4, 5)])
    codes = np.array([0, 1, 1, 0, 1], dtype=np.uint8)
    report = leakage_report(units, codes, ["train", "dev"])
    assert not report["clean"]
    assert report["groups_across_splits"] == 1
    assert report["exact_duplicates_across_splits"] == 1
    assert report["near_duplicates_across_splits"] == 1
    assert report["examples"]["near_duplicates"] == [[4, 5]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 2)), min_size=1, max_size=60))
def test_leakage_counts_and_examples_are_the_keys_in_more_than_one_split(rows):
    units = units_of([(None, f"g{group}" if group else "", f"h{digest}") for group, digest, _ in rows])
    codes = np.array([split for _, _, split in rows], dtype=np.uint8)
    report = leakage_report(units, codes, ["train", "dev", "test"], examples=3)
    for name, keys in (("exact_duplicates", units.hashes), ("groups", units.groups)):
        splits_of: dict[int, set[int]] = {}
        for key, split in zip(keys.tolist(), codes.tolist(), strict=True):
            if key:
                splits_of.setdefault(key, set()).add(split)
        leaking = sorted(key for key, seen in splits_of.items() if len(seen) > 1)
        count = "exact_duplicates_across_splits" if name == "exact_duplicates" else "groups_across_splits"
        assert report[count] == len(leaking)
        # An example is the first item of each of the first leaking keys, in key order.
        assert report["examples"][name] == [int(units.ids[keys.tolist().index(key)]) for key in leaking[:3]]


def test_same_seed_same_assignment_other_seed_differs():
    rows = [(str(i % 4), f"g{i // 3}", f"t{i}") for i in range(900)]
    a = assign_splits(units_of(rows), RATIOS, 11)
    b = assign_splits(units_of(rows), RATIOS, 11)
    c = assign_splits(units_of(rows), RATIOS, 12)
    assert a.tobytes() == b.tobytes()
    assert (a != c).any()


def test_unlabelled_items_split_by_ratio():
    units = units_of([(None, "", f"t{i}") for i in range(1000)])
    counts = np.bincount(assign_splits(units, RATIOS, 0), minlength=3)
    assert counts.tolist() == [800, 100, 100]


def test_empty():
    units = units_of([])
    assert assign_splits(units, RATIOS, 0).size == 0
    assert leakage_report(units, np.zeros(0, dtype=np.uint8), list(RATIOS))["clean"]


RATIO_WEIGHTS = st.lists(st.integers(min_value=0, max_value=100), min_size=2, max_size=5).filter(any)


@given(st.lists(st.integers(min_value=0, max_value=200), min_size=1, max_size=40), RATIO_WEIGHTS)
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_quotas_are_exact_to_one_record_for_any_sizes_and_ratios(totals, weights):
    """Every cell, every label's total and every split's size: the exact share rounded down or up."""
    shares = [w / sum(weights) for w in weights]
    q = quotas(shares, totals)
    exact = [Fraction(w, sum(weights)) for w in weights]
    for label, total in enumerate(totals):
        assert sum(row[label] for row in q) == total
        for s in range(len(shares)):
            assert abs(q[s][label] - exact[s] * total) < 1
    n = sum(totals)
    for s in range(len(shares)):
        assert abs(sum(q[s]) - exact[s] * n) < 1, (s, sum(q[s]), float(exact[s] * n))


def test_quotas_keep_a_split_within_one_record_where_rounding_label_by_label_did_not():
    # Rounding label by label gave these 140 items splits of 57, 79 and 4 (exact: 56, 80 and 4).
    totals = [4, 51, 0, 0, 0, 34, 3, 13, 0, 14, 7, 14]
    q = quotas([14 / 35, 20 / 35, 1 / 35], totals)
    assert [sum(row) for row in q] == [56, 80, 4]


def test_small_labels_spread_over_dev_and_test():
    # Seven labels of seven items: dev and test each get their 5 of 50, not 7 and 0.
    units = units_of([(str(i % 7), "", f"t{i}") for i in range(50)])
    counts = np.bincount(assign_splits(units, RATIOS, 0), minlength=3)
    assert counts.tolist() == [40, 5, 5]
