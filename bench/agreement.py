"""Agreement report timing: ``python -m bench.agreement [--size small|full]``.

Workloads (full size, the issue's targets on the 2-core machine):
- 100,000 items × 5 annotators, nominal labels (tc): the whole report — alpha, Fleiss, pairwise Cohen with
  1,000 bootstrap resamples each, annotator quality with leave-one-out alpha, timeline — in ≤ 3 s;
- 10,000 NER sentences × 3 annotators: character alpha + pairwise entity F1 with bootstrap, ≤ 5 s.

Runs on the configured database (PostgreSQL when ``DATABASE_URL`` is set) in a throw-away test database
created and migrated for the run, so it never touches real data. Generating the data is not timed; each
report is timed after one warm-up as the median of three.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from typing import Any

import numpy as np

SIZES = {"small": {"nominal": 10_000, "ner": 1_000}, "full": {"nominal": 100_000, "ner": 10_000}}
TARGETS = {"nominal": 3.0, "ner": 5.0}
REPEATS = 3
LABELS = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
NER_TYPES = ["PS", "LC", "OG", "DT", "TI", "QT"]


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _project(task: str, slug: str, k: int, annotators: int):
    from annotation import services
    from annotation.models import User

    project = services.project_create(name=slug, slug=slug, task_type=task, created_by=None, annotators_per_item=k)
    users = [User(username=f"{slug}-a{i}", is_imported=True, is_active=False) for i in range(annotators)]
    for user in users:
        user.set_unusable_password()
    User.objects.bulk_create(users)
    return project, list(User.objects.filter(username__startswith=f"{slug}-a").order_by("username"))


def _bulk(items: list, annotations_for) -> None:
    from annotation.models import Annotation, Item

    Item.objects.bulk_create(items, batch_size=5000)
    stored = list(Item.objects.filter(project=items[0].project).order_by("id").values_list("id", flat=True))
    batch: list[Annotation] = []
    for index, item_id in enumerate(stored):
        batch.extend(annotations_for(index, item_id))
        if len(batch) >= 20_000:
            Annotation.objects.bulk_create(batch, batch_size=5000)
            batch = []
    Annotation.objects.bulk_create(batch, batch_size=5000)


def build_nominal(n_items: int, rng: np.random.Generator):
    from annotation.models import Annotation, Item

    project, users = _project("tc", "bench-nominal", 5, 5)
    truth = rng.integers(0, len(LABELS), n_items)
    accuracy = np.array([0.9, 0.85, 0.8, 0.75, 0.6])
    correct = rng.random((n_items, 5)) < accuracy
    noise = rng.integers(0, len(LABELS), (n_items, 5))
    labels = np.where(correct, truth[:, None], noise)
    seconds = rng.gamma(4.0, 3.0, (n_items, 5))
    items = [Item(project=project, external_id=f"n{i}", payload={"title": f"제목 {i}"}, content_hash=f"{i:064x}")
             for i in range(n_items)]
    _bulk(items, lambda i, item_id: [
        Annotation(item_id=item_id, annotator=users[a], stage="label", imported=True,
                   payload={"label": LABELS[labels[i, a]], "second": None, "third": None},
                   seconds_spent=float(seconds[i, a])) for a in range(5)])
    return project


def build_ner(n_items: int, rng: np.random.Generator):
    from annotation.models import Annotation, Item

    project, users = _project("ner", "bench-ner", 3, 3)
    sentence = "홍길동은 2017년 9월 서울에서 삼성전자 주식 5억원을 샀다고 경찰이 밝혔다."
    spans = [(0, 3, "PS"), (5, 13, "DT"), (14, 16, "LC"), (20, 24, "OG"), (28, 31, "QT"), (38, 40, "OG")]

    def annotate(i: int, item_id: int) -> list[Annotation]:
        out = []
        for a in range(3):
            keep = rng.random(len(spans)) < 0.85
            entities = []
            for (start, end, kind), kept in zip(spans, keep, strict=True):
                if not kept:
                    continue
                if rng.random() < 0.1:  # boundary disagreement
                    end = max(start + 1, end - 1)
                if rng.random() < 0.05:
                    kind = NER_TYPES[int(rng.integers(0, len(NER_TYPES)))]
                entities.append({"start": start, "end": end, "type": kind})
            out.append(Annotation(item_id=item_id, annotator=users[a], stage="label", imported=True,
                                  payload={"entities": entities}, seconds_spent=20.0))
        return out

    items = [Item(project=project, external_id=f"s{i}", payload={"sentence": sentence}, content_hash=f"{i:064x}")
             for i in range(n_items)]
    _bulk(items, annotate)
    return project


def measure(name: str, size: str, project, annotations: int, target: float) -> dict[str, Any]:
    """One warm-up report, then the median of ``REPEATS`` (wall and CPU); the cached report is deleted before
    each, so every run computes."""
    from annotation.agreement import services
    from annotation.models import AgreementReport

    AgreementReport.objects.filter(project=project).delete()
    services.report_now(project)
    timings, cpu = [], []
    for _ in range(REPEATS):
        AgreementReport.objects.filter(project=project).delete()
        started, cpu_started = time.perf_counter(), time.process_time()
        report = services.report_now(project)
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    seconds = statistics.median(timings)
    primary = report["primary"]
    return {
        "name": name, "size": size, "database": _vendor(), "items": report["items_counted"],
        "annotations": annotations, "seconds": round(seconds, 3), "runs": [round(t, 3) for t in timings],
        "cpu_seconds": round(statistics.median(cpu), 3), "load_average": round(os.getloadavg()[0], 2),
        "annotations_per_second": round(annotations / seconds), "peak_rss_mb": _peak_rss_mb(),
        "target_seconds": target, "met": seconds <= target,
        "primary": {primary["name"]: primary["value"]}, "bootstrap_resamples": report["bootstrap"]["resamples"],
    }


def _two_versions(project) -> None:
    """The first half of the items annotated under guideline v1, the rest under v2."""
    from annotation.models import Annotation, Guideline, Item

    first = Guideline.objects.get(project=project, version=1)
    second = Guideline.objects.create(project=project, version=2, instructions="v2", ethics="v2", pii="v2")
    ids = Item.objects.filter(project=project).order_by("id").values_list("id", flat=True)
    middle = ids[len(ids) // 2]
    Annotation.objects.filter(item__project=project, item_id__lt=middle).update(guideline=first)
    Annotation.objects.filter(item__project=project, item_id__gte=middle).update(guideline=second)


def _vendor() -> str:
    from django.db import connection

    return connection.vendor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agreement", description=__doc__)
    parser.add_argument("--size", choices=tuple(SIZES), default="small")
    parser.add_argument("--versions", action="store_true",
                        help="record two guideline versions (half the items each), as annotations made in the "
                             "workspace do, so that the report compares them")
    args = parser.parse_args(argv)
    _setup()
    from django.db import connection

    rng = np.random.default_rng(7)
    sizes = SIZES[args.size]
    old_name = connection.settings_dict["NAME"]
    # A database of its own, so a concurrent test run or benchmark never shares (or drops) it.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"goldset_bench_agreement_{os.getpid()}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        suffix = "_versions" if args.versions else ""
        project = build_nominal(sizes["nominal"], rng)
        if args.versions:
            _two_versions(project)
        print(json.dumps(measure(f"agreement_nominal_{sizes['nominal']}x5{suffix}", args.size, project,
                                 sizes["nominal"] * 5, TARGETS["nominal"]), ensure_ascii=False), flush=True)
        project = build_ner(sizes["ner"], rng)
        if args.versions:
            _two_versions(project)
        print(json.dumps(measure(f"agreement_ner_{sizes['ner']}x3{suffix}", args.size, project, sizes["ner"] * 3,
                                 TARGETS["ner"]), ensure_ascii=False), flush=True)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
