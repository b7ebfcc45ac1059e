"""Simulated crowd labels with known truth, for the gold-rule tests and the soft-label releases."""

from __future__ import annotations

import numpy as np

COMPETENCE = np.array([0.95, 0.9, 0.85, 0.7, 0.5, 0.3, 0.1, 0.05])


def simulated(seed: int, n_items: int = 400, n_classes: int = 3, per_item: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """(items × annotators) labels, ``-1`` where an annotator did not label the item, and the true labels."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_classes, n_items)
    preference = rng.dirichlet(np.ones(n_classes), len(COMPETENCE))
    labels = np.full((n_items, len(COMPETENCE)), -1)
    for i in range(n_items):
        for j in rng.choice(len(COMPETENCE), per_item, replace=False):
            labels[i, j] = truth[i] if rng.random() < COMPETENCE[j] else rng.choice(n_classes, p=preference[j])
    return labels, truth
