"""Pseudonymize a whole record — item texts, and every offset and quote that points into them.

Which payload fields carry character offsets each task type declares (``TaskType.span_fields``), so a new
task type with offsets is remapped without a change here. Offsets of spans are remapped with the scrub's offset map; a
span that overlapped a replaced value grows to cover the whole replacement, so it keeps pointing at the
same words. Any other copy of a replaced value (a label quoting the text, a meta field) is replaced too,
and a final check refuses the record if a pseudonymized raw value is still anywhere in it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from annotation.task_types import SpanField, get_task_type

from .detectors import LABELS_KO, detect
from .pseudonymize import PiiPolicy, Scrubber, ScrubResult, finding_hash, pii_salt


def _span_fields(task_slug: str) -> tuple[SpanField, ...]:
    return get_task_type(task_slug).declared("span_fields", "span fields")


@dataclass
class ScrubbedRecord:
    payload: dict[str, Any]
    meta: dict[str, Any]
    annotations: list[dict[str, Any]]
    #: Stored per item: field, type, offsets (in the new text), salted hash, action — no raw values.
    findings: list[dict[str, Any]]
    #: Raw values still in the record after scrubbing that should not be (a bug); empty when clean.
    leaks: list[str]


def _text_slots(payload: dict[str, Any], text_fields: tuple[str, ...]) -> list[tuple[str, dict[str, Any], str]]:
    """(field path, container, key) of every annotator-visible string: plain fields, and the ``text`` of each
    turn when a field is a list of turns (a WoS dialogue)."""
    slots = []
    for name in text_fields:
        value = payload.get(name)
        if isinstance(value, str):
            slots.append((name, payload, name))
        elif isinstance(value, list):
            for i, part in enumerate(value):
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    slots.append((f"{name}[{i}].text", part, "text"))
    return slots


def _span_objects(container: dict[str, Any], path: str) -> list[dict[str, Any]]:
    key = path.removesuffix("[]")
    value = container.get(key)
    if path.endswith("[]"):
        return [v for v in value or [] if isinstance(v, dict)]
    return [value] if isinstance(value, dict) else []


def _remap(span: dict[str, Any], spec: SpanField, result: ScrubResult, new_text: str) -> None:
    start = span.get(spec.start)
    if not isinstance(start, int) or isinstance(start, bool):
        return  # the task type reports malformed spans; nothing to remap
    if spec.end is not None:
        end = span.get(spec.end)
        if not isinstance(end, int) or isinstance(end, bool):
            return
        old_end = end + 1 if spec.inclusive else end
    else:
        quote = span.get(spec.quote or "")
        if not isinstance(quote, str):
            return
        old_end = start + len(quote)
    new_start = result.map_offset(start, side="start")
    new_end = result.map_offset(old_end, side="end")
    span[spec.start] = new_start
    if spec.end is not None:
        span[spec.end] = new_end - 1 if spec.inclusive else new_end
    if spec.quote:
        span[spec.quote] = new_text[new_start:new_end]


def _replace_copies(value: Any, replaced: dict[str, str]) -> Any:
    if isinstance(value, str):
        for raw, pseudonym in replaced.items():
            if raw in value:
                value = value.replace(raw, pseudonym)
        return value
    if isinstance(value, list):
        return [_replace_copies(v, replaced) for v in value]
    if isinstance(value, dict):
        return {k: _replace_copies(v, replaced) for k, v in value.items()}
    return value


def _contains(value: Any, raw: str) -> bool:
    if isinstance(value, str):
        return raw in value
    if isinstance(value, list):
        return any(_contains(v, raw) for v in value)
    if isinstance(value, dict):
        return any(_contains(v, raw) for v in value.values())
    return False


def string_leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, string) of every string in a JSON-like value, depth first."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for i, part in enumerate(value):
            yield from string_leaves(part, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, part in value.items():
            yield from string_leaves(part, f"{path}.{key}")


def _meta_findings(scrubber: Scrubber, task_slug: str, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Screen the other fields a record brought along (kept in ``meta`` and exported: a ``url``, a ``reporter``
    column): the scrubber learns their values, and the copy replacement below pseudonymizes them. Span lists
    quoting the text (MRC answers) are left to the offset remapping."""
    spans = {spec.path.removesuffix("[]") for spec in _span_fields(task_slug) if spec.where == "meta"}
    found: list[dict[str, Any]] = []
    for key, value in meta.items():
        if key in spans:
            continue
        if isinstance(value, str):  # most meta values: no walk, and the path only when something is found
            if findings := scrubber.scrub(value).findings:
                path = f"meta.{key}"
                found.extend({"field": path, **f} for f in findings)
            continue
        for path, text in string_leaves(value, f"meta.{key}"):
            found.extend({"field": path, **f} for f in scrubber.scrub(text).findings)
    return found


