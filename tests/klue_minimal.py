"""Test-only stand-in for ``datasets_build.klue_formats`` (installed only while that module is absent).

It reads and writes just enough of the KLUE layouts (FORMATS.md) to drive the scorer end to end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

JSON_TASKS = {"tc", "sts", "nli", "re", "dst"}


def _blocks(path: Path) -> Iterator[tuple[str, list[list[str]]]]:
    header, rows = None, []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("## ") and "\t" in line:
            header, rows = line, []
        elif line.startswith("##"):
            continue
        elif line == "":
            if header is not None:
                yield header, rows
            header = None
        else:
            rows.append(line.split("\t"))
    if header is not None:
        yield header, rows


def iter_klue_records(path: Path, task_slug: str) -> Iterator[tuple[int, dict[str, Any]]]:
    path = Path(path)
    if task_slug in JSON_TASKS:
        yield from enumerate(json.loads(path.read_text(encoding="utf-8")))
    elif task_slug == "mrc":
        questions = []
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    questions.append({**qa, "context": paragraph["context"], "title": article.get("title")})
        yield from enumerate(questions)
    elif task_slug == "ner":
        for n, (header, rows) in enumerate(_blocks(path)):
            name, markup = header[3:].split("\t", 1)
            chars = [r[0] for r in rows]
            yield n, {"guid": name.rsplit("-", 1)[0], "sentence": "".join(chars), "markup": markup,
                      "chars": chars, "tags": [r[1] for r in rows]}
    elif task_slug == "dp":
        for n, (header, rows) in enumerate(_blocks(path)):
            name, sentence = header[3:].split("\t", 1)
            yield n, {"guid": name.rsplit("_", 1)[0], "sentence": sentence, "index": [int(r[0]) for r in rows],
                      "word_form": [r[1] for r in rows], "lemma": [r[2] for r in rows], "pos": [r[3] for r in rows],
                      "head": [int(r[4]) for r in rows], "deprel": [r[5] for r in rows]}
    else:
        raise ValueError(task_slug)


def write_tsv(path: Path, task_slug: str, records: list[dict[str, Any]]) -> None:
    """NER/DP records back to TSV (JSON tasks are written with json.dumps by the tests)."""
    lines = ["## test file"] * 5
    for r in records:
        if task_slug == "ner":
            lines.append(f"## {r['guid']}-test\t{r['markup']}")
            lines += [f"{c}\t{t}" for c, t in zip(r["chars"], r["tags"], strict=True)]
        else:
            lines.append(f"## {r['guid']}_test\t{r['sentence']}")
            lines += ["\t".join(map(str, row)) for row in
                      zip(r["index"], r["word_form"], r["lemma"], r["pos"], r["head"], r["deprel"], strict=True)]
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
