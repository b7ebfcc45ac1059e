"""Near-duplicate detection: MinHash over character shingles, LSH bands kept in the database.

Exact duplicates are caught by ``Item.content_hash`` (NFKC, collapsed whitespace). Near duplicates —
the same sentence with a word changed, a re-posted review with different punctuation — are found by
MinHash (datasketch) on character 5-grams of the normalised text: the signature is cut into bands, an
item whose band matches an earlier item's band is a candidate, and candidates whose estimated Jaccard
similarity reaches the threshold are recorded as :class:`~datasets_build.models.NearDuplicate` pairs.
Band keys live in :class:`~datasets_build.models.MinHashBand`, so memory does not grow with the project.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections.abc import Iterable

import numpy as np
from datasketch import LeanMinHash, MinHash
from django.conf import settings

NUM_PERM = 64
#: 10 bands × 6 rows (of the 64 values; all 64 estimate the similarity): a pair at Jaccard 0.8 becomes a
#: candidate with probability 0.95, at 0.85 with 0.99, at 0.5 with 0.15 — ten index rows per item.
BANDS = 10
ROWS = 6
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


def _hash32(data: bytes) -> int:
    # CRC-32 is computed in C; MinHash only needs the shingles spread, then permutes them itself.
    return zlib.crc32(data)


def signatures(texts: Iterable[str]) -> list[LeanMinHash]:
    sets = [list(shingles(t)) for t in texts]
    return [LeanMinHash(m) for m in MinHash.bulk(sets, num_perm=NUM_PERM, seed=SEED, hashfunc=_hash32)]


_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                 0x27D4EB2F165667C5, 0xFF51AFD7ED558CCD], dtype=np.uint64)


def band_keys(signature: LeanMinHash) -> list[int]:
    """One signed 63-bit key per band (band number mixed in, so equal values in different bands differ)."""
    bands = signature.hashvalues[:BANDS * ROWS].astype(np.uint64).reshape(BANDS, ROWS)
    with np.errstate(over="ignore"):
        mixed = np.bitwise_xor.reduce(bands * _MIX, axis=1) ^ (np.arange(BANDS, dtype=np.uint64) * _MIX[0])
    return [int(k) for k in (mixed >> np.uint64(1)).astype(np.int64)]


def similarity(a: LeanMinHash, b: LeanMinHash) -> float:
    return float(a.jaccard(b))