def scrub_record(
    *, scrubber: Scrubber, task_slug: str, text_fields: tuple[str, ...], payload: dict[str, Any],
    meta: dict[str, Any], annotations: list[dict[str, Any]],
) -> ScrubbedRecord:
    """Pseudonymize one record's texts and carry every offset along. The inputs are not modified."""
    results: dict[str, ScrubResult] = {}
    findings: list[dict[str, Any]] = []
    for field, container, key in _text_slots(payload, text_fields):
        result = scrubber.scrub(container[key])
        results[field] = result
        if result.findings:
            findings.extend({"field": field, **f} for f in result.findings)
    if meta:
        findings.extend(_meta_findings(scrubber, task_slug, meta))
    if not scrubber.replaced:  # nothing replaced (no findings, or detect only): the record stands as it is
        return ScrubbedRecord(payload, meta, annotations, findings, [])
    payload, meta, annotations = copy.deepcopy(payload), copy.deepcopy(meta), copy.deepcopy(annotations)
    for field, container, key in _text_slots(payload, text_fields):
        container[key] = results[field].text
    for spec in _span_fields(task_slug):
        if spec.text_field not in results:
            continue
        result = results[spec.text_field]
        if not result.regions:
            continue
        containers = {"payload": [payload], "meta": [meta], "annotation": annotations}[spec.where]
        for container in containers:
            for span in _span_objects(container, spec.path):
                _remap(span, spec, result, result.text)
    # Copies of replaced values outside the text fields: quotes, meta copies, written hypotheses.
    scrubbed_texts = {field: container[key] for field, container, key in _text_slots(payload, text_fields)}
    payload = _replace_copies(payload, scrubber.replaced)
    for field, container, key in _text_slots(payload, text_fields):
        container[key] = scrubbed_texts[field]
    meta = _replace_copies(meta, scrubber.replaced)
    annotations = _replace_copies(annotations, scrubber.replaced)
    leaks = sorted({raw for raw in scrubber.replaced
                    if _contains(payload, raw) or _contains(meta, raw) or _contains(annotations, raw)})
    return ScrubbedRecord(payload, meta, annotations, findings, leaks)


@dataclass
class ScrubbedWriting:
    #: Per item field, the written text after replacement.
    texts: dict[str, str]
    #: Their findings, ``field`` the item field, offsets in the new text.
    findings: list[dict[str, Any]]
    #: Raw values still in the texts after replacement that should not be (a bug); empty when clean.
    leaks: list[str]


#: A typed placeholder the scrubber wrote (``[전화번호2]``): its type's name and number.
_PLACEHOLDER = re.compile(r"\[(" + "|".join(map(re.escape, LABELS_KO.values())) + r")(\d+)\]")
_PLACEHOLDER_TYPES = {label: pii_type for pii_type, label in LABELS_KO.items()}


