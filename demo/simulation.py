"""Simulated annotators for the demo: they work through the real queue and submit through the real
service, starting from the corpus's own label and disagreeing now and then, so agreement is neither
perfect nor meaningless."""

from __future__ import annotations

import random
import zlib
from typing import Any

from django.db import transaction

from annotation import services
from annotation.models import Annotation, Project, User


def _perturb(payload: dict[str, Any], schema: dict[str, Any], rng: random.Random, error_rate: float) -> dict:
    """Change the payload the way a hurried annotator might: another label, a shifted score, a lost span, a
    wrong head or relation, an answer cut short, a slot missed."""
    noisy = dict(payload)
    if rng.random() >= error_rate:
        return noisy
    labels = schema.get("labels")
    if isinstance(noisy.get("label"), str) and isinstance(labels, list) and len(labels) > 1:
        noisy["label"] = rng.choice([label for label in labels if label != noisy["label"]])
        for extra in ("second", "third"):
            if noisy.get(extra) == noisy["label"]:
                noisy[extra] = None
    elif isinstance(noisy.get("score"), int | float):
        shifted = round(noisy["score"]) + rng.choice((-1, 1))
        noisy["score"] = min(schema.get("max", 5), max(schema.get("min", 0), shifted))
    elif isinstance(noisy.get("entities"), list) and noisy["entities"]:
        entities = list(noisy["entities"])
        entities.pop(rng.randrange(len(entities)))
        noisy["entities"] = entities
    elif isinstance(noisy.get("heads"), list) and len(noisy["heads"]) > 2 and rng.random() < 0.5:
        # attach a word to its right neighbour instead (still head-final, so still a tree)
        heads = list(noisy["heads"])
        word = rng.randrange(len(heads) - 2)
        heads[word] = word + 2
        noisy["heads"] = heads
    elif isinstance(noisy.get("deprels"), list) and noisy["deprels"] and isinstance(schema.get("deprels"), list):
        deprels = list(noisy["deprels"])
        deprels[rng.randrange(len(deprels))] = rng.choice(schema["deprels"])
        noisy["deprels"] = deprels
    elif isinstance(noisy.get("answer"), dict) and len(noisy["answer"].get("text", "")) > 1:
        # an answer span one character short (e.g. the unit left out)
        noisy["answer"] = {**noisy["answer"], "text": noisy["answer"]["text"][:-1]}
    elif isinstance(noisy.get("states"), list) and any(noisy["states"]):
        # a slot missed in one turn's state
        states = [list(state) for state in noisy["states"]]
        turn = rng.choice([t for t, state in enumerate(states) if state])
        states[turn].pop(rng.randrange(len(states[turn])))
        noisy["states"] = states
    return noisy


def reference_answer(item_id: int, stage: str) -> dict[str, Any] | None:
    """The corpus's own label for this stage (imported with the item), if any."""
    imported = Annotation.objects.filter(item_id=item_id, imported=True).order_by("id")
    same_stage = imported.filter(stage=stage).first()
    if same_stage is not None:
        return same_stage.payload
    writer = imported.first()
    if writer is None:
        return None
    # A validator of a written item answers what the writer intended (NLI label, MRC answer).
    return {key: writer.payload[key] for key in ("label", "answer") if key in writer.payload} or None


def left_for_people(external_id: str, spare: float) -> bool:
    """Whether the item is one the simulated annotators leave to the people trying the demo: a fixed share
    ``spare`` of the items, chosen by the item's corpus id alone, so every simulated annotator leaves the same
    ones and every database (whatever ids its sequences hand out) gets the same demo."""
    return zlib.crc32(external_id.encode()) % 1000 < spare * 1000


def simulate_annotators(project: Project, annotators: list[User], *, seed: int, error_rate: float = 0.15,
                        spare: float = 0.0) -> int:
    """Let each simulated annotator work through their queue; returns the number of submissions.

    Items with no reference label (e.g. premises waiting for a hypothesis) are skipped and left for the
    people trying the demo, and so is a share ``spare`` of the others (:func:`left_for_people`). One
    transaction per annotator: the work is the same, without a commit (a disk sync) per submission.
    """
    rng = random.Random(seed)
    submitted = 0
    for annotator in annotators:
        services.guideline_acknowledge(user=annotator, project=project)
        with transaction.atomic():
            while (assignment := services.assignment_next(project=project, user=annotator)) is not None:
                reference = reference_answer(assignment.item_id, assignment.stage)
                if reference is None or left_for_people(assignment.item.external_id or str(assignment.item_id), spare):
                    services.assignment_skip(assignment=assignment, reason="left for a person")
                    continue
                for payload in (_perturb(reference, project.label_schema, rng, error_rate), reference):
                    try:
                        services.annotation_submit(project=project, user=annotator, item_id=assignment.item_id,
                                                   payload=payload, seconds_spent=round(rng.uniform(4, 40), 1))
                        submitted += 1
                        break
                    except services.ServiceError:
                        continue  # the perturbed payload broke a rule; submit the reference instead
                else:
                    services.assignment_skip(assignment=assignment, reason="no valid payload")
    return submitted
