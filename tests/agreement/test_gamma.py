"""Mathet et al.'s γ against the ``pygamma-agreement`` package (0.5.9, the reference implementation) on generated
continua: the observed disorder (the best alignment's, an exact optimum) equals the package's; γ and the expected
disorder, both estimated from random continua, agree within the sampling error of 100 samples each."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from annotation.agreement.gamma import frame_gamma, gamma, observed_disorder

pygamma = pytest.importorskip("pygamma_agreement", reason="pygamma-agreement is a dev dependency (pyproject.toml)")


def generated(seed: int, m: int, n: int = 6) -> list[np.ndarray]:
    """m annotators marking n true units with boundary slips (±2), category errors, misses and a stray unit."""
    rng = np.random.default_rng(seed)
    truth, at = [], 0
    for _ in range(n):
        start = at + int(rng.integers(2, 20))
        end = start + int(rng.integers(2, 10))
        truth.append((start, end, int(rng.integers(0, 3))))
        at = end
    annotators = []
    for _ in range(m):
        rows = []
        for start, end, category in truth:
            if rng.random() < 0.15:
                continue
            start += int(rng.integers(-2, 3)) if rng.random() < 0.4 else 0
            end += int(rng.integers(-2, 3)) if rng.random() < 0.4 else 0
            category = int(rng.integers(0, 3)) if rng.random() < 0.2 else category
            rows.append((start, max(end, start + 1), category))
        if rng.random() < 0.5:
            start = int(rng.integers(0, at))
            rows.append((start, start + int(rng.integers(1, 8)), int(rng.integers(0, 3))))
        annotators.append(np.array(rows, dtype=np.float64).reshape(-1, 3))
    return annotators


def reference(units: list[np.ndarray], seed: int):
    from pyannote.core import Segment

    continuum = pygamma.Continuum()
    for j, rows in enumerate(units):
        continuum.add_annotator(f"a{j}")
        for start, end, category in rows:
            continuum.add(f"a{j}", Segment(start, end), f"c{int(category)}")
    np.random.seed(seed)  # the package's sampler draws from numpy's global generator
    logging.disable(logging.WARNING)  # "CBC solver not installed. Using GLPK." once per alignment
    try:
        return continuum.compute_gamma(pygamma.CombinedCategoricalDissimilarity(), n_samples=100)
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.parametrize(("seed", "m"), [(1, 3), (4, 2), (5, 4)])
def test_gamma_against_pygamma_agreement(seed, m):
    units = generated(seed, m)
    theirs = reference(units, seed)
    ours = gamma([units], seed=seed, samples=100)
    assert ours.observed == pytest.approx(float(theirs.observed_disorder), rel=1e-5)
    assert ours.expected == pytest.approx(float(theirs.expected_disorder), rel=0.04)
    assert ours.value == pytest.approx(float(theirs.gamma), abs=0.02)


def test_items_are_separate_continua():
    """Two items laid end to end far apart have the disorder of the items aligned one by one."""
    first, second = generated(1, 3), generated(2, 3)
    later = np.array([1000.0, 1000.0, 0.0])  # start and end moved on, the category kept
    apart = [np.vstack([a, b + later]) for a, b in zip(first, second, strict=True)]
    assert observed_disorder([first, second]) == pytest.approx(observed_disorder([apart]), rel=1e-12)


def test_perfect_agreement_and_nothing_marked():
    same = [np.array([[0.0, 3.0, 0.0], [5.0, 9.0, 1.0]])] * 3
    assert gamma([same]).value == 1.0
    assert gamma([[np.zeros((0, 3))] * 3]).value is None


def test_frame_gamma_samples_at_most_the_stated_items():
    import pandas as pd

    rows = [(i, j, 0, 3, "PS") for i in range(20) for j in range(2)] + [(i, 0, 5, 7, "LC") for i in range(20)]
    units = pd.DataFrame(rows, columns=["item", "observer", "begin", "end", "category"])
    result = frame_gamma(units, 20, 2, max_items=8)
    assert result.items == 8 and result.units == 8 * 3 and 0 < result.value < 1


@pytest.mark.django_db
def test_agreement_command_gamma_of_ner_spans(make_project, make_user):
    from django.core.management import CommandError

    from annotation import services
    from annotation.models import Annotation
    from tests.builders import command_json

    project = make_project("ner", k=2, slug="ner-gamma")
    users = [make_user(f"ng{i}") for i in range(2)]
    exact = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    slipped = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 9, "type": "LC"}]}
    for n in range(12):
        item = services.item_create(project=project, payload={"sentence": "홍길동은 서울에서 산다"},
                                    external_id=f"g{n}")
        for user, payload in zip(users, (exact, slipped if n % 2 else exact), strict=True):
            Annotation.objects.create(item=item, annotator=user, stage="label", payload=payload)
    found = command_json("agreement", project.slug, "--gamma", "--gamma-items", "5")["gamma"]
    assert found["items"] == 5 and found["items_available"] == 12 and found["observers"] == 2
    # the same figure from the units directly: each sentence its own continuum, the same seeded sample
    units = np.array([[0, 3, 1], [5, 7, 0]], dtype=np.float64)
    slip = np.array([[0, 3, 1], [5, 9, 0]], dtype=np.float64)
    chosen = np.sort(np.random.default_rng(found["seed"]).choice(12, 5, replace=False))
    by_hand = gamma([[units, slip if n % 2 else units] for n in chosen], seed=found["seed"])
    assert found["value"] == pytest.approx(by_hand.value) and 0 < found["value"] < 1
    tc = make_project("tc", slug="tc-gamma")
    with pytest.raises(CommandError, match="not spans"):
        command_json("agreement", tc.slug, "--gamma")
