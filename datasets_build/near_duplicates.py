"""The near-duplicate index of an import: each written batch joined to the near-duplicate groups of the
project's items and of the import's earlier batches (MinHash bands, :mod:`.dedup`).

The pipeline (:mod:`.pipeline`) indexes a batch in its own thread while its writer writes the next one
(docs/performance.md), and gives the writer what the indexing found. The index keeps the bands and signatures
of the items the import wrote last in memory (:class:`~.dedup.PendingBands`, :class:`~.dedup.WrittenSignatures`)
and reads the rest (:mod:`.batch_selectors`).
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np
import orjson
from django.db import connection

from annotation.models import Project

from . import batch_selectors, dedup
from .prepare import Prepared

#: On PostgreSQL, an import's near-duplicate bands are written in sorted runs of this many keys while it goes
#: on: the server's work on them overlaps the preparation of the next records, where all of them written when
#: the import ended (1M rows for 100k items) left the server alone for its last seconds, a core idle
#: (docs/performance.md, "The writing side"). Not on SQLite, whose work is this process's own CPU: runs into
#: the project's part of the index cost it more than the one sorted write at the end.
BAND_RUN = 1 << 17


class NearDuplicateIndex:
    """The near-duplicate groups of one import into one project, batch by batch (:meth:`index`).
    ``seen`` holds what the import has written while the project held nothing else (see dedup.SeenKeys), or is
    None."""

    def __init__(self, project: Project, seen: dedup.SeenKeys | None) -> None:
        self.project = project
        self.task = project.task
        self._seen = seen
        #: New items found nearly the same as an earlier one (the import summary's ``near_duplicates``).
        self.found = 0
        self._written = dedup.WrittenSignatures()
        #: Bands of the items written last, for their lookups (see dedup.PendingBands).
        self._pending = dedup.PendingBands(run=BAND_RUN if connection.vendor == "postgresql" else None)
        #: Whether held bands were let go (the memory full): their keys are looked up in the database since.
        self._bands_let_go = False

    def index(self, ids: list[int], kept: list[Prepared], band_keys: np.ndarray) -> tuple[
            list[tuple[int, int, int]], list[dict[str, Any]], np.ndarray, np.ndarray]:
        """Join the batch's items to the near-duplicate groups of the project's items (and of one another) and
        hold their bands; ``band_keys`` holds a row of keys per item. Returns what the writer writes: the groups
        merged and the group rows (:func:`.batch_services.near_duplicate_groups_write`), and a run of bands when
        one is due (:func:`.batch_services.bands_write`).

        An item joins a group when it is nearly the same as any of its members that share a band with it, so
        of the members of one group it is compared with the one sharing most bands first, and with the others
        only when that one is not similar enough: a sentence with many near copies costs one comparison per
        group, not one per copy. The signatures of the items this import wrote last are kept in memory
        (:class:`~.dedup.WrittenSignatures`); the other earlier items' are computed again from their texts (a
        stored row of 64 values per item would cost every import)."""
        batch_keys, counts = np.unique(band_keys, return_counts=True)
        # The bands of this import's items not yet written are in memory; the database holds the rest (the
        # project's earlier items, and this import's written when the memory was full). Into a project without
        # items, until the memory is full, the database holds none that memory does not: no lookup, and no
        # filter to ask (a million keys asked cost more than the rest of the lookups).
        candidates = {} if self._seen is not None and not self._bands_let_go else batch_selectors.band_candidates(
            self.project, self._maybe_written(batch_keys).tolist())
        lengths = np.fromiter(map(len, candidates.values()), dtype=np.int64, count=len(candidates))
        entry_keys, entry_items = self._pending.find(batch_keys)
        if candidates:
            entry_keys = np.concatenate([np.repeat(np.fromiter(candidates, dtype=np.int64, count=len(candidates)),
                                                   lengths), entry_keys])
            entry_items = np.concatenate([np.fromiter(chain.from_iterable(candidates.values()), dtype=np.int64,
                                                      count=int(lengths.sum())), entry_items])
            # A band written already and still held is found in both: once.
            entry_keys, entry_items = np.unique(np.stack([entry_keys, entry_items], axis=1), axis=0).T
        shared = _SharedBands(band_keys, entry_keys, entry_items)
        earlier = np.unique(shared.others).tolist()
        # An earlier item's group, if it is in one: this import's last items' from memory, the others' read.
        held, existing = self._written.groups(earlier)
        existing.update(batch_selectors.near_duplicate_groups_of([pk for pk in earlier if pk not in held]))
        nodes = _Nodes(ids, [p.group_key for p in kept],
                       np.array([p.signature for p in kept], dtype=np.uint32).reshape(-1, dedup.NUM_PERM))
        # Per new item: this batch's earlier items sharing a band (only keys that several of its items hold).
        in_batch: dict[int, set[int]] = {}
        batch_shared = set(batch_keys[counts > 1].tolist())
        batch_buckets: dict[int, list[int]] = {}
        for row, p in enumerate(kept):
            item_keys = [key for key in p.band_keys if key in batch_shared]
            if not item_keys:
                continue
            batch_rows = {other for k in item_keys for other in batch_buckets.get(k, ())}
            if batch_rows:
                in_batch[row] = batch_rows
            for key in item_keys:
                batch_buckets.setdefault(key, []).append(row)
        # The project's items: per new item and group (an item in no group is a group of its own) the member
        # sharing most bands first, then the rest of the groups whose first did not match.
        heads = shared.grouped(existing)
        self._add_earlier(nodes, sorted(set(heads[1].tolist())))
        first = self._compare(nodes, list(zip(*(side.tolist() for side in heads), strict=True)))
        rest = shared.rest(first)
        self._add_earlier(nodes, sorted(set(rest[1].tolist()) - nodes.fetched))
        found = {**first, **self._compare(nodes, list(zip(*(side.tolist() for side in rest), strict=True)))}
        found.update(self._compare(nodes, [(row, ids[other]) for row, rows in in_batch.items()
                                           for other in sorted(rows)]))
        merged, rows = self._join_groups(nodes.ids, [row for row, _ in found], [nodes.row_of[other] for _, other in
                                                                                found], list(found.values()), existing)
        self._pending.add(ids, band_keys)
        run = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        if self._pending.run_due():
            run = self._pending.take_unwritten()
        if len(self._pending) >= self._pending.capacity:
            # Let go of the held bands: the filter sends the lookups of their keys to the database from now on
            # (written before: the writer writes this run before any later lookup).
            keys, _ = self._pending.take()
            self._bands_let_go = True
            if self._seen is not None:
                self._seen.add(keys)
        self._written.add(ids, nodes.signatures[:len(ids)], nodes.group_keys[:len(ids)])
        self._written.regroup([(old, group) for group, _, old in merged],
                              [(row["item_id"], row["group"]) for row in rows])
        return merged, rows, *run

    def take_unwritten(self) -> tuple[np.ndarray, np.ndarray]:
        """The held bands not written yet (keys, items), in key order: the import's last run, written when it
        ends."""
        return self._pending.take_unwritten()

    def _add_earlier(self, nodes: _Nodes, earlier: list[int]) -> None:
        """Earlier items to compare with: this import's last ones as it wrote them, the others from the
        database (their signatures computed again from their texts)."""
        known, group_keys, signatures = self._written.find(earlier)
        nodes.add_known(known, group_keys, signatures)
        known_ids = set(known)
        nodes.add(batch_selectors.item_texts([pk for pk in earlier if pk not in known_ids]), self.task)

    def _compare(self, nodes: _Nodes, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
        """Of (new item's row, earlier item's id) pairs, those similar enough, with their similarity. A pair
        whose earlier item is gone (a band left by an item deleted with raw SQL: the rows have no foreign key)
        or of the new item's own group (one passage, several questions: one split anyway) is not compared."""
        pairs = [(row, other) for row, other in pairs if other in nodes.row_of and not (
            nodes.group_keys[row] and nodes.group_keys[row] == nodes.group_keys[nodes.row_of[other]])]
        if not pairs:
            return {}
        left = [row for row, _ in pairs]
        right = [nodes.row_of[other] for _, other in pairs]
        signatures = nodes.signatures
        scores = (np.count_nonzero(signatures[left] == signatures[right], axis=1) / dedup.NUM_PERM).tolist()
        limit = dedup.threshold()
        return {pair: score for pair, score in zip(pairs, scores, strict=True) if score >= limit}

    def _join_groups(self, node_ids: list[int], left: list[int], right: list[int], scores: list[float],
                     existing: dict[int, int]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Union-find over the links found (``left[i]``, a new item's row in ``node_ids``, is nearly the same as
        ``right[i]``, an earlier item's): the new items join the groups their earlier near duplicates are in
        (``existing``: item → group), groups a new item links are merged (into the smallest group id, the
        earliest item's), and earlier items that were in no group yet get one. Returns the groups merged
        (new group, project, old group) and the group rows of the items that joined one."""
        if not left:
            return [], []
        # Union-find over group ids: an item in no group yet is a group of its own, named by its id; a merged
        # group takes the smaller id, so a group is always named by its earliest item.
        parent: dict[int, int] = {}

        def find(group: int) -> int:
            parent.setdefault(group, group)
            while parent[group] != group:
                parent[group] = parent[parent[group]]
                group = parent[group]
            return group

        best: dict[int, tuple[float, int]] = {}
        for a, b, score in zip(left, right, scores, strict=True):
            other = node_ids[b]
            root_a, root_b = find(node_ids[a]), find(existing.get(other, other))
            parent[max(root_a, root_b)] = min(root_a, root_b)
            if a not in best or (-score, other) < (-best[a][0], best[a][1]):
                best[a] = (score, other)
        # Groups merged into another (never into one that is merged itself: find gives the final group), one
        # statement for all of them.
        merged = [(group, self.project.pk, old) for old in sorted(set(existing.values()))
                  if (group := find(old)) != old]
        rows = []
        for r in sorted({*left, *right}, key=node_ids.__getitem__):
            item_id = node_ids[r]
            if item_id not in existing:
                score, other = best.get(r, (None, None))
                rows.append({"project_id": self.project.pk, "item_id": item_id, "group": find(item_id),
                             "duplicate_of_id": other, "similarity": score})
        self.found += len(best)
        return merged, rows

    def _maybe_written(self, keys: np.ndarray) -> np.ndarray:
        """Those of the band ``keys`` the project may hold already: the ones this import may have written when it
        started on a project without items, else all of them."""
        if self._seen is None or not len(keys):
            return keys
        return keys[self._seen.may_contain(keys)]


class _Nodes:
    """The items a batch's near-duplicate search compares: the batch's own (the first rows) and the earlier
    ones fetched for it, with their group keys and signatures."""

    def __init__(self, ids: list[int], group_keys: list[str], signatures: np.ndarray) -> None:
        self.ids = list(ids)
        self.row_of = {pk: row for row, pk in enumerate(ids)}
        self.group_keys = list(group_keys)
        self.signatures = signatures
        self.fetched: set[int] = set()

    def add(self, rows: list[tuple[Any, ...]], task: Any) -> None:
        """Earlier items as ``(id, payload JSON text, group key)``."""
        if rows:
            self.add_known([pk for pk, _, _ in rows], [group_key for _, _, group_key in rows],
                           dedup.signatures(task.item_text(orjson.loads(payload)) for _, payload, _ in rows))

    def add_known(self, ids: list[int], group_keys: list[str], signatures: np.ndarray) -> None:
        """Earlier items whose signatures are known."""
        if not ids:
            return
        for pk in ids:
            self.row_of[pk] = len(self.ids)
            self.ids.append(pk)
            self.fetched.add(pk)
        self.group_keys.extend(group_keys)
        self.signatures = np.concatenate([self.signatures, signatures])


class _SharedBands:
    """The earlier items sharing a band with each new item of a batch, and how many bands they share, as numpy
    arrays: a ``Counter`` and a sort per new item cost more than the rest of the search on a corpus whose
    sentences have many near copies."""

    def __init__(self, band_keys: np.ndarray, entry_keys: np.ndarray, entry_items: np.ndarray) -> None:
        """``entry_keys[i]`` is a band key an earlier item ``entry_items[i]`` is indexed under."""
        rows = others = np.empty(0, dtype=np.int64)
        if len(entry_keys):
            order = np.argsort(entry_keys, kind="stable")
            items = entry_items[order]
            keys, starts = np.unique(entry_keys[order], return_index=True)
            lengths = np.diff(np.append(starts, len(items)))
            flat = band_keys.ravel()
            at = np.minimum(np.searchsorted(keys, flat), len(keys) - 1)
            hit = keys[at] == flat
            at = at[hit]
            counts = lengths[at]
            rows = np.repeat(np.repeat(np.arange(band_keys.shape[0]), band_keys.shape[1])[hit], counts)
            offsets = np.cumsum(counts) - counts
            others = items[np.repeat(starts[at] - offsets, counts) + np.arange(int(counts.sum()))]
        # One entry per (new item's row, earlier item), with the number of bands they share.
        order = np.lexsort((others, rows))
        rows, others = rows[order], others[order]
        new = np.ones(len(rows), dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (others[1:] != others[:-1])
        starts = np.flatnonzero(new)
        self.rows, self.others = rows[starts], others[starts]
        self.shared = np.diff(np.append(starts, len(rows)))
        self._order = (self.rows, self.others, np.zeros(len(starts), dtype=bool), np.zeros(len(starts), dtype=np.int64))

    def grouped(self, existing: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Per new item, its earlier items by group (``existing``: item → group; an item in none is a group of
        its own), groups in the order of their first member, members by most shared bands, then by id; returns
        the first member of every (new item, group) as (rows, earlier items). :meth:`rest` gives the others."""
        groups = self.others.copy()
        if existing and len(groups):
            members = np.fromiter(existing, dtype=np.int64, count=len(existing))
            named = np.fromiter(existing.values(), dtype=np.int64, count=len(existing))
            order = np.argsort(members)
            members, named = members[order], named[order]
            at = np.minimum(np.searchsorted(members, groups), len(members) - 1)
            hit = members[at] == groups
            groups[hit] = named[at[hit]]
        order = np.lexsort((self.others, -self.shared, self.rows))
        rows, others, groups = self.rows[order], self.others[order], groups[order]
        position = np.arange(len(rows))
        # The position (in that order) of each (new item, group)'s first member, for each of its members.
        by_group = np.lexsort((position, groups, rows))
        starts = np.ones(len(rows), dtype=bool)
        starts[1:] = (rows[by_group][1:] != rows[by_group][:-1]) | (groups[by_group][1:] != groups[by_group][:-1])
        first = np.empty(len(rows), dtype=np.int64)
        first[by_group] = by_group[np.maximum.accumulate(np.where(starts, position, 0))]
        final = np.lexsort((position, first))
        head = position[final] == first[final]
        self._order = (rows[final], others[final], head, np.cumsum(head) - 1)
        return rows[final][head], others[final][head]

    def rest(self, found: dict[tuple[int, int], float]) -> tuple[np.ndarray, np.ndarray]:
        """The members after the first of each (new item, group) of :meth:`grouped` whose first is not in
        ``found``, in the same order."""
        rows, others, head, group = self._order
        heads = zip(rows[head].tolist(), others[head].tolist(), strict=True)
        head_found = np.fromiter((pair in found for pair in heads), dtype=bool, count=int(head.sum()))
        keep = ~head & ~head_found[group] if len(rows) else head
        return rows[keep], others[keep]
