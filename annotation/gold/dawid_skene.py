"""Dawid & Skene (1979): gold labels from an EM model of each annotator's confusion matrix.

Majority vote trusts every annotator equally; Dawid–Skene learns, from the data alone, how often each
annotator says k when the truth is j, and weighs their votes accordingly, so a few careful annotators
can outvote several careless ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class DawidSkeneResult:
    #: (items × classes) posterior probability of each true class.
    posteriors: np.ndarray
    #: (annotators × true classes × given classes) estimated confusion matrices, rows sum to 1.
    confusion: np.ndarray
    priors: np.ndarray
    iterations: int

    @property
    def labels(self) -> np.ndarray:
        return self.posteriors.argmax(axis=1)

    def accuracy(self) -> np.ndarray:
        """Each annotator's estimated accuracy: the prior-weighted diagonal of their confusion matrix."""
        return np.einsum("k,akk->a", self.priors, self.confusion)


def dawid_skene(labels: np.ndarray, n_classes: int, *, max_iter: int = 200, tol: float = 1e-6,
                smoothing: float = 0.01) -> DawidSkeneResult:
    """Fit the model to an (items × annotators) matrix of class indices, ``-1`` where an annotator did not
    label an item. Starts from the majority vote; ``smoothing`` keeps unseen confusions above zero."""
    labels = np.asarray(labels, dtype=np.int64)
    n_items, n_annotators = labels.shape
    onehot = np.zeros((n_items, n_annotators, n_classes))
    items, annotators = np.nonzero(labels >= 0)
    onehot[items, annotators, labels[items, annotators]] = 1.0
    votes = onehot.sum(axis=1)
    posteriors = (votes + 1e-9) / (votes + 1e-9).sum(axis=1, keepdims=True)
    priors = np.full(n_classes, 1 / n_classes)
    confusion = np.zeros((n_annotators, n_classes, n_classes))
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        priors = posteriors.mean(axis=0)
        confusion = np.einsum("ik,iaj->akj", posteriors, onehot) + smoothing
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_post = np.log(np.maximum(priors, 1e-300)) + np.einsum("iaj,akj->ik", onehot, np.log(confusion))
        log_post -= log_post.max(axis=1, keepdims=True)
        updated = np.exp(log_post)
        updated /= updated.sum(axis=1, keepdims=True)
        change = np.abs(updated - posteriors).max()
        posteriors = updated
        if change < tol:
            break
    return DawidSkeneResult(posteriors=posteriors, confusion=confusion, priors=priors, iterations=iterations)
