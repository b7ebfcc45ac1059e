"""Write ``demo/corpus/generated/<task>.jsonl``: more demo records for every task type.

The hand-written files beside this script hold 24-44 records per task, too few for a release whose dev
split must have 20 records before its baseline check may pass. This script adds records built from
Korean sentence patterns and small word lists, deterministically (a fixed seed per task, no clock, no
network), so that the committed files can be checked against it (``tests/demo/test_demo.py``):

    python demo/corpus/generate.py          # rewrite the files
    python demo/corpus/generate.py --check  # exit 1 if a committed file differs

Each registered task type's records come from its module in ``generators/`` (``generators/<slug>.py``,
``records(rng)``). The label of every record follows from how it was built (a headline about a match is
스포츠, a hypothesis that negates the premise is a contradiction …), which is the signal the shipped
baselines learn. Every company, venue and place of business is fictional; the only people named are
public historical figures, as in the hand-written files.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "generated"
ROOT = HERE.parents[1]


def generated(task: str) -> str:
    """The JSONL text of the generated file of ``task`` (seeded by the task's slug, so reproducible)."""
    from demo.corpus.generators import records_for

    rng = random.Random(f"goldset-demo-{task}")
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records_for(task)(rng))


def _files() -> Iterator[tuple[Path, str]]:
    from annotation.task_types import slugs

    for task in slugs():
        yield OUT / f"{task}.jsonl", generated(task)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed file differs")
    args = parser.parse_args(argv)
    from demo.corpus import MissingDemoCorpus

    stale = []
    try:
        files = list(_files())
    except MissingDemoCorpus as exc:
        print(exc, file=sys.stderr)
        return 1
    for path, text in files:
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python demo/corpus/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Run as a script, the project's packages must come from this checkout, not an installed copy.
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
