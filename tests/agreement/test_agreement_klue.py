"""Acceptance on the real KLUE dev files: ``agreement --json`` equals krippendorff computed from the file."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from tests.builders import run_agreement
from tests.klue_loader import NLI_VOTERS, load_nli, load_sts

pytestmark = [pytest.mark.klue, pytest.mark.django_db]


def coefficient(report: dict, name: str, level: str) -> dict:
    return next(c for c in report["coefficients"] if c["name"] == name and c["level"] == level)


def test_nli_dev_alpha_equals_direct_computation(klue_dir):
    project, records = load_nli(klue_dir, "klue-nli-dev")
    labels = ["entailment", "neutral", "contradiction"]
    data = np.array([[labels.index(r[v]) for r in records] for v in NLI_VOTERS], dtype=float)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")

    report = run_agreement(project.slug)

    assert set(report) >= {"project", "task_type", "annotators", "items_counted", "items_excluded", "coefficients"}
    alpha = coefficient(report, "krippendorff_alpha", "nominal")
    assert alpha["value"] == pytest.approx(expected, abs=1e-9)
    lo, hi = alpha["ci95"]
    assert lo < alpha["value"] < hi
    assert report["items_counted"] == len(records) == 3000
    assert report["annotators"] == 5
    assert sum(report["items_excluded"].values()) == 0
    fleiss = coefficient(report, "fleiss_kappa", "nominal")
    assert fleiss["raters_per_item"] == 5
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    table, _ = aggregate_raters(data.T.astype(int))
    assert fleiss["value"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-9)


def test_sts_dev_interval_alpha_equals_direct_computation(klue_dir):
    project, records = load_sts(klue_dir, "klue-sts-dev")
    annotators = sorted({a for r in records for a in r["annotations"]["annotators"]})
    data = np.full((len(annotators), len(records)), np.nan)
    for j, record in enumerate(records):
        for annotator, score in zip(record["annotations"]["annotators"], record["annotations"]["annotations"],
                                    strict=True):
            data[annotators.index(annotator), j] = score
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    expected_ordinal = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")

    report = run_agreement(project.slug)

    assert coefficient(report, "krippendorff_alpha", "interval")["value"] == pytest.approx(expected, abs=1e-9)
    assert coefficient(report, "krippendorff_alpha", "ordinal")["value"] == pytest.approx(expected_ordinal, abs=1e-9)
    assert report["annotators"] == len(annotators)
    assert report["items_counted"] == len(records)
    pearson = coefficient(report, "pairwise_pearson", "interval")
    assert 0 < pearson["value"] <= 1
