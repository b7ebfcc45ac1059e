"""Near-duplicate detection: MinHash over character shingles, LSH bands kept in the database.

Exact duplicates are caught by ``Item.content_hash`` (NFKC, collapsed whitespace). Near duplicates —
the same sentence with a word changed, a re-posted review with different punctuation — are found by
MinHash (datasketch) on character 5-grams of the normalised text: the signature is cut into bands, an
item whose band matches an earlier item's band is a candidate, and candidates whose estimated Jaccard
similarity reaches the threshold are recorded as :class:`~datasets_build.models.NearDuplicate` pairs.
Band keys live in :class:`~datasets_build.models.MinHashBand`, so memory does not grow with the project.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from datasketch import LeanMinHash, MinHash
from django.conf import settings

NUM_PERM = 64
BANDS = 16  # 16 bands × 4 rows: pairs at Jaccard 0.8 become candidates with probability > 0.999
ROWS = NUM_PERM // BANDS
SHINGLE = 5
SEED = 1


def threshold() -> float:
    return float(getattr(settings, "GOLDSET_NEAR_DUPLICATE_THRESHOLD", 0.8))


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def shingles(text: str) -> set[bytes]:
    text = normalise(text)
    if len(text) <= SHINGLE:
        return {text.encode("utf-8")}
    return {text[i:i + SHINGLE].encode("utf-8") for i in range(len(text) - SHINGLE + 1)}


def signatures(texts: Iterable[str]) -> list[LeanMinHash]:
    sets = [list(shingles(t)) for t in texts]
    return [LeanMinHash(m) for m in MinHash.bulk(sets, num_perm=NUM_PERM, seed=SEED)]


def band_keys(signature: LeanMinHash) -> list[int]:
    """One signed 63-bit key per band (band number included, so equal values in different bands differ)."""
    values = signature.hashvalues
    keys = []
    for band in range(BANDS):
        chunk = values[band * ROWS:(band + 1) * ROWS].tobytes()
        digest = hashlib.blake2b(band.to_bytes(2, "big") + chunk, digest_size=8).digest()
        keys.append(int.from_bytes(digest, "big", signed=True) >> 1)
    return keys


@dataclass(frozen=True)
class Candidate:
    item_id: int
    other_id: int
    similarity: float


def similarity(a: LeanMinHash, b: LeanMinHash) -> float:
    return float(a.jaccard(b))
