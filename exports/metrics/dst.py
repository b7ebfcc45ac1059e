"""WoS (dst): joint goal accuracy and the official turn-averaged "slot micro F1".

A belief state is the list of ``domain-slot-value`` strings of a user turn (cumulative, as in the files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._common import ScoringError, align_by_guid, pct


def turn_prf(gold: Sequence[str], pred: Sequence[str]) -> tuple[int, int, int]:
    """(tp, fp, fn) of one turn, counted per list element as the official (TRADE-derived) code does."""
    tp = sum(1 for g in gold if g in pred)
    return tp, sum(1 for p in pred if p not in gold), len(gold) - tp


def turn_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Official per-turn F1: an empty gold state scores 1 if the prediction is empty too, else 0."""
    if not gold:
        return 1.0 if not pred else 0.0
    tp, fp, fn = turn_prf(gold, pred)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def joint_goal_accuracy(gold_turns: Sequence[Sequence[str]], pred_turns: Sequence[Sequence[str]]) -> float:
    if not gold_turns:
        return 0.0
    return pct(sum(set(g) == set(p) for g, p in zip(gold_turns, pred_turns, strict=True)) / len(gold_turns))


def slot_micro_f1(gold_turns: Sequence[Sequence[str]], pred_turns: Sequence[Sequence[str]]) -> float:
    """Official "micro" F1: the mean of per-turn F1 over user turns (a macro average over turns)."""
    if not gold_turns:
        return 0.0
    return pct(sum(turn_f1(g, p) for g, p in zip(gold_turns, pred_turns, strict=True)) / len(gold_turns))


def slot_f1_pooled(gold_turns: Sequence[Sequence[str]], pred_turns: Sequence[Sequence[str]]) -> float:
    """Corrected: a true micro F1, TP/FP/FN pooled over all turns (empty-state turns add nothing)."""
    tp = fp = fn = 0
    for g, p in zip(gold_turns, pred_turns, strict=True):
        t, f_p, f_n = turn_prf(g, p)
        tp, fp, fn = tp + t, fp + f_p, fn + f_n
    if tp + fp + fn == 0:
        return pct(1.0)
    return pct(2 * tp / (2 * tp + fp + fn))


def user_states(record: Mapping[str, Any]) -> list[list[str]]:
    """The belief state of every user turn of a dialogue, in order."""
    turns = record.get("dialogue")
    if not isinstance(turns, list):
        raise ScoringError(f"DST record {record.get('guid')} has no dialogue list")
    return [list(turn.get("state") or []) for turn in turns if turn.get("role") == "user"]


def score_dst(gold: Sequence[Mapping[str, Any]], pred: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    aligned = align_by_guid(gold, pred)
    gold_turns: list[list[str]] = []
    pred_turns: list[list[str]] = []
    for gold_record, pred_record in zip(gold, aligned, strict=True):
        g, p = user_states(gold_record), user_states(pred_record)
        if len(g) != len(p):
            raise ScoringError(f"DST record {gold_record['guid']}: {len(p)} predicted user turns for {len(g)}")
        gold_turns += g
        pred_turns += p
    if not gold_turns:
        raise ScoringError("nothing to score")
    return {
        "joint_goal_accuracy": joint_goal_accuracy(gold_turns, pred_turns),
        "slot_micro_f1": slot_micro_f1(gold_turns, pred_turns),
        "slot_f1_pooled": slot_f1_pooled(gold_turns, pred_turns),
    }
