"""MACE (Hovy et al. 2013, "Learning Whom to Trust with MACE"): gold labels from a model of who spams.

Each annotator ``j`` either knows the answer (probability ``θ_j``, their competence) and gives the true label,
or spams (``1 − θ_j``) and draws a label from their own distribution ``ξ_j``. So

    P(a_ij = k | t_i = c) = θ_j · [k = c] + (1 − θ_j) · ξ_jk,    t_i uniform over the K labels.

Unlike Dawid–Skene's full confusion matrix this has K parameters per annotator, which is what few
annotations per person support; and it tells a careless annotator (low θ) from one who merely prefers
a label (ξ). EM: the E-step gives each item's label posterior and, for every annotation, the probability
that it was given knowingly, ``P(knows | a_ij = k) = P(t_i = k | data) · θ_j / (θ_j + (1 − θ_j) ξ_jk)``;
the M-step sets θ_j to the mean of those over the annotator's annotations and ξ_j to the normalised
label counts of the rest, each smoothed by ``smoothing`` (Hovy et al.'s 0.01 / K). EM finds a local
optimum, so it runs from several random starts of a fixed seed and keeps the one with the highest
marginal likelihood: the same data always give the same result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class MaceResult:
    #: (items × classes) posterior probability of each true class.
    posteriors: np.ndarray
    #: (annotators,) probability that an annotator knows the answer rather than spams (θ).
    competence: np.ndarray
    #: (annotators × classes) each annotator's label distribution when spamming (ξ).
    spam_distribution: np.ndarray
    log_likelihood: float
    iterations: int

    @property
    def labels(self) -> np.ndarray:
        return self.posteriors.argmax(axis=1)


def _per_item(items: np.ndarray, values: np.ndarray, n_items: int) -> np.ndarray:
    """Sum (annotations × classes) values over each item's annotations."""
    return np.stack([np.bincount(items, weights=values[:, k], minlength=n_items) for k in range(values.shape[1])],
                    axis=1)


def _fit_once(items: np.ndarray, annotators: np.ndarray, given: np.ndarray, n_items: int, n_classes: int,
              competence: np.ndarray, spam: np.ndarray, *, max_iter: int, tol: float, smoothing: float
              ) -> MaceResult:
    n_annotators = len(competence)
    is_given = np.zeros((len(given), n_classes), dtype=bool)
    is_given[np.arange(len(given)), given] = True
    per_annotator = np.bincount(annotators, minlength=n_annotators).astype(float)
    previous = -np.inf
    iterations = 0
    while True:
        theta = competence[annotators][:, None]
        # P(a_ij | t_i = c) for every annotation and every candidate class c.
        likelihood = theta * is_given + (1 - theta) * spam[annotators, given][:, None]
        log_joint = _per_item(items, np.log(likelihood), n_items) - np.log(n_classes)
        top = log_joint.max(axis=1, keepdims=True)
        joint = np.exp(log_joint - top)
        marginal = joint.sum(axis=1, keepdims=True)
        posteriors = joint / marginal
        log_likelihood = float((np.log(marginal) + top).sum())
        if iterations >= max_iter or log_likelihood - previous < tol * abs(log_likelihood):
            break
        iterations += 1
        previous = log_likelihood
        own = competence[annotators]
        knew = posteriors[items, given] * own / (own + (1 - own) * spam[annotators, given])
        competence = (np.bincount(annotators, weights=knew, minlength=n_annotators) + smoothing) / (
            per_annotator + 2 * smoothing)
        spam_counts = np.zeros((n_annotators, n_classes))
        np.add.at(spam_counts, (annotators, given), 1 - knew)
        spam = (spam_counts + smoothing) / (spam_counts.sum(axis=1, keepdims=True) + n_classes * smoothing)
    return MaceResult(posteriors=posteriors, competence=competence, spam_distribution=spam,
                      log_likelihood=log_likelihood, iterations=iterations)


def mace(labels: np.ndarray, n_classes: int, *, restarts: int = 10, max_iter: int = 200, tol: float = 1e-8,
         smoothing: float | None = None, seed: int = 0) -> MaceResult:
    """Fit MACE to an (items × annotators) matrix of class indices, ``-1`` where an annotator did not label an
    item. The first start trusts everyone equally (θ = 0.5, ξ uniform); the other ``restarts − 1`` draw θ and ξ
    from a generator seeded with ``seed``. Items nobody labelled get the uniform posterior."""
    labels = np.asarray(labels, dtype=np.int64)
    n_items, n_annotators = labels.shape
    items, annotators = np.nonzero(labels >= 0)
    given = labels[items, annotators]
    smoothing = 0.01 / n_classes if smoothing is None else smoothing
    rng = np.random.default_rng(seed)
    best: MaceResult | None = None
    for start in range(max(restarts, 1)):
        if start == 0:
            competence = np.full(n_annotators, 0.5)
            spam = np.full((n_annotators, n_classes), 1 / n_classes)
        else:
            competence = rng.uniform(0.2, 0.8, n_annotators)
            spam = rng.uniform(0.5, 1.5, (n_annotators, n_classes))
            spam /= spam.sum(axis=1, keepdims=True)
        fit = _fit_once(items, annotators, given, n_items, n_classes, competence, spam, max_iter=max_iter, tol=tol,
                        smoothing=smoothing)
        if best is None or fit.log_likelihood > best.log_likelihood + 1e-9:
            best = fit
    assert best is not None
    return best
