"""Property tests: validators and the JSONL importer answer every input with a result or a message.

For every task type, random payloads (arbitrary JSON, and valid annotations with fields replaced by
arbitrary values) are either accepted — and then the accepted payload validates again to itself and is
plain JSON — or rejected with ``PayloadError``; any other exception is a bug. Random JSONL files given
to the importer end in a result: items written, or errors reported with nothing written.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Item
from annotation.task_types import all_task_types, get_task_type
from annotation.task_types.base import PayloadError
from datasets_build.services import items_import

DEMO = Path(__file__).resolve().parents[2] / "demo" / "corpus"
SLUGS = [task.slug for task in all_task_types()]

scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=12)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


def sample(slug: str) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The first demo record of a task type: its item payload and its (stage, annotation) pairs."""
    task = get_task_type(slug)
    parsed = task.parse_record(json.loads((DEMO / f"{slug}.jsonl").open(encoding="utf-8").readline()))
    return parsed.payload, [(a.stage, a.payload) for a in parsed.annotations]


def schema_for(slug: str) -> dict[str, Any]:
    schema = dict(get_task_type(slug).default_schema())
    if slug == "dst":
        schema["ontology"] = json.loads((DEMO / "dst_ontology.json").read_text(encoding="utf-8"))
    return schema


def check(slug: str, payload: Any, stage: str) -> None:
    task = get_task_type(slug)
    item, _ = sample(slug)
    schema = schema_for(slug)
    try:
        accepted = task.validate_annotation(payload, item=item, schema=schema, stage=stage)
    except PayloadError as error:
        assert error.message, "a rejection must say why"
        return
    assert json.loads(json.dumps(accepted, ensure_ascii=False, allow_nan=False)) == accepted
    assert task.validate_annotation(accepted, item=item, schema=schema, stage=stage) == accepted


@pytest.mark.parametrize("slug", SLUGS)
def test_sample_annotations_are_accepted(slug: str) -> None:
    """The generators below start from these, so they must be valid to begin with."""
    _, annotations = sample(slug)
    for stage, payload in annotations:
        check(slug, payload, stage)


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=json_values, stage_index=st.integers(0, 3))
def test_random_payloads_are_accepted_or_rejected_with_a_message(slug: str, payload: Any, stage_index: int) -> None:
    stages = [stage.name for stage in get_task_type(slug).stages]
    check(slug, payload, stages[stage_index % len(stages)])


@pytest.mark.parametrize("slug", SLUGS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_valid_payloads_are_accepted_or_rejected_with_a_message(slug: str, data: st.DataObject) -> None:
    _, annotations = sample(slug)
    if not annotations:
        pytest.skip(f"the {slug} demo record carries no annotation")
    stage, payload = data.draw(st.sampled_from(annotations))
    mutated = json.loads(json.dumps(payload))
    target = mutated
    # Walk a random path into the payload and replace what is there (or add a key).
    for _ in range(data.draw(st.integers(0, 3))):
        if isinstance(target, dict) and target:
            key = data.draw(st.sampled_from(sorted(target)))
            if isinstance(target[key], dict | list) and target[key]:
                target = target[key]
                continue
        elif isinstance(target, list) and target:
            index = data.draw(st.integers(0, len(target) - 1))
            if isinstance(target[index], dict | list) and target[index]:
                target = target[index]
                continue
        break
    value = data.draw(json_values)
    if isinstance(target, dict):
        target[data.draw(st.sampled_from(sorted(target)) if target else st.text(max_size=6))] = value
    elif target:
        target[data.draw(st.integers(0, len(target) - 1))] = value
    check(slug, mutated, stage)


record_values = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**4) | st.text(max_size=30),
                             lambda inner: st.lists(inner, max_size=3)
                             | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
TC_KEYS = ["guid", "title", "label", "predefined_news_category", "url", "date", "annotations", "split"]


_FUZZ_PROJECTS = itertools.count()


@pytest.mark.django_db
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(
    st.fixed_dictionaries({}, optional={key: record_values for key in TC_KEYS}).map(
        lambda r: json.dumps(r, ensure_ascii=False)),
    st.builds(lambda title, label: json.dumps({"title": title, "label": label}, ensure_ascii=False),
              st.text(min_size=1, max_size=40), st.sampled_from(["IT과학", "경제", "사회", "없는라벨", ""])),
    st.text(max_size=40).filter(lambda s: "\n" not in s and "\r" not in s),
    st.just('{"title": "끝이 잘린'),
), max_size=6))
def test_random_jsonl_imports_or_reports_errors(lines: list[str], make_project, tmp_path_factory) -> None:
    project = make_project("tc", slug=f"fuzz-{next(_FUZZ_PROJECTS)}")  # hypothesis may replay an example
    path = tmp_path_factory.mktemp("fuzz") / "random.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = Item.objects.filter(project=project).count()
    result = items_import(project, path, "jsonl", pii="off")
    after = Item.objects.filter(project=project).count()
    if result.errors:
        assert after == before, "a failed import must write nothing"
        for error in result.errors:
            assert error.get("message"), error
    else:
        assert after - before == result.items
    json.dumps(result.as_json(), ensure_ascii=False)