def scrub_writing(*, scrubber: Scrubber, text_fields: tuple[str, ...], payload: dict[str, Any],
                  meta: dict[str, Any], findings: list[dict[str, Any]], written: dict[str, str]) -> ScrubbedWriting:
    """Pseudonymize text written into an item already scrubbed (an NLI hypothesis, an MRC question: ``written``,
    item field → text), and only that text: scrubbed again, the item's other texts would have their ``fake``
    pseudonyms taken for values and replaced, their placeholders renumbered and their offsets moved. A value the
    item held before keeps its pseudonym (matched by the stored finding's hash), a new one is numbered after the
    placeholders the item holds, and the item's own pseudonyms copied into the text are left as they are. The
    item's findings of the fields being written (an earlier version of the text) do not count."""
    stored = {path: container[key] for path, container, key in _text_slots(payload, text_fields)
              if path not in written}
    stored.update(string_leaves(meta, "meta"))
    pseudonyms: dict[tuple[str, str], str] = {}
    for finding in findings:
        text = stored.get(finding.get("field", ""))
        start, end = finding.get("start"), finding.get("end")
        if (finding.get("action") == "pseudonymized" and text is not None and isinstance(start, int)
                and isinstance(end, int) and 0 <= start < end <= len(text)):
            pseudonyms[(finding["type"], finding["hash"])] = text[start:end]
    counters: dict[str, int] = {}
    for text in stored.values():
        for match in _PLACEHOLDER.finditer(text):
            pii_type = _PLACEHOLDER_TYPES[match[1]]
            counters[pii_type] = max(counters.get(pii_type, 0), int(match[2]))
    scrubber.carry_on(pseudonyms, counters)
    texts: dict[str, str] = {}
    found: list[dict[str, Any]] = []
    for field, text in written.items():
        result = scrubber.scrub(text)
        texts[field] = result.text
        found.extend({"field": field, **f} for f in result.findings)
    leaks = sorted({raw for raw in scrubber.replaced if any(raw in text for text in texts.values())})
    return ScrubbedWriting(texts, found, leaks)


#: A KLUE-style guid (``klue-nli-v1_dev_00002``, ``ynat-v1_train_01234``, ``wos-v1_dev_00000``): letters, a version
#: and a short serial number hold no PII, so the detectors need not look at the most common guids.
_PLAIN_GUID = re.compile(r"[a-z]+(?:-[a-z]+)*-v\d+(?:\.\d+)?_[a-z]+_\d{1,6}(?:_\d{1,6})?")
#: What every PII type needs somewhere: an ``@`` (e-mail), ``.``, ``:`` or ``/`` (URL, IP), Hangul (names,
#: addresses, plates, the cues of accounts and licences), a passport's letter and first three digits, or a run
#: of nine or more digits and separators: every other number detector's finding holds at least nine digits
#: (detectors._NUMBER_DETECTORS) in one run of them (its separators are these, or a ``.``). An identifier
#: without any (``bench-000123``, a serial such as ``b-0012345``, ``g-17``) skips the detectors.
_MAYBE_PII = re.compile(r"[@.:/\uac00-\ud7a3]|\d[\d\s()\u2013-]{8,}|[MSRODG]\d{3}")


def scrub_identifier(value: str, policy: PiiPolicy, field: str = "guid") -> tuple[str, list[dict[str, Any]]]:
    """Screen an identifier a corpus brings (its guid) under ``policy``: each PII value found is, under
    ``pseudonymize``, replaced by ``<type>-<salted hash>`` — not a numbered placeholder, which would make two
    records' identifiers equal —, kept under ``detect``; the findings are returned like a text's."""
    types = policy.active_types
    if not value or not types or _PLAIN_GUID.fullmatch(value) or not _MAYBE_PII.search(value):
        return value, []
    findings = detect(value, types)
    if not findings:
        return value, []
    salt = pii_salt()
    parts: list[str] = []
    stored: list[dict[str, Any]] = []
    cursor = length = 0
    for finding in findings:
        digest = finding_hash(finding.type, finding.value, salt)
        pseudonymize = policy.action(finding.type) == "pseudonymize"
        replacement = f"{finding.type}-{digest[:12]}" if pseudonymize else finding.value
        parts.append(value[cursor:finding.start])
        length += finding.start - cursor
        stored.append({"field": field, "type": finding.type, "start": length, "end": length + len(replacement),
                       "hash": digest, "action": "pseudonymized" if pseudonymize else "detected"})
        parts.append(replacement)
        length += len(replacement)
        cursor = finding.end
    parts.append(value[cursor:])
    return "".join(parts), stored
