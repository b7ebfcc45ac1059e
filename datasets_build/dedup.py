"""Near-duplicate detection: MinHash over character shingles, LSH bands kept in the database.

Exact duplicates are caught by ``Item.content_hash`` (NFKC, collapsed whitespace). Near duplicates —
the same sentence with a word changed, a re-posted review with different punctuation — are found by
MinHash (datasketch's affine32 scheme, computed for a whole batch with numpy) on character 5-grams of
the normalised text: the signature is cut into bands, an item whose band matches an earlier item's band
is a candidate, and candidates whose estimated Jaccard similarity reaches the threshold are recorded as
:class:`~datasets_build.models.NearDuplicate` pairs.
Band keys live in :class:`~datasets_build.models.MinHashBand`, so memory does not grow with the project.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator

import numpy as np
from django.conf import settings

NUM_PERM = 64
#: 10 bands × 6 rows (of the 64 values; all 64 estimate the similarity): a pair at Jaccard 0.8 becomes a
#: candidate with probability 0.95, at 0.85 with 0.99, at 0.5 with 0.15 — ten index rows per item.
BANDS = 10
ROWS = 6
SHINGLE = 5
SEED = 1


def threshold() -> float:
    return float(settings.GOLDSET_NEAR_DUPLICATE_THRESHOLD)


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def shingles(text: str) -> set[bytes]:
    text = normalise(text)
    if len(text) <= SHINGLE:
        return {text.encode("utf-8")}
    return {text[i:i + SHINGLE].encode("utf-8") for i in range(len(text) - SHINGLE + 1)}


def _affine32_permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of datasketch's default "affine32" scheme (``MinHash(num_perm, seed).permutations``: odd
    multipliers and offsets drawn from ``RandomState(seed)``). Drawn here because importing datasketch imports
    its LSH and, through it, scipy: a second of CPU in every process that imports this module."""
    draw = np.random.RandomState(seed)
    a = draw.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    return a, draw.randint(0, 1 << 32, num_perm, dtype=np.uint32)


#: Signatures computed with these equal ``MinHash(num_perm=NUM_PERM, seed=SEED, hashfunc=zlib.crc32)``'s
#: (tests/datasets_build/test_dedup.py checks it).
_A, _B = _affine32_permutations(NUM_PERM, SEED)


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, which the affine32 scheme applies to every input hash."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def _crc32_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> np.uint32(1)) ^ np.uint32(0xEDB88320), table >> np.uint32(1))
    return table.astype(np.uint32)


#: zlib's CRC-32 (reflected polynomial 0xEDB88320), a byte at a time.
_CRC_TABLE = _crc32_table()


#: Shingles hashed and permuted at a time: a piece's permuted values are NUM_PERM × this × 4 bytes (16 MiB),
#: whatever the length of the texts. A batch of KLUE texts (a few hundred characters each) is one piece.
PIECE_SHINGLES = 1 << 16
#: A window of a long text holds this many shingles' characters.
_WINDOW = PIECE_SHINGLES + SHINGLE - 1
#: Characters of a long text normalised at a time, cut before an ASCII whitespace character: nothing composes
#: with it under NFKC, lower-casing does not look across it, and whitespace is collapsed on both sides of it,
#: so the parts give what the whole text gives.
_NORMALISE_CHARS = 1 << 20
_CUT = re.compile(r"[ \t\n\r\f\v]")


def _normalised_parts(text: str) -> Iterator[str]:
    """:func:`normalise` of ``text`` in parts that, joined, are ``normalise(text)``: a long text is normalised a
    part at a time, never as one list of its words."""
    if len(text) <= _NORMALISE_CHARS:
        yield normalise(text)
        return
    start, earlier = 0, False
    while start < len(text):
        cut = _CUT.search(text, start + _NORMALISE_CHARS) if len(text) - start > _NORMALISE_CHARS else None
        end = cut.start() if cut else len(text)
        if part := normalise(text[start:end]):
            yield " " + part if earlier else part  # the cut was whitespace between two words
            earlier = True
        start = end


def _windows(text: str) -> Iterator[str]:
    """Windows of ``normalise(text)`` whose shingles are together the text's, each once: at most PIECE_SHINGLES
    a window, consecutive windows overlapping by SHINGLE - 1 characters. A text of at most _WINDOW characters
    is one window, so the rule for texts of SHINGLE characters or fewer (one shingle, the text) holds."""
    buffer = ""
    for part in _normalised_parts(text):
        buffer += part
        pos = 0
        while len(buffer) - pos > _WINDOW:
            yield buffer[pos:pos + _WINDOW]
            pos += PIECE_SHINGLES
        buffer = buffer[pos:]
    yield buffer  # after a window, SHINGLE characters or more: the shingles the last window did not reach


