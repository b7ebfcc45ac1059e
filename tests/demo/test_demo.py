"""The `demo` command seeds a usable Goldset through the real pipeline (a subset of tasks, for speed)."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation import selectors
from annotation.models import Annotation, GoldLabel, GoldStatus, Project, Role, User
from annotation.task_types import TaskType, register, slugs, unregister
from demo.corpus import MissingDemoCorpus, corpus_files, generate
from demo.corpus.generators import records_for
from exports.models import Release

CORPUS = Path(__file__).resolve().parents[2] / "demo" / "corpus"

pytestmark = pytest.mark.django_db


def test_demo_seeds_users_projects_annotations_and_a_release(tmp_path):
    out = io.StringIO()
    call_command("demo", "--no-serve", "--json", "--tasks", "tc,nli", "--out", str(tmp_path), stdout=out)
    summary = json.loads(out.getvalue())
    assert set(summary["users"]) >= {"manager", "maintainer", "annotator1", "annotator2", "annotator3"}
    rows = {row["task_type"]: row for row in summary["projects"]}
    assert set(rows) == {"tc", "nli"}
    assert rows["tc"]["imported"] == {"items": 138, "annotations": 138}  # 40 hand-written + 98 generated
    assert rows["tc"]["simulated_annotations"] > 0
    assert rows["tc"]["agreement"][0]["name"] == "krippendorff_alpha"
    assert rows["tc"]["release"]["status"] == "passed"
    assert (tmp_path / "demo-tc-0.1.0" / "SHA256SUMS").is_file()
    # The TC project shows a budget by split: splits given before annotation, train items one annotator (a seeded
    # tenth three), dev and test three (the corpus's own label is one of them); its release keeps those splits and
    # records each record's k.
    tc = Project.objects.get(slug="demo-tc")
    per_item = Counter(Annotation.objects.filter(item__project=tc).values_list("item__split", "item_id"))
    by_split = {split: Counter(n for (s, _item), n in per_item.items() if s == split) for split in ("train", "dev")}
    assert by_split["train"][1] > by_split["train"][3] > 0 and set(by_split["train"]) <= {1, 3}
    assert set(by_split["dev"]) <= {1, 2, 3} and by_split["dev"][3] > 0  # a few left for the people trying it
    manifest = json.loads((tmp_path / "demo-tc-0.1.0" / "manifest.json").read_text())
    assert manifest["annotators"]["budget"]["splits"] == {"train": 1, "dev": 3, "test": 3}
    assert set(manifest["annotators"]["budget"]["items_by_k"]["train"]) == {"1", "3"}
    assert (tmp_path / "demo-tc-0.1.0" / "annotators_per_item.csv").read_text().startswith("guid,split,k\n")

    project = Project.objects.get(slug="demo-tc")
    guideline = selectors.current_guideline(project)
    assert guideline.version == 1 and guideline.ethics.strip() and guideline.pii.strip()
    annotator = User.objects.get(username="annotator1")
    assert annotator.check_password("goldset-demo")
    assert selectors.role_in_project(annotator, project) == Role.ANNOTATOR
    # The people trying the demo still have work waiting in every seeded project.
    assert selectors.annotator_progress(project, annotator)["remaining"] > 0
    nli = Project.objects.get(slug="demo-nli")
    assert selectors.eligible_items(nli, annotator, "writing").exists()  # premises waiting for a hypothesis
    assert Annotation.objects.filter(item__project=nli, stage="validation", imported=False).exists()

    # Running it again is harmless: existing projects are kept as they are.
    again = io.StringIO()
    call_command("demo", "--no-serve", "--json", "--tasks", "tc", "--out", str(tmp_path), stdout=again)
    assert json.loads(again.getvalue())["projects"][0]["note"] == "already seeded"


def test_demo_builds_eight_releases_that_pass_with_a_dev_split_of_twenty(tmp_path):
    out = io.StringIO()
    call_command("demo", "--no-serve", "--out", str(tmp_path), stdout=out)
    printed = out.getvalue().splitlines()

    releases = {r.project.task_type: r for r in Release.objects.select_related("project")}
    assert set(releases) == {"tc", "sts", "nli", "ner", "re", "dp", "mrc", "dst"}
    for task, release in releases.items():
        check = release.baseline_check
        assert release.status == "passed", (task, check)
        assert check["passed"] and check["n_dev"] >= 20, (task, check)
        assert release.split_counts["dev"] >= 20
        primary = check["primary"]
        assert check["metrics"][primary] > (check["trivial"][primary] or 0), (task, check)
        # one summary line per project: items, alpha, the release's status and its check
        line = next(line for line in printed if line.startswith(f"demo-{task}: "))
        budget = "; annotators per item by split: train 1, dev 3, test 3" if task == "tc" else ""
        assert re.fullmatch(rf"demo-{task}: \d+ items, α (0|1)\.\d\d, release 0\.1\.0 passed \(dev {check['n_dev']}: "
                            rf"{primary} [\d.]+ vs trivial ([\d.]+|n/a)\){re.escape(budget)}", line), line
    # Each demo release loads as users load a folder (issue 35): the card is README.md with its configs.
    import datasets

    for task, release in releases.items():
        loaded = datasets.load_dataset(release.out_dir, cache_dir=str(tmp_path / "cache"))
        assert {split: len(rows) for split, rows in loaded.items()} == {
            split: n for split, n in release.split_counts.items() if n}, task
    # MRC gold resolves: three simulated validators answer every question they do not leave to people
    mrc = Project.objects.get(slug="demo-mrc")
    assert GoldLabel.objects.filter(item__project=mrc, status=GoldStatus.RESOLVED).count() >= 100
    assert printed[-2] == "Goldset demo is ready: 8 release(s) built and passed."
    assert printed[-1].startswith("Sign in with password 'goldset-demo' as: manager (manager)")


def test_generated_corpus_files_are_what_the_generator_writes():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(CORPUS / "generate.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("slug", slugs())
def test_every_registered_task_type_has_a_demo_corpus(slug):
    """Found by the task type's slug: the hand-written file, the generated one and its generator."""
    handwritten, generated = corpus_files(slug)
    assert handwritten.read_text(encoding="utf-8").strip() and generated.read_text(encoding="utf-8").strip()
    assert callable(records_for(slug))


class _NoDemo(TaskType):
    slug = "nodemo"
    klue_name = "NoDemo"
    title = "No demo"
    text_fields = ("text",)


@pytest.fixture
def no_demo():
    register(_NoDemo())
    yield "nodemo"
    unregister("nodemo")


def test_a_task_type_without_a_demo_corpus_is_refused_naming_the_files_to_add(no_demo, capsys):
    with pytest.raises(CommandError, match="task type 'nodemo' has no demo corpus") as refused:
        call_command("demo", "--no-serve", "--tasks", no_demo)
    for path in ("demo/corpus/nodemo.jsonl", "demo/corpus/generators/nodemo.py", "demo/corpus/generated/nodemo.jsonl"):
        assert path in str(refused.value)
    assert not Project.objects.exists()
    with pytest.raises(MissingDemoCorpus, match=re.escape("demo/corpus/generators/nodemo.py defining records")):
        records_for(no_demo)
    assert generate.main(["--check"]) == 1
    assert "task type 'nodemo' has no demo corpus" in capsys.readouterr().err


def test_demo_rejects_unknown_task():
    with pytest.raises(CommandError, match="unknown task type"):
        call_command("demo", "--no-serve", "--tasks", "pos")
