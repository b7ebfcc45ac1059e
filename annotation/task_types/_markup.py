"""KLUE-NER's markup and tags: ``<text:TYPE>`` in a sentence, IOB2 tags per character, and the spans both stand
for. The NER task type validates with them, the KLUE file reader and writer and the Label Studio export convert
with them; the layers reach them through the registry (``annotation.task_types``), not the NER module."""

from __future__ import annotations

import re
from typing import Any

from ._common import join
from .base import PayloadError

#: KLUE-NER's entity types, in KLUE's order: the NER task type's default labels (the scorer and the baselines
#: read them through the registry), named in the tag errors below.
LABELS = ["PS", "LC", "OG", "DT", "TI", "QT"]

#: An entity type in markup and tags: KLUE's six, or a project's own (upper case, checked against the
#: project's schema when the annotation is validated).
_TYPE = r"[A-Z][A-Z0-9_]*"
#: ``<text:TYPE>``; the text holds no angle brackets, so ``<<레이:PS>>`` marks ``레이``.
_MARKUP = re.compile(r"<([^<>]+?):(" + _TYPE + r")>")
_TAG = re.compile(r"[BI]-" + _TYPE)
#: Markup-like leftovers once the well-formed ``<text:TYPE>`` pairs are taken out: ``<text:TYPE`` not
#: followed by ``>`` and ``:TYPE>`` without its ``<``. A TYPE ends where the letters end, so ``<주소:Seoul``
#: or ``3<5`` are plain text.
_OPEN = re.compile(r"<([^<>]*?):(" + _TYPE + r")(?![A-Za-z0-9_])")
_CLOSE = re.compile(r":(" + _TYPE + r")>")


def parse_markup(markup: str) -> tuple[str, list[dict[str, Any]]]:
    """``<경찰:OG>은`` -> (``경찰은``, [{"start": 0, "end": 2, "type": "OG"}])."""
    parts: list[str] = []
    entities = []
    length = pos = 0
    for match in _MARKUP.finditer(markup):
        before = markup[pos:match.start()]
        parts += [before, match.group(1)]
        start = length + len(before)
        length = start + len(match.group(1))
        entities.append({"start": start, "end": length, "type": match.group(2)})
        pos = match.end()
    parts.append(markup[pos:])
    return "".join(parts), entities


def check_markup_balance(markup: str, field: str) -> None:
    """Refuse a ``<`` … ``:TYPE>`` pair with one side missing, which would otherwise import as plain text
    and lose the entity."""
    pos = 0
    for match in [*_MARKUP.finditer(markup), None]:
        end = len(markup) if match is None else match.start()
        opening, closing = _OPEN.search(markup, pos, end), _CLOSE.search(markup, pos, end)
        if opening and (closing is None or opening.start() <= closing.start()):
            if not opening.group(1):
                raise PayloadError(field, f"empty entity markup '<:{opening.group(2)}>' at position "
                                          f"{opening.start()}; an entity needs its text, as in <text:TYPE>")
            raise PayloadError(field, f"unbalanced entity markup: '<' at position {opening.start()} has no "
                                      f"matching ':{opening.group(2)}>'; write entities as <text:TYPE>")
        if closing:
            raise PayloadError(field, f"unbalanced entity markup: ':{closing.group(1)}>' at position "
                                      f"{closing.start()} has no matching '<'; write entities as <text:TYPE>")
        if match is not None:
            pos = match.end()


def to_markup(sentence: str, entities: list[dict[str, Any]]) -> str:
    parts = []
    pos = 0
    for entity in sorted(entities, key=lambda e: e["start"]):
        start, end = entity["start"], entity["end"]
        parts += [sentence[pos:start], f"<{sentence[start:end]}:{entity['type']}>"]
        pos = end
    parts.append(sentence[pos:])
    return "".join(parts)


def spans_from_tags(chars: list[str], tags: list[Any]) -> list[dict[str, Any]]:
    """IOB2 character tags -> entity spans; a tag that breaks IOB2 is an error naming its position."""
    if len(tags) != len(chars):
        raise PayloadError("tags", f"has {len(tags)} tags for {len(chars)} characters")
    entities: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for i, tag in enumerate(tags):
        if tag == "O":
            current = None
            continue
        if not isinstance(tag, str) or not _TAG.fullmatch(tag):
            raise PayloadError(join("tags", i), f"unknown tag {tag!r}; expected O, B-X or I-X with X an entity "
                                                f"type such as {', '.join(LABELS)}")
        if tag[0] == "B":
            current = {"start": i, "end": i + 1, "type": tag[2:]}
            entities.append(current)
        elif current is None or current["type"] != tag[2:]:
            raise PayloadError(join("tags", i), f"{tag} at character {i} ({chars[i]!r}) does not continue a "
                                                f"{tag[2:]} entity; IOB2 needs B-{tag[2:]} first")
        else:
            current["end"] = i + 1
    return entities


def tags_from_spans(length: int, entities: list[dict[str, Any]]) -> list[str]:
    tags = ["O"] * length
    for entity in entities:
        tags[entity["start"]] = f"B-{entity['type']}"
        for i in range(entity["start"] + 1, entity["end"]):
            tags[i] = f"I-{entity['type']}"
    return tags
