"""Korean PII detection and pseudonymization (see docs/pii.md)."""

from .detectors import DEFAULT_POLICY, LABELS_KO, PII_TYPES, Finding, detect
from .pseudonymize import PiiPolicy, Scrubber, ScrubResult, finding_hash, resolve_policy

__all__ = ["DEFAULT_POLICY", "LABELS_KO", "PII_TYPES", "Finding", "PiiPolicy", "ScrubResult", "Scrubber", "detect",
           "finding_hash", "resolve_policy"]
