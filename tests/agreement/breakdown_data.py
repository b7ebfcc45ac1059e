"""Projects with known agreement for the breakdown tests: items, annotators and guideline versions written in
bulk, and simulated labels of chosen accuracy."""

from __future__ import annotations

import hashlib

import numpy as np

from annotation.models import Annotation, Guideline, Item, User

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]


def guideline_version(project, version: int) -> Guideline:
    """The project's guideline of that version (a new project has version 1)."""
    return Guideline.objects.get_or_create(project=project, version=version,
                                           defaults={"instructions": "지침", "ethics": "윤리", "pii": "개인정보"})[0]


def bulk_annotations(project, labels: np.ndarray, users: list[User], *, guideline: Guideline | None = None,
                     prefix: str = "i", score: bool = False) -> list[Item]:
    """One item per row of ``labels`` (items × users; -1: that user did not annotate it)."""
    items = Item.objects.bulk_create([
        Item(project=project, external_id=f"{prefix}{n}", payload={"title": f"제목 {n}"},
             content_hash=hashlib.sha256(f"{prefix}{n}".encode()).hexdigest()) for n in range(len(labels))])
    items = list(Item.objects.filter(project=project, external_id__startswith=prefix).order_by("id"))
    Annotation.objects.bulk_create([
        Annotation(item=item, annotator=user, stage="label", seconds_spent=5.0, guideline=guideline,
                   payload={"score": float(value)} if score else {"label": LABELS[int(value)]})
        for item, row in zip(items, labels, strict=True) for user, value in zip(users, row, strict=True)
        if value >= 0])
    return items


def noisy_labels(rng: np.random.Generator, n_items: int, accuracy: list[float], missing: float = 0.2) -> np.ndarray:
    truth = rng.choice(len(LABELS), n_items, p=[0.3, 0.2, 0.15, 0.15, 0.1, 0.05, 0.05])
    right = rng.random((n_items, len(accuracy))) < np.array(accuracy)
    labels = np.where(right, truth[:, None], rng.integers(0, len(LABELS), (n_items, len(accuracy))))
    labels[rng.random(labels.shape) < missing] = -1
    return labels

