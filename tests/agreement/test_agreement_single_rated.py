"""The agreement report without pandas where it needs none, and its numpy parts against what pandas computed.

A project whose items have one annotation each (a corpus imported with its labels, as a release's harness project)
has no coefficient to compute: its report is read and assembled with numpy alone, and it is the report the
general path computes on the empty frame. The report's own parts (one annotation per annotator and item, the
complete items, annotator quality, the timeline) are numpy for every project; they are checked against the pandas
operations they replace, and on a multi-rated project against figures the pandas implementation gave."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest
from django.utils import timezone

from annotation import services
from annotation.agreement import report as report_module
from annotation.agreement.data import _epoch_ns, _latest_per_annotator
from annotation.agreement.lazy import LazyModule
from annotation.agreement.measures.categorical import CategoricalMeasure
from annotation.agreement.services import report_now
from annotation.models import (
    AgreementReport,
    Annotation,
    Assignment,
    AssignmentStatus,
    Flag,
    FlagResolution,
    GoldLabel,
    GoldStatus,
    Item,
    ScreeningStatus,
)
from tests.builders import fresh_python

LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _annotate(project, users, raters_of, *, hours: float):
    """Items with the given annotators each (``raters_of(i)``: indexes into ``users``), made over ``hours``."""
    items = [services.item_create(project=project, payload={"title": f"기사 {i}"}, external_id=f"e{i}")
             for i in range(30)]
    n = 0
    for i, item in enumerate(items):
        for r in raters_of(i):
            seconds = None if (i + r) % 7 == 0 else float((i * 13 + r * 5) % 40 + 1)
            annotation = Annotation.objects.create(item=item, annotator=users[r], stage="label",
                                                   payload={"label": LABELS[(i + r * (i % 2)) % 7]},
                                                   seconds_spent=seconds)
            n += 1
            Annotation.objects.filter(pk=annotation.pk).update(
                created_at=START + timedelta(seconds=hours * 3600 * ((n * 37) % 101) / 101, microseconds=n * 7))
    Flag.objects.create(item=items[0], kind="other", resolution=FlagResolution.OPEN)
    Item.objects.filter(pk=items[1].pk).update(screening_status=ScreeningStatus.DROPPED)
    Assignment.objects.create(item=items[29], annotator=users[0], stage="label", status=AssignmentStatus.SKIPPED)
    for item in items[5:11]:
        GoldLabel.objects.create(item=item, payload={"label": LABELS[0]}, status=GoldStatus.KNOWN, rule="known")
    return items


def _without_times(report):
    return {key: value for key, value in report.items() if key not in ("computed_at", "seconds")}


@pytest.mark.django_db
@pytest.mark.parametrize("hours", [70.0, 0.5])  # the timeline per day, and per so many annotations
def test_a_single_rated_project_is_reported_without_pandas_as_the_general_path_reports_it(
        make_project, make_user, monkeypatch, hours):
    project = make_project("tc", k=3, slug=f"single-{int(hours)}")
    users = [make_user(f"rater{i}") for i in range(4)]
    _annotate(project, users, lambda i: [i % 4], hours=hours)

    def no_pandas(module, attribute):
        raise AssertionError(f"the report asked pandas for {attribute}")

    with monkeypatch.context() as patched:
        patched.setattr(LazyModule, "__getattr__", no_pandas)
        fast = report_now(project)
    assert fast["items_counted"] == 0 and fast["items_excluded"] == {
        "flagged": 2, "skipped": 1, "fewer_than_2_annotations": 27}
    assert [q["items_done"] for q in fast["annotator_quality"]] == [7, 7, 7, 7]
    assert fast["timeline"][-1]["annotations"] == 28

    # the general path: the measure computes on the empty frame
    AgreementReport.objects.all().delete()
    monkeypatch.setattr(CategoricalMeasure, "empty_result", lambda self, schema: None)
    assert _without_times(report_now(project)) == _without_times(fast)


def test_a_fresh_process_loads_the_report_without_pandas():
    # what a Celery worker's pool process does when it starts (annotation.tasks.load_agreement_report)
    code = ("import sys, django; django.setup(); import annotation.agreement.report, annotation.agreement.services; "
            "print('pandas' in sys.modules)")
    assert fresh_python(code) == "False"


# -- a multi-rated project: figures of the pandas implementation (a168abf) -------------------------------------


@pytest.mark.django_db
def test_a_multi_rated_projects_report_keeps_the_figures_pandas_gave(make_project, make_user):
    project = make_project("tc", k=3, slug="multi")
    users = [make_user(f"coder{i}") for i in range(4)]
    _annotate(project, users, lambda i: [r for r in range(4) if (i + r) % 4 != 3][: 1 + i % 3], hours=70.0)
    report = report_now(project)
    assert (report["annotators"], report["items_counted"], report["items_excluded"]) == EXPECTED_COUNTS
    assert [(q["annotator"] - users[0].pk, q["items_done"], q["median_seconds"], q.get("alpha_without"), q["flags"])
            for q in report["annotator_quality"]] == EXPECTED_QUALITY
    assert [(point["at"][:19], point["annotations"], point["items_with_2"], point["items_complete"], point["value"],
             point["ci95"]) for point in report["timeline"]] == EXPECTED_TIMELINE


EXPECTED_COUNTS = (4, 19, {"flagged": 2, "skipped": 0, "fewer_than_2_annotations": 9})
EXPECTED_QUALITY = [
    (0, 21, 21.5, 0.29328621908127206, ["low_gold_accuracy"]),
    (1, 17, 17.5, 0.5765472312703583, ["removal_raises_alpha"]),
    (2, 11, 31.0, 0.4099783080260304, []),
    (3, 8, 34.0, 0.48533724340175954, []),  # 8 items: fewer than MIN_ITEMS_FOR_FLAGS, no flag
]
EXPECTED_TIMELINE = [  # per day in Asia/Seoul
    ("2026-03-01T13:09:30", 4, 0, 0, None, [None, None]),
    ("2026-03-02T14:48:07", 24, 4, 0, 0.26315789473684204, [-0.4736842105263157, 1.0]),
    ("2026-03-03T14:21:58", 43, 15, 2, 0.4529411764705882, [0.10574057177615567, 0.7342392780769151]),
    ("2026-03-04T06:18:24", 57, 19, 10, 0.44903160040774726, [0.15172073502722325, 0.6767174477593914]),
]


# -- the numpy parts against the pandas operations they replace -----------------------------------------------------


def test_nanoseconds_and_their_isoformat_are_those_of_pandas():
    rng = np.random.default_rng(11)
    seconds = np.concatenate([1.7e9 + rng.random(20_000) * 1e8, np.round(1.7e9 + rng.random(2000) * 1e6, 6),
                              np.round(1.7e9 + rng.random(2000) * 1e6, 3), [1.7e9, 0.0, 1.5]])
    expected = pd.to_datetime(seconds, unit="s", utc=True)
    assert _epoch_ns(seconds).tolist() == expected.as_unit("ns").asi8.tolist()
    # microseconds and nanoseconds present or not
    for ns in [*_epoch_ns(seconds[:500]).tolist(), 1_700_000_000_000_000_000, 1_700_000_000_000_000_123,
               1_700_000_000_000_456_000, 1_700_000_000_000_456_789]:
        assert report_module._isoformat(ns) == pd.Timestamp(ns, unit="ns", tz="UTC").isoformat()


def test_the_latest_annotation_per_annotator_and_item_is_pandas_drop_duplicates():
    rng = np.random.default_rng(2)
    items, annotators = rng.integers(0, 50, 3000), rng.integers(100, 110, 3000)
    frame = pd.DataFrame({"item": items, "annotator": annotators})
    expected = frame.drop_duplicates(["item", "annotator"], keep="last").index.to_numpy()
    assert _latest_per_annotator(items, annotators).tolist() == expected.tolist()


def test_annotators_in_the_order_and_with_the_medians_pandas_gives():
    rng = np.random.default_rng(4)
    for n_groups in (1, 5, 80):
        groups = rng.integers(0, n_groups, 2000)
        values = np.where(rng.random(2000) < 0.2, np.nan, rng.integers(0, 30, 2000).astype(float))
        values[groups == 0] = np.nan  # a group with nothing timed
        series = pd.Series(values).groupby(groups).median()
        got = report_module._medians(np.unique(groups, return_inverse=True)[1], values, len(series))
        np.testing.assert_array_equal(np.array(got), series.to_numpy())
        done = pd.Series(np.bincount(groups)).iloc[np.unique(groups)]  # ties: many groups of equal size
        assert report_module._descending(done.to_numpy()).tolist() == done.reset_index(drop=True).sort_values(
            ascending=False).index.tolist()


@pytest.mark.parametrize("zone", ["Asia/Seoul", "America/New_York", "Europe/London", "Australia/Lord_Howe",
                                  "Asia/Kathmandu", "America/St_Johns", "UTC"])
def test_the_timelines_days_are_the_local_days_pandas_gives(zone):
    rng = np.random.default_rng(8)
    # two years of times, with some right around midnight and around the offset changes of the zone
    times = np.sort(np.concatenate([
        rng.integers(1_640_000_000, 1_705_000_000, 3000) * 1_000_000_000 + rng.integers(0, 10**9, 3000),
        (np.arange(1_640_000_000, 1_705_000_000, 3600 * 24 * 7)[:, None] + np.array([-1, 0, 1])).ravel()
        * 1_000_000_000]))
    with timezone.override(ZoneInfo(zone)):
        moments = pd.Series(pd.to_datetime(times, unit="ns", utc=True))
        days = moments.dt.tz_convert(timezone.get_current_timezone()).dt.normalize()
        expected = moments.groupby(days.to_numpy()).size().cumsum().to_numpy()
        assert report_module._day_ends(times).tolist() == expected.tolist()