def _shingle_hashes(normalised: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """CRC-32 of every shingle of every (normalised) text (repeats included: they do not change a minimum), and
    where each text's shingles start. The same values as ``map(zlib.crc32, shingles(text))``, computed for
    all shingles at once, a byte position at a time: slicing, encoding and hashing each shingle in Python
    cost more than the rest of the MinHash (docs/performance.md)."""
    lengths = np.fromiter(map(len, normalised), dtype=np.int64, count=len(normalised))
    # A text of SHINGLE characters or fewer is one shingle, the whole text (possibly empty).
    counts = np.maximum(lengths - SHINGLE + 1, 1)
    offsets = np.cumsum(counts) - counts
    encoded = "".join(normalised).encode("utf-8")
    data = np.frombuffer(encoded + bytes(4 * SHINGLE), dtype=np.uint8)  # padded: reads past a short end
    # Byte offset of every character (continuation bytes are 10xxxxxx), and of the end.
    char_at = np.append(np.flatnonzero((data[:len(encoded)] & 0xC0) != 0x80), len(encoded))
    first_char = np.repeat(np.cumsum(lengths) - lengths - offsets, counts) + np.arange(int(counts.sum()))
    starts = char_at[first_char]
    sizes = char_at[first_char + np.repeat(np.minimum(lengths, SHINGLE), counts)] - starts
    crc = np.full(len(starts), 0xFFFFFFFF, dtype=np.uint32)
    for position in range(int(sizes.max(initial=0))):
        step = _CRC_TABLE[(crc ^ data[starts + position]) & 0xFF] ^ (crc >> np.uint32(8))
        np.copyto(crc, step, where=sizes > position)
    return crc ^ np.uint32(0xFFFFFFFF), offsets


def signatures(texts: Iterable[str]) -> np.ndarray:
    """One MinHash signature (a row of NUM_PERM uint32) per text, for a whole batch in numpy passes of at most
    PIECE_SHINGLES shingles (per-item MinHash objects cost more than the hashing; one pass over a long text
    would hold NUM_PERM values per shingle). Shingles are CRC-32 hashed."""
    batch = list(texts)
    found = np.full((len(batch), NUM_PERM), 0xFFFFFFFF, dtype=np.uint32)
    owners: list[int] = []
    windows: list[str] = []
    size = 0  # shingles in ``windows``
    for owner, text in enumerate(batch):
        short = normalise(text) if len(text) <= _WINDOW else None
        for window in (short,) if short is not None and len(short) <= _WINDOW else _windows(text):
            count = max(len(window) - SHINGLE + 1, 1)
            if size + count > PIECE_SHINGLES and windows:
                _lower(found, owners, windows)
                owners, windows, size = [], [], 0
            owners.append(owner)
            windows.append(window)
            size += count
    if windows:
        _lower(found, owners, windows)
    return found


def _lower(found: np.ndarray, owners: list[int], windows: list[str]) -> None:
    """Lower the signatures of ``owners`` (a text's windows are consecutive) to the minima over these windows'
    shingles."""
    hashes, offsets = _shingle_hashes(windows)
    with np.errstate(over="ignore"):
        # One row per permutation, one column per shingle: numpy reduces along rows faster than along columns.
        # The addition in place: a second temporary of this size (megabytes a piece) cost more than the
        # arithmetic (docs/performance.md).
        permuted = np.multiply(_A.reshape(-1, 1), _fmix32(hashes).reshape(1, -1))
        permuted += _B.reshape(-1, 1)
    minima = np.minimum.reduceat(permuted, offsets, axis=1).T
    by = np.asarray(owners)
    first = np.flatnonzero(np.diff(by, prepend=-1))
    if len(first) < len(by):  # a long text's windows: one row each
        minima = np.minimum.reduceat(minima, first, axis=0)
    texts = by[first]
    found[texts] = np.minimum(found[texts], minima)


_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                 0x27D4EB2F165667C5, 0xFF51AFD7ED558CCD], dtype=np.uint64)


def band_keys(signature: np.ndarray) -> list[int]:
    """One signed 63-bit key per band (band number mixed in, so equal values in different bands differ)."""
    return batch_band_keys(signature.reshape(1, -1))[0]


