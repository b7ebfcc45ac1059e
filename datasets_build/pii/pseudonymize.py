"""Replace PII findings with consistent pseudonyms and keep a map from old to new offsets.

One :class:`Scrubber` serves one document (an item with all its text fields and labels), so the same
phone number gets the same pseudonym everywhere in the item. Replacements are typed placeholders
(``[전화번호1]``, the default, which the guideline templates describe) or format-preserving fake values
(``replacement: "fake"``, Faker ``ko_KR`` seeded by the finding's hash, so re-imports are stable).
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import random
import string
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from django.conf import settings

from .detectors import DEFAULT_POLICY, LABELS_KO, PII_TYPES, Finding, detect

if TYPE_CHECKING:
    from annotation.project_settings import PiiChoices

ACTIONS = ("pseudonymize", "detect", "off")
REPLACEMENTS = ("placeholder", "fake")


@dataclass(frozen=True)
class PiiPolicy:
    """What to do with each PII type, and how replacements look."""

    actions: dict[str, str]
    replacement: str = "placeholder"

    @cached_property
    def active_types(self) -> frozenset[str]:
        return frozenset(t for t, action in self.actions.items() if action != "off")

    def action(self, pii_type: str) -> str:
        return self.actions.get(pii_type, "off")


def policy_choices() -> PiiChoices:
    """What a project's settings page offers for its PII option: the PII types, the actions, the replacements,
    each type's name in the reader's language and the default action per type (registered with
    ``annotation.project_settings.pii_policy_register`` when the app is ready)."""
    from ..screening.highlight import SPAN_NAMES

    return PII_TYPES, ACTIONS, REPLACEMENTS, {t: str(SPAN_NAMES.get(t, t)) for t in PII_TYPES}, dict(DEFAULT_POLICY)


def resolve_policy(options: dict[str, Any] | None, override: str | None = None) -> PiiPolicy:
    """The policy from a project's ``options["pii"]`` (type → action, plus ``replacement``), defaults for
    the types it leaves out, and a per-import ``override`` that applies one action to every type."""
    configured = dict((options or {}).get("pii") or {})
    replacement = str(configured.pop("replacement", "placeholder"))
    if replacement not in REPLACEMENTS:
        raise ValueError(f"unknown PII replacement {replacement!r}; expected one of {', '.join(REPLACEMENTS)}")
    actions = dict(DEFAULT_POLICY)
    for pii_type, action in configured.items():
        if pii_type not in PII_TYPES:
            raise ValueError(f"unknown PII type {pii_type!r} in the project's pii options")
        if action not in ACTIONS:
            raise ValueError(f"unknown PII action {action!r} for {pii_type}; expected one of {', '.join(ACTIONS)}")
        actions[pii_type] = action
    if override is not None:
        if override not in ACTIONS:
            raise ValueError(f"unknown PII action {override!r}; expected one of {', '.join(ACTIONS)}")
        actions = dict.fromkeys(PII_TYPES, override)
    return PiiPolicy(actions=actions, replacement=replacement)


def pii_salt() -> bytes:
    """The salt of stored finding hashes: ``GOLDSET_PII_SALT``, or one derived from SECRET_KEY."""
    configured = settings.GOLDSET_PII_SALT or ""
    if configured:
        return configured.encode("utf-8")
    return hashlib.sha256(b"goldset-pii-salt:" + settings.SECRET_KEY.encode("utf-8")).digest()


def finding_hash(pii_type: str, value: str, salt: bytes | None = None) -> str:
    """A salted hash of a raw value: equal values can be counted and matched, never read back. ``salt`` is
    :func:`pii_salt`'s, passed in by callers that hash many values (reading settings costs more than hashing)."""
    normalised = "".join(value.split()).lower()
    return hmac.digest(salt or pii_salt(), f"{pii_type}:{normalised}".encode(), "sha256")[:16].hex()


@dataclass
class ScrubResult:
    """The text after replacement, the findings (no raw values) and the offset map."""

    text: str
    findings: list[dict[str, Any]]
    #: Replaced regions as (old_start, old_end, new_start, new_end), in text order.
    regions: list[tuple[int, int, int, int]] = field(default_factory=list)

    def map_offset(self, position: int, *, side: str = "start") -> int:
        """Where an old offset lands in the new text. A boundary inside a replaced region snaps to the
        replacement's start (``side="start"``) or end (``side="end"``), so a span keeps covering it."""
        index = bisect.bisect_right([r[0] for r in self.regions], position) - 1
        if index < 0:
            return position
        old_start, old_end, new_start, new_end = self.regions[index]
        if position >= old_end:
            return position + (new_end - old_end)
        if position == old_start:
            return new_start
        return new_start if side == "start" else new_end


