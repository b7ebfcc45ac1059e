"""Dialogue states (dst): pairwise joint-goal agreement per user turn, alpha per slot."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import coefficients as co
from ..coefficients import Coefficient
from ..lazy import pd
from .base import MeasureResult
from .pairwise import StructuredMeasure, pair_agreement, pair_coefficient, pair_rows, units_alpha


class StateMeasure(StructuredMeasure):
    """Dialogue states: pairwise joint-goal agreement per user turn, alpha (nominal) per slot."""

    primary_name = "krippendorff_alpha_slots"
    primary_level = "nominal"

    @staticmethod
    def _slot_values(state: list[str]) -> dict[str, str]:
        values = {}
        for entry in state:
            domain, slot, value = [*entry.split("-", 2), "", ""][:3]
            values[f"{domain}-{slot}"] = value
        return values

    def _slot_units(self, frame: pd.DataFrame) -> pd.DataFrame:
        """(item, turn, slot, annotator, value) for every slot any annotator of the item filled; 'none' when empty."""
        rows = []
        item_slots: dict[int, set[str]] = {}
        parsed = []
        for item, annotator, payload in zip(frame["item"], frame["annotator"], frame["payload"], strict=True):
            turns = [self._slot_values(state) for state in (payload or {}).get("states") or []]
            parsed.append((item, annotator, turns))
            item_slots.setdefault(item, set()).update(slot for turn in turns for slot in turn)
        for item, annotator, turns in parsed:
            for t, turn in enumerate(turns):
                for slot in item_slots[item]:
                    rows.append((item, t, slot, annotator, turn.get(slot, "none")))
        return pd.DataFrame(rows, columns=["item", "turn", "slot", "annotator", "value"])

    def _slot_alpha(self, units: pd.DataFrame, name: str, *, seed: int, n_boot: int) -> Coefficient:
        item_codes, _ = pd.factorize(units["item"], sort=True)
        unit_codes, index = pd.factorize(pd.MultiIndex.from_arrays([units["item"], units["turn"], units["slot"]]))
        unit_item = np.zeros(len(index), dtype=np.int64)
        unit_item[unit_codes] = item_codes
        n_items = int(item_codes.max()) + 1 if len(item_codes) else 0
        return units_alpha(name, unit_codes, units["value"].to_numpy(), unit_item, n_items, seed=seed,
                            n_boot=n_boot, unit="turn × slot")

    def _primary(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int, n_boot: int) -> Coefficient:
        return self._slot_alpha(self._slot_units(frame), "krippendorff_alpha_slots", seed=seed, n_boot=n_boot)

    def compute(self, frame: pd.DataFrame, schema: dict[str, Any], *, seed: int = co.SEED,
                n_boot: int = co.N_BOOT) -> MeasureResult:
        frame = frame.reset_index(drop=True)
        units = self._slot_units(frame)
        alpha = self._slot_alpha(units, "krippendorff_alpha_slots", seed=seed, n_boot=n_boot)
        per_slot = {}
        for slot, group in units.groupby("slot"):
            coefficient = self._slot_alpha(group, slot, seed=seed, n_boot=n_boot)
            per_slot[str(slot)] = {"alpha": co._clean(coefficient.value), "units": coefficient.units,
                                   "ci95": [co._clean(coefficient.ci95[0]), co._clean(coefficient.ci95[1])]}
        alpha.extra["per_slot"] = per_slot
        states = [[frozenset(state) for state in (p or {}).get("states") or []] for p in frame["payload"]]
        pairs = pair_rows(frame)
        num, den = [], []
        for ra, rb in zip(pairs["row_a"], pairs["row_b"], strict=True):
            a, b = states[ra], states[rb]
            num.append(float(sum(x == y for x, y in zip(a, b, strict=False))))
            den.append(float(max(len(a), len(b))))
        joint = pair_agreement(pairs.assign(num=num, den=den), seed=seed, n_boot=n_boot)
        filled = units[units["value"] != "none"]
        slots = sorted(filled["slot"].unique().tolist())
        counts = filled["slot"].value_counts()
        by_annotator = {int(a): [int((g == slot).sum()) for slot in slots]
                        for a, g in filled["slot"].groupby(filled["annotator"])}
        joint_goal = pair_coefficient("pairwise_joint_goal", "nominal", joint, "item", ratio_of="user turns")
        return self._result([joint_goal, alpha], "krippendorff_alpha_slots", joint, "joint_goal",
                            "1 − share of user turns with identical states",
                            {"labels": slots, "project": [int(counts.get(s, 0)) for s in slots],
                             "by_annotator": by_annotator})

    def score(self, payload: dict[str, Any], gold: dict[str, Any]) -> float:
        mine, known = payload.get("states") or [], gold.get("states") or []
        turns = max(len(mine), len(known))
        return float(sum(set(a) == set(b) for a, b in zip(mine, known, strict=False)) / turns) if turns else 1.0

    def describe(self, payload: dict[str, Any]) -> str:
        states = payload.get("states") or []
        return " | ".join(", ".join(state) or "—" for state in states)

