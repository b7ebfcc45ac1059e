"""Agreement coefficients against hand-worked examples and independent implementations, and the report
computed from the database (exclusions, per-annotator quality, the ``agreement`` command)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotation import services
from annotation.agreement import coefficients as co
from annotation.models import Annotation, Assignment, AssignmentStatus, Item, User
from tests.builders import run_agreement

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders × 12 units example with
# missing values; the published values are nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


def counts_of(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(value counts, value domain) of a coders × units matrix with NaN for missing."""
    domain = np.unique(data[~np.isnan(data)])
    units = np.tile(np.arange(data.shape[1]), data.shape[0])
    values = data.ravel()
    ok = ~np.isnan(values)
    return co.value_counts(units[ok], np.searchsorted(domain, values[ok]), data.shape[1], len(domain)), domain


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_reproduces_krippendorffs_worked_example_with_missing_data(level, published):
    counts, domain = counts_of(KRIPPENDORFF_2011)
    value = co.krippendorff_alpha(counts, domain, level)
    assert round(value, 3) == published
    o = co.item_coincidences(counts, np.arange(counts.shape[0]), counts.shape[0]).sum(axis=0)
    assert co.alpha_from_coincidences(o.reshape(len(domain), len(domain)), domain, level) == pytest.approx(value)


def test_alpha_hand_worked_two_coders():
    # Units: (a,a) (a,b) (b,b) (b,b) and a fifth unit only coder A labelled (not pairable, so ignored).
    # Coincidences: o_aa = 2, o_ab = o_ba = 1, o_bb = 4; n_a = 3, n_b = 5, n = 8.
    # alpha = 1 - (n - 1) * (o_ab + o_ba) / (n_a n_b + n_b n_a) = 1 - 7 * 2 / 30 = 8/15.
    data = np.array([[0, 0, 1, 1, 0], [0, 1, 1, 1, np.nan]])
    counts, domain = counts_of(data)
    assert co.krippendorff_alpha(counts, domain, "nominal") == pytest.approx(8 / 15)
    assert krippendorff.alpha(reliability_data=data, level_of_measurement="nominal") == pytest.approx(8 / 15)


def test_alpha_is_undefined_without_pairable_units_or_variation():
    assert co.krippendorff_alpha(np.array([[1, 0], [0, 1]]), np.arange(2), "nominal") is None
    assert co.krippendorff_alpha(np.array([[3, 0], [2, 0]]), np.arange(2), "nominal") is None


def test_collapsing_unanimous_units_leaves_alpha_unchanged():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 3, (3, 400)).astype(float)
    data[:, :300] = data[0, :300]  # mostly unanimous, like per-character NER tags
    counts, domain = counts_of(data)
    assert len(co.collapse_unanimous(counts)) < 110
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert co.krippendorff_alpha(counts, domain, level) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_batched_alpha_matches_the_package_on_resampled_items(level):
    rng = np.random.default_rng(7)
    data = rng.integers(1, 6, (4, 60)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    counts, domain = counts_of(data)
    per_item = co.item_coincidences(counts, np.arange(60), 60)
    weights = rng.multinomial(60, np.full(60, 1 / 60))
    resampled = np.repeat(data, weights, axis=1)  # the bootstrap sample, spelled out
    expected = krippendorff.alpha(reliability_data=resampled, value_domain=domain, level_of_measurement=level)
    got = co.alpha_from_coincidences((weights @ per_item).reshape(len(domain), len(domain)), domain, level)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_coincidence_alpha_equals_the_package(level):
    """The timeline's and leave-one-out's point estimate (no package call) is the package's alpha."""
    rng = np.random.default_rng(5)
    data = rng.integers(1, 6, (5, 500)).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    data[:, :200] = data[0, :200]  # unanimous units, as collapse_unanimous sees them
    counts, domain = counts_of(data)
    expected = krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level)
    assert co.coincidence_alpha(counts, domain, level) == pytest.approx(expected, abs=1e-9)
    fast, ci = co.alpha_with_ci(counts, np.arange(500), 500, domain, level, seed=5, n_boot=200, package=False)
    assert fast == pytest.approx(co.krippendorff_alpha(counts, domain, level), abs=1e-9)
    assert ci == co.alpha_with_ci(counts, np.arange(500), 500, domain, level, seed=5, n_boot=200)[1]
    assert co.coincidence_alpha(np.array([[3, 0], [2, 0]]), np.arange(2), level) is None
    assert co.coincidence_alpha(np.array([[1, 0], [0, 1]]), np.arange(2), level) is None


