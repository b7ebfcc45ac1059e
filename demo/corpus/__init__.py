"""The demo corpus, per task type by file name: the hand-written ``<slug>.jsonl``, the generated
``generated/<slug>.jsonl`` and its generator ``generators/<slug>.py`` (optionally ``<slug>_ontology.json``).

Demo content, not task knowledge, so it lives here rather than in the task type; a task type the corpus
has nothing for is refused with :class:`MissingDemoCorpus` naming the files to add.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parent


class MissingDemoCorpus(LookupError):
    """A task type the demo corpus has nothing for (``slug``); the message names the files to add."""

    def __init__(self, slug: str, missing: list[str]) -> None:
        super().__init__(f"task type {slug!r} has no demo corpus: add {', '.join(missing)} "
                         "(demo/corpus/README.md says what each file holds)")
        self.slug = slug
        self.missing = missing


def corpus_files(slug: str) -> tuple[Path, Path]:
    """The hand-written and the generated JSONL file of the task type, or :class:`MissingDemoCorpus`."""
    files = (CORPUS / f"{slug}.jsonl", CORPUS / "generated" / f"{slug}.jsonl")
    missing = [f"demo/corpus/{slug}.jsonl"] if not files[0].exists() else []
    if not (CORPUS / "generators" / f"{slug}.py").exists():
        missing.append(f"demo/corpus/generators/{slug}.py defining records(rng)")
    if not files[1].exists():
        missing.append(f"demo/corpus/generated/{slug}.jsonl (python demo/corpus/generate.py writes it)")
    if missing:
        raise MissingDemoCorpus(slug, missing)
    return files