def batch_band_keys(signatures: np.ndarray) -> list[list[int]]:
    """:func:`band_keys` of every row of ``signatures``, in one numpy pass."""
    bands = signatures[:, :BANDS * ROWS].astype(np.uint64).reshape(-1, BANDS, ROWS)
    with np.errstate(over="ignore"):
        mixed = np.bitwise_xor.reduce(bands * _MIX, axis=2) ^ (np.arange(BANDS, dtype=np.uint64) * _MIX[0])
    return (mixed >> np.uint64(1)).astype(np.int64).tolist()


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The estimated Jaccard similarity: the share of equal signature values."""
    return float(np.count_nonzero(a == b)) / NUM_PERM


class SeenKeys:
    """A Bloom filter of the 64-bit keys an import has written (band keys, content hashes, external ids):
    a key it has not seen is certainly not in the project, so the import skips its database lookup; a
    false positive only costs the lookup it would have made anyway. Used while a project holds no other
    items: its fixed size (16 MiB) keeps the import's memory independent of the file, and up to ~10 million
    keys (a million items) fewer than 1 in 200 lookups are made in vain."""

    #: Four positions per key from odd 64-bit multipliers (the keys are hashes already, so the top bits of
    #: their products are uniform).
    _MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93],
                            dtype=np.uint64)

    def __init__(self, bits_log2: int = 27) -> None:
        self._bytes = np.zeros(1 << (bits_log2 - 3), dtype=np.uint8)
        self._shift = np.uint64(64 - bits_log2)
        # The importer adds its texts' keys while its writer thread may add bands': one ``|=`` of a byte could
        # undo the other's (a lookup, which only reads, needs no lock: a bit once set stays set).
        self._adding = threading.Lock()

    #: Keys turned into positions at a time: the temporaries of all the held bands' two million keys at once
    #: took ~270 MB, more than the rest of the import (docs/performance.md, "1,000,000 items").
    _BLOCK = 1 << 16

    def _blocks(self, keys: Iterable[int] | np.ndarray) -> Iterator[np.ndarray]:
        """Each block's positions (a row of four per key)."""
        values = keys if isinstance(keys, np.ndarray) else np.fromiter(keys, dtype=np.int64)
        for start in range(0, len(values), self._BLOCK):
            block = values[start:start + self._BLOCK].astype(np.uint64)
            with np.errstate(over="ignore"):
                yield (block[:, None] * self._MULTIPLIERS[None, :]) >> self._shift

    def add(self, keys: Iterable[int] | np.ndarray) -> None:
        for positions in self._blocks(keys):
            positions = positions.ravel()
            index = (positions >> np.uint64(3)).astype(np.intp)
            bits = np.left_shift(1, positions & np.uint64(7)).astype(np.uint8)
            # Of several positions in one byte, a buffered ``|=`` keeps one bit: the lost ones are set again
            # until none is left (few rounds in a filter this sparse; ``np.bitwise_or.at`` cost ten times as much).
            with self._adding:
                while len(index):
                    self._bytes[index] |= bits
                    lost = (self._bytes[index] & bits) == 0
                    index, bits = index[lost], bits[lost]

    def may_contain(self, keys: Iterable[int] | np.ndarray) -> np.ndarray:
        """One bool per key: False when the key was certainly never added."""
        found = [((self._bytes[positions >> np.uint64(3)] >> (positions & np.uint64(7)).astype(np.uint8)) & 1).all(
            axis=1) for positions in self._blocks(keys)]
        return np.concatenate(found) if found else np.zeros(0, dtype=bool)


def text_key(value: str) -> int:
    """A 63-bit key of a string (a content hash, an external id) for :class:`SeenKeys`; stable in this
    process only, which is all the filter needs."""
    return hash(value) & 0x7FFFFFFFFFFFFFFF


class WrittenSignatures:
    """The signatures, group keys and near-duplicate groups of the items an import wrote last, by item id: the
    near-duplicate search takes an earlier item's from here instead of reading its text back and hashing it
    again, or reading its group back. A fixed-size table (an id's slot is its remainder; a newer item takes an
    older one's slot), so memory does not grow with the file: 2**17 items, 33 MiB when full, touched only as
    far as the import fills it."""

    def __init__(self, slots_log2: int = 17) -> None:
        self._mask = (1 << slots_log2) - 1
        self._ids = np.full(1 << slots_log2, -1, dtype=np.int64)
        self._signatures = np.zeros((1 << slots_log2, NUM_PERM), dtype=np.uint32)
        self._group_keys: list[str] = [""] * (1 << slots_log2)
        #: The item's NearDuplicate group as written, -1 for none.
        self._groups = np.full(1 << slots_log2, -1, dtype=np.int64)

    def add(self, ids: list[int], signatures: np.ndarray, group_keys: list[str]) -> None:
        slots = np.array(ids, dtype=np.int64) & self._mask
        self._ids[slots] = ids
        self._signatures[slots] = signatures
        self._groups[slots] = -1
        for slot, group_key in zip(slots.tolist(), group_keys, strict=True):
            self._group_keys[slot] = group_key

    def find(self, ids: list[int]) -> tuple[list[int], list[str], np.ndarray]:
        """Of ``ids``, those held here, with their group keys and signatures."""
        wanted = np.array(ids, dtype=np.int64)
        slots = wanted & self._mask
        held = self._ids[slots] == wanted
        slots = slots[held]
        return wanted[held].tolist(), [self._group_keys[slot] for slot in slots.tolist()], self._signatures[slots]

    def groups(self, ids: list[int]) -> tuple[set[int], dict[int, int]]:
        """Of ``ids``, those held here, and item → group of those of them that are in a group."""
        wanted = np.array(ids, dtype=np.int64)
        slots = wanted & self._mask
        held = self._ids[slots] == wanted
        held_ids, groups = wanted[held], self._groups[slots[held]]
        grouped = groups >= 0
        return set(held_ids.tolist()), dict(zip(held_ids[grouped].tolist(), groups[grouped].tolist(), strict=True))

    def regroup(self, renamed: list[tuple[int, int]], joined: list[tuple[int, int]]) -> None:
        """Follow the group rows the import wrote: groups renamed (old, new) — every item of the old one moves —
        then items that joined a group (item, group)."""
        if renamed:
            old = np.array([pair[0] for pair in renamed], dtype=np.int64)
            new = np.array([pair[1] for pair in renamed], dtype=np.int64)
            order = np.argsort(old)
            old, new = old[order], new[order]
            at = np.minimum(np.searchsorted(old, self._groups), len(old) - 1)
            hit = old[at] == self._groups
            self._groups[hit] = new[at[hit]]
        if joined:
            ids = np.array([pair[0] for pair in joined], dtype=np.int64)
            groups = np.array([pair[1] for pair in joined], dtype=np.int64)
            slots = ids & self._mask
            held = self._ids[slots] == ids
            self._groups[slots[held]] = groups[held]