def test_bootstrap_interval_is_seeded_and_brackets_the_value():
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 3, 300)
    data = np.stack([np.where(rng.random(300) < 0.8, truth, rng.integers(0, 3, 300)) for _ in range(3)]).astype(float)
    counts, domain = counts_of(data)
    units = np.arange(300)
    first = co.alpha_with_ci(counts, units, 300, domain, "nominal", seed=5, n_boot=500)
    again = co.alpha_with_ci(counts, units, 300, domain, "nominal", seed=5, n_boot=500)
    assert first == again
    value, (lo, hi) = first
    assert lo < value < hi and hi - lo < 0.2


def test_fleiss_kappa_matches_statsmodels():
    rng = np.random.default_rng(1)
    ratings = rng.integers(0, 4, (200, 5))
    ratings[:120] = ratings[:120, :1]  # some agreement
    table, _ = aggregate_raters(ratings)
    assert co.fleiss_kappa_from_counts(table) == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    value, (lo, hi) = co.fleiss_with_ci(table, n_boot=300)
    assert lo < value < hi


def test_cohen_kappa_matches_scikit_learn():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, 150)
    b = np.where(rng.random(150) < 0.7, a, rng.integers(0, 3, 150))
    assert co.cohen_kappa(a, b, 3) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_weighted_correlations_equal_scipy_on_the_expanded_sample():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 6, 40).astype(float)
    y = np.clip(x + rng.integers(-1, 2, 40), 0, 5)
    weights = rng.multinomial(40, np.full(40, 1 / 40), size=3).astype(float)
    for b in range(3):
        xs, ys = np.repeat(x, weights[b].astype(int)), np.repeat(y, weights[b].astype(int))
        assert co.weighted_corr(x, y, weights[b:b + 1])[0] == pytest.approx(pearsonr(xs, ys)[0])
        assert co.weighted_corr(x, y, weights[b:b + 1], rank=True)[0] == pytest.approx(spearmanr(xs, ys)[0])


def test_f1_of_two_empty_sets_is_agreement():
    assert co.f1_from_counts(np.array([0, 1]), np.array([0, 2]), np.array([0, 2])).tolist() == [1.0, 0.5]


# -- the report from the database ---------------------------------------------------------------------------


def _annotate(project, rows: dict[str, list[str | None]], users: list[User], *, seconds: float = 10.0) -> list[Item]:
    """Items named by key, each labelled by users in order (None = that user did not label it)."""
    items = []
    for key, labels in rows.items():
        item = services.item_create(project=project, payload={"title": f"제목 {key}"}, external_id=key)
        items.append(item)
        for user, label in zip(users, labels, strict=False):
            if label is not None:
                Annotation.objects.create(item=item, annotator=user, stage="label", payload={"label": label},
                                          seconds_spent=seconds)
    return items