class Scrubber:
    """Detects and pseudonymizes PII in the texts of one document, consistently."""

    def __init__(self, policy: PiiPolicy, *, single_words: bool = False) -> None:
        self.policy = policy
        #: The text is split into words that labels point at (KLUE-DP eojeol): a value spanning several
        #: words is only detected (flagged), and replacements contain no spaces, so word counts stay.
        self.single_words = single_words
        self._pseudonyms: dict[tuple[str, str], str] = {}
        self._counters: dict[str, int] = {}
        #: Raw value → pseudonym for every replaced value, to scrub copies of it elsewhere in the record.
        self.replaced: dict[str, str] = {}
        #: Raw values found but kept (policy ``detect``), to check nothing else leaks them.
        self.detected_values: set[str] = set()
        self._salt: bytes | None = None
        #: Hash per (type, value): a long text repeats its names and numbers.
        self._digests: dict[tuple[str, str], str] = {}
        #: Pseudonyms the document already holds (:meth:`carry_on`): a ``fake`` one looks like a value.
        self._held: frozenset[str] = frozenset()

    def carry_on(self, pseudonyms: dict[tuple[str, str], str], counters: dict[str, int]) -> None:
        """Go on scrubbing a document scrubbed before, in new text only (a hypothesis written for an item): a value
        it replaced before ((type, hash) → pseudonym) keeps its pseudonym, new values are numbered after the
        placeholders it holds (``counters``: type → highest number), and its pseudonyms are left as they are."""
        self._pseudonyms.update(pseudonyms)
        for pii_type, highest in counters.items():
            self._counters[pii_type] = max(self._counters.get(pii_type, 0), highest)
        self._held = frozenset(pseudonyms.values())

    def scrub(self, text: str) -> ScrubResult:
        types = self.policy.active_types
        findings = detect(text, types) if types else []
        if findings and self._held:
            findings = [finding for finding in findings if finding.value not in self._held]
        if not findings:  # the common case: nothing to replace, remember or map
            return ScrubResult(text, [], [])
        parts: list[str] = []
        stored: list[dict[str, Any]] = []
        regions: list[tuple[int, int, int, int]] = []
        cursor = 0
        length = 0
        for finding in findings:
            action = self.policy.action(finding.type)
            if self.single_words and any(ch.isspace() for ch in finding.value):
                action = "detect"
            parts.append(text[cursor:finding.start])
            length += finding.start - cursor
            digest = self._digest(finding)
            if action == "pseudonymize":
                replacement = self._pseudonym(finding, digest)
                self.replaced[finding.value] = replacement
            else:
                replacement = finding.value
                self.detected_values.add(finding.value)
            new_start = length
            parts.append(replacement)
            length += len(replacement)
            cursor = finding.end
            stored.append({"type": finding.type, "start": new_start, "end": length, "hash": digest,
                           "action": "pseudonymized" if action == "pseudonymize" else "detected"})
            if replacement != finding.value:
                regions.append((finding.start, finding.end, new_start, length))
        parts.append(text[cursor:])
        return ScrubResult(text="".join(parts), findings=stored, regions=regions)

    def _digest(self, finding: Finding) -> str:
        key = (finding.type, finding.value)
        digest = self._digests.get(key)
        if digest is None:
            if self._salt is None:
                self._salt = pii_salt()
            digest = self._digests[key] = finding_hash(finding.type, finding.value, self._salt)
        return digest

    def _pseudonym(self, finding: Finding, digest: str) -> str:
        key = (finding.type, digest)
        if key not in self._pseudonyms:
            if self.policy.replacement == "fake":
                value = fake_value(finding, random.Random(digest))
            else:
                self._counters[finding.type] = self._counters.get(finding.type, 0) + 1
                value = f"[{LABELS_KO[finding.type]}{self._counters[finding.type]}]"
            self._pseudonyms[key] = "".join(value.split()) if self.single_words else value
        return self._pseudonyms[key]


def _reshape(value: str, rng: random.Random) -> str:
    """The same shape with other characters: digits stay digits, letters letters, separators stay."""
    out = []
    for ch in value:
        if ch.isdigit():
            out.append(rng.choice(string.digits))
        elif ch in string.ascii_uppercase:
            out.append(rng.choice(string.ascii_uppercase))
        elif ch in string.ascii_lowercase:
            out.append(rng.choice(string.ascii_lowercase))
        else:
            out.append(ch)
    return "".join(out)


def fake_value(finding: Finding, rng: random.Random) -> str:
    """A typed, format-preserving fake value (Faker ko_KR for names, addresses and e-mails)."""
    from faker import Faker

    faker = Faker("ko_KR")
    faker.seed_instance(rng.getrandbits(32))
    if finding.type == "person":
        return faker.last_name() + faker.first_name()[: max(1, len(finding.value) - 1)]
    if finding.type == "address":
        return faker.road_address()
    if finding.type == "email":
        return f"{faker.user_name()}@example.com"
    if finding.type == "url":
        return f"https://example.com/~{faker.user_name()}"
    if finding.type == "phone" and finding.value.lstrip("(").startswith("01"):
        # Keep it a mobile number: the 01x prefix stays, the subscriber digits change.
        return finding.value[:3] + _reshape(finding.value[3:], rng)
    return _reshape(finding.value, rng)