class PendingBands:
    """The band keys of the items an import wrote, kept sorted in memory: the import looks its own earlier items
    up here instead of querying the bands it wrote. They are held for the lookups until this holds ``capacity``
    keys (which bounds its memory: 2**21 keys, 32 MiB), then written if they are not yet and let go; with a
    ``run``, they are also written in sorted runs of that many keys while the import goes on (see
    ``near_duplicates.BAND_RUN``), and held still."""

    def __init__(self, capacity: int = 1 << 21, run: int | None = None) -> None:
        self.capacity = capacity
        self.run = run
        self.keys = np.empty(0, dtype=np.int64)
        self.items = np.empty(0, dtype=np.int64)
        #: The held (key, item) pairs not written yet, in the same order.
        self.unwritten_keys = np.empty(0, dtype=np.int64)
        self.unwritten_items = np.empty(0, dtype=np.int64)

    def run_due(self) -> bool:
        """Whether the held bands are to be written now: a run is complete, or the memory is full."""
        return (self.run is not None and len(self.unwritten_keys) >= self.run) or len(self.keys) >= self.capacity

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, ids: list[int], band_keys: np.ndarray) -> None:
        """``band_keys`` holds a row of keys per item of ``ids``."""
        keys = band_keys.ravel()
        items = np.repeat(np.array(ids, dtype=np.int64), band_keys.shape[1])
        order = np.lexsort((items, keys))
        keys, items = keys[order], items[order]
        # Among equal keys the new items go after the held ones: (key, item) order, as the ids grow.
        self.keys, self.items = _inserted(self.keys, self.items, keys, items)
        self.unwritten_keys, self.unwritten_items = _inserted(self.unwritten_keys, self.unwritten_items, keys, items)

    def find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The held (key, item) pairs whose key is one of ``keys`` (distinct), as two arrays."""
        left = np.searchsorted(self.keys, keys, side="left")
        counts = np.searchsorted(self.keys, keys, side="right") - left
        hit = counts > 0
        left, counts = left[hit], counts[hit]
        starts = np.repeat(left - np.cumsum(counts) + counts, counts)
        return np.repeat(keys[hit], counts), self.items[starts + np.arange(int(counts.sum()))]

    def take_unwritten(self) -> tuple[np.ndarray, np.ndarray]:
        """The held (keys, items) not written yet, in key order; from now on they count as written."""
        keys, items = self.unwritten_keys, self.unwritten_items
        self.unwritten_keys = np.empty(0, dtype=np.int64)
        self.unwritten_items = np.empty(0, dtype=np.int64)
        return keys, items

    def take(self) -> tuple[np.ndarray, np.ndarray]:
        """All held (keys, items) in key order (written ones: call :meth:`take_unwritten` first), emptying
        this."""
        keys, items = self.keys, self.items
        self.keys = np.empty(0, dtype=np.int64)
        self.items = np.empty(0, dtype=np.int64)
        return keys, items


def _inserted(keys: np.ndarray, items: np.ndarray, new_keys: np.ndarray,
              new_items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ``(keys, items)`` with the sorted new pairs inserted, each after the held pairs of its key."""
    at = np.searchsorted(keys, new_keys, side="right")
    return np.insert(keys, at, new_keys), np.insert(items, at, new_items)