@pytest.mark.django_db
def test_report_counts_and_excludes_items_with_reasons(make_project, make_user):
    project = make_project("tc", k=3, slug="tc-report")
    users = [make_user(f"coder{i}") for i in range(3)]
    table = {
        "a": ["사회", "사회", "경제"], "b": ["경제", "경제", "경제"], "c": ["정치", "사회", None],
        "d": ["IT과학", "IT과학", "IT과학"], "e": ["세계", "세계", "정치"],
        "flagged": ["사회", "경제", "정치"], "lonely": ["사회", None, None], "skipped": ["경제", None, None],
        "empty": [None, None, None],
    }
    items = {i.external_id: i for i in _annotate(project, table, users)}
    services.flag_create(item=items["flagged"], user=users[0], kind="other")
    Assignment.objects.create(item=items["skipped"], annotator=users[1], stage="label",
                              status=AssignmentStatus.SKIPPED)

    report = run_agreement(project.slug)

    assert report["project"] == "tc-report" and report["task_type"] == "tc"
    assert report["items_counted"] == 5
    assert report["items_excluded"] == {"flagged": 1, "skipped": 1, "fewer_than_2_annotations": 2}
    assert report["annotators"] == 3
    labels = project.label_schema["labels"]
    data = np.array([[labels.index(v) if v else np.nan for v in table[k]] for k in "abcde"]).T
    alpha = next(c for c in report["coefficients"] if c["name"] == "krippendorff_alpha")
    assert alpha["level"] == "nominal"
    assert alpha["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    fleiss = next(c for c in report["coefficients"] if c["name"] == "fleiss_kappa")
    # Fleiss' kappa counts the complete items only (a, b, d, e: k = 3 labels each; c has two)
    complete, _ = aggregate_raters(np.array([[labels.index(v) for v in table[k]] for k in "abde"]))
    assert fleiss["value"] == pytest.approx(fleiss_kappa(complete, method="fleiss"), abs=1e-12)
    assert fleiss["units"] == 4 and fleiss["raters_per_item"] == 3
    quality = {q["username"]: q for q in report["annotator_quality"]}
    assert quality["coder0"]["items_done"] == 7  # all their work except on the flagged item
    # coder2 labelled a, b, d, e and chose the others' majority on b and d.
    assert quality["coder2"]["agreement"] == pytest.approx(2 / 4)


@pytest.mark.django_db
def test_agreement_command_rejects_unknown_project():
    with pytest.raises(CommandError, match="no project with slug 'nope'"):
        call_command("agreement", "nope", "--json")


@pytest.mark.django_db
def test_report_is_cached_until_annotations_change(make_project, make_user):
    from annotation.models import AgreementReport

    project = make_project("tc", k=2, slug="tc-cache")
    users = [make_user(f"c{i}") for i in range(2)]
    _annotate(project, {"a": ["사회", "사회"], "b": ["경제", "정치"], "c": ["정치", "정치"]}, users)
    first = run_agreement(project.slug)
    second = run_agreement(project.slug)
    assert first == second and AgreementReport.objects.filter(project=project).count() == 1
    Annotation.objects.filter(item__external_id="b", annotator=users[1]).update(payload={"label": "경제"})
    annotation = Annotation.objects.get(item__external_id="b", annotator=users[1])
    annotation.save()  # a resubmission: same count, newer change
    third = run_agreement(project.slug)
    assert AgreementReport.objects.filter(project=project).count() == 2
    assert third["coefficients"][0]["value"] == pytest.approx(1.0)


# -- structured tasks --------------------------------------------------------------------------------------------


def _structured_project(make_project, make_user, slug: str, task: str, item_payload: dict, answers: list[list[dict]],
                        *, stage: str = "label") -> tuple:
    """Items with the same payload, annotated by len(answers[0]) coders: answers[i][c] is coder c's payload."""
    project = make_project(task, k=len(answers[0]), slug=slug)
    users = [make_user(f"{slug}-c{i}") for i in range(len(answers[0]))]
    for n, row in enumerate(answers):
        item = services.item_create(project=project, payload=item_payload, external_id=f"{slug}-{n}")
        for user, payload in zip(users, row, strict=True):
            if payload is not None:
                Annotation.objects.create(item=item, annotator=user, stage=stage, payload=payload)
    return project, users


def coefficient(report: dict, name: str, level: str = "nominal") -> dict:
    return next(c for c in report["coefficients"] if c["name"] == name and c["level"] == level)


@pytest.mark.django_db
def test_ner_entity_f1_and_character_alpha(make_project, make_user):
    sentence = "홍길동은 서울에 산다"
    full = {"entities": [{"start": 0, "end": 3, "type": "PS"}, {"start": 5, "end": 7, "type": "LC"}]}
    person = {"entities": [{"start": 0, "end": 3, "type": "PS"}]}
    project, _ = _structured_project(make_project, make_user, "ner-agree", "ner", {"sentence": sentence},
                                     [[full, person, full]] * 12)
    report = run_agreement(project.slug)
    f1 = coefficient(report, "pairwise_entity_f1")
    # A–B and B–C: 1 shared span of 2 + 1 → F1 2/3; A–C identical → 1; mean 7/9.
    assert f1["value"] == pytest.approx(7 / 9)
    assert f1["per_type"] == {"PS": 1.0, "LC": pytest.approx(1 / 3)}  # LC: only A–C agree
    # Character tags (O=0, B-PS=1, I-PS=2, B-LC=7, I-LC=8) as reliability data, one column per character.
    tags = {
        "full": [1, 2, 2, 0, 0, 7, 8, 0, 0, 0, 0],
        "person": [1, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0],
    }
    data = np.array([tags["full"] * 12, tags["person"] * 12, tags["full"] * 12], dtype=float)
    alpha = coefficient(report, "krippendorff_alpha")
    assert alpha["unit"] == "character" and alpha["units"] == len(sentence) * 12
    assert alpha["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert report["primary"]["name"] == "krippendorff_alpha"


@pytest.mark.django_db
def test_dp_uas_las_and_alphas(make_project, make_user):
    tokens = [{"index": i + 1, "form": f, "lemma": f, "pos": "NNG"} for i, f in enumerate(["철수가", "밥을", "먹었다"])]
    gold = {"heads": [3, 3, 0], "deprels": ["NP_SBJ", "NP_OBJ", "VP"]}
    label_diff = {"heads": [3, 3, 0], "deprels": ["NP_SBJ", "NP_AJT", "VP"]}
    head_diff = {"heads": [2, 3, 0], "deprels": ["NP_SBJ", "NP_OBJ", "VP"]}
    project, _ = _structured_project(make_project, make_user, "dp-agree", "dp",
                                     {"sentence": "철수가 밥을 먹었다", "tokens": tokens},
                                     [[gold, label_diff, head_diff]] * 10)
    report = run_agreement(project.slug)
    # Pairs: gold–label_diff UAS 1, LAS 2/3; gold–head_diff UAS 2/3, LAS 2/3; label_diff–head_diff UAS 2/3, LAS 1/3.
    assert coefficient(report, "pairwise_uas")["value"] == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)
    assert coefficient(report, "pairwise_las")["value"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)
    heads = np.array([gold["heads"] * 10, label_diff["heads"] * 10, head_diff["heads"] * 10], dtype=float)
    assert coefficient(report, "krippendorff_alpha_heads")["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=heads, level_of_measurement="nominal"))
    assert coefficient(report, "krippendorff_alpha_deprels")["unit"] == "eojeol"


@pytest.mark.django_db
def test_mrc_exact_match_char_f1_and_answerability(make_project, make_user):
    context = "올여름 장마가 17일 제주도에서 시작됐다."
    item = {"title": "장마", "context": context, "question": "장마는 어디서 시작됐나?", "question_type": 1}
    a = {"answer": {"text": "제주도", "start": 11}}
    b = {"answer": {"text": "제주도에서", "start": 11}}
    none = {"answer": None}
    project, _ = _structured_project(make_project, make_user, "mrc-agree", "mrc", item, [[a, b, none]] * 10,
                                     stage="validation")
    report = run_agreement(project.slug)
    # a–b: EM 0, char F1 2·3/(3+5) = 0.75; a–none and b–none: 0 and 0.
    assert coefficient(report, "pairwise_exact_match")["value"] == pytest.approx(0.0)
    assert coefficient(report, "pairwise_char_f1")["value"] == pytest.approx(0.75 / 3)
    assert coefficient(report, "pairwise_char_f1")["per_question_type"] == {"1": pytest.approx(0.25)}
    answerable = np.array([[1] * 10, [1] * 10, [0] * 10], dtype=float)
    assert coefficient(report, "krippendorff_alpha_answerable")["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=answerable, level_of_measurement="nominal"))


@pytest.mark.django_db
def test_dst_joint_goal_and_slot_alpha(make_project, make_user):
    dialogue = {"domains": ["숙소"], "dialogue": [
        {"role": "user", "text": "저렴한 숙소 있나요?"}, {"role": "sys", "text": "지역은요?"},
        {"role": "user", "text": "서울 동쪽이요."}]}
    a = {"states": [["숙소-가격대-저렴"], ["숙소-가격대-저렴", "숙소-지역-서울 동쪽"]]}
    b = {"states": [["숙소-가격대-저렴"], ["숙소-가격대-저렴"]]}
    project, _ = _structured_project(make_project, make_user, "dst-agree", "dst", dialogue, [[a, b]] * 10)
    report = run_agreement(project.slug)
    assert coefficient(report, "pairwise_joint_goal")["value"] == pytest.approx(0.5)
    alpha = coefficient(report, "krippendorff_alpha_slots")
    # Units per item: 2 turns × 2 slots; values (a | b): 저렴|저렴, none|none, 저렴|저렴, 서울 동쪽|none.
    data = np.array([[0, 1, 0, 2] * 10, [0, 1, 0, 1] * 10], dtype=float)
    assert alpha["value"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert set(alpha["per_slot"]) == {"숙소-가격대", "숙소-지역"}
