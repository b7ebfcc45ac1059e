"""scikit-learn's ``TfidfVectorizer(analyzer="char_wb")`` for n-grams of up to 3 characters, with the counting
done by numpy: the same matrices, several times faster.

scikit-learn builds the document-term counts one n-gram at a time in Python (``_char_wb_ngrams`` and
``_count_vocab``), which was most of a release's baseline check. :class:`CharTfidf` replaces only
``_count_vocab``: every n-gram of every document becomes one 63-bit integer (three 21-bit code points,
plus one so that a shorter n-gram sorts before its extensions, exactly as Python orders strings), and the
counts come from ``numpy.unique``. It returns what scikit-learn's method returns — the vocabulary
numbered in first-seen order and the same count matrix — so pruning, sorting, the ``max_features`` cut
and the TF-IDF weighting stay scikit-learn's own code (the vocabulary's keys are those integers, not
strings). Any other configuration falls back to scikit-learn's method.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.utils._sparse import _align_api_if_sparse

#: scikit-learn's whitespace run (``_VectorizerMixin._white_spaces``).
_WHITE_SPACES = re.compile(r"\s\s+")
_BITS = 21  # a code point plus one fits: 0x10FFFF + 1 < 2**21
_SPACE = ord(" ") + 1
#: Documents counted at once.
_CHUNK = 2000


class CharTfidf(TfidfVectorizer):
    """``TfidfVectorizer`` whose counting is vectorised for ``analyzer="char_wb"`` and n ≤ 3."""

    def _fast(self) -> bool:
        low, high = self.ngram_range
        return (self.analyzer == "char_wb" and 1 <= low <= high <= 3 and self.input == "content"
                and self.preprocessor is None and self.strip_accents is None and not self.binary)

    def _count_vocab(self, raw_documents: Iterable[str], fixed_vocab: bool) -> tuple[dict[Any, int], Any]:
        if not self._fast():
            return super()._count_vocab(raw_documents, fixed_vocab)
        documents = [self._text(doc) for doc in raw_documents]
        if fixed_vocab:
            vocabulary = self.vocabulary_
            known = pd.Index(np.fromiter(vocabulary.keys(), dtype=np.int64, count=len(vocabulary)))
            columns = np.fromiter(vocabulary.values(), dtype=np.int64, count=len(vocabulary))
        else:
            known, columns = pd.Index(np.empty(0, dtype=np.int64)), np.empty(0, dtype=np.int64)
        # A chunk of documents at a time: the per-n-gram arrays of a whole training split would cost more
        # memory than the rest of the check.
        counts = []
        for first in range(0, len(documents), _CHUNK):
            keys, docs = self._grams(documents[first:first + _CHUNK])
            if fixed_vocab:
                slot = known.get_indexer(keys)
                docs, ids = docs[slot >= 0], columns[slot[slot >= 0]]
            else:
                # Hashed in emission order, so new terms are numbered in scikit-learn's first-seen order.
                codes, terms = pd.factorize(keys, sort=False)
                slot = known.get_indexer(terms)
                new = slot < 0
                slot[new] = len(known) + np.arange(int(new.sum()))
                known = known.append(pd.Index(terms[new]))
                ids = slot[codes]
            counts.append(_counts(docs, ids, min(_CHUNK, len(documents) - first)))
        if not fixed_vocab:
            if not len(known):
                raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
            vocabulary = dict(zip(known.tolist(), range(len(known)), strict=True))
        return vocabulary, self._matrix(counts, len(documents), len(vocabulary))

    def _text(self, doc: Any) -> str:
        text = self.decode(doc)
        return text.lower() if self.lowercase else text

    def _grams(self, documents: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every n-gram's key and document, in the order scikit-learn's analyzer emits them: document by
        document, word by word, then by n, then by offset. The documents' padded words (`` word ``) are laid
        end to end; a padded word has at least 3 characters, so no n-gram is short and none crosses a word."""
        padded = []
        for text in documents:
            words = _WHITE_SPACES.sub(" ", text).split()
            padded.append(" " + "  ".join(words) + " " if words else "")
        codes = np.frombuffer("".join(padded).encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
        codes += 1
        # A word's leading pad is a space after a space (the previous word's trailing pad) or the very first.
        space = codes == _SPACE
        opens = space.copy()
        opens[1:] &= space[:-1]
        starts = np.flatnonzero(opens)
        sizes = np.diff(starts, append=len(codes))
        doc_starts = np.cumsum([0, *map(len, padded)])[:-1]
        word_doc = np.searchsorted(doc_starts, starts, side="right") - 1
        # The n-grams starting at each position, for n = 1, 2, 3, one array after the other.
        low, high = self.ngram_range
        grams = [codes << 2 * _BITS]
        for n in range(2, high + 1):
            grams.append(grams[-1][:-1] | codes[n - 1:] << (3 - n) * _BITS)
        offsets = np.cumsum([0, *map(len, grams)])
        # One segment per word and n (word-major), each the run of that word's n-grams.
        n_values = np.arange(low, high + 1)
        segment_start = (offsets[n_values - 1][None, :] + starts[:, None]).ravel()
        segment_size = (sizes[:, None] - n_values[None, :] + 1).ravel()
        total = int(segment_size.sum())
        index = np.repeat(segment_start - (np.cumsum(segment_size) - segment_size), segment_size)
        index += np.arange(total)
        docs = np.repeat(word_doc, segment_size.reshape(len(starts), len(n_values)).sum(axis=1))
        return np.concatenate(grams)[index], docs

    def _matrix(self, counts: list[Any], n_docs: int, n_terms: int) -> Any:
        """The count matrix as ``_count_vocab`` builds it (int32 indices, ``self.dtype`` counts, sorted), from the
        chunks' matrices, which it empties ``counts`` of as it copies them."""
        nnz = sum(part.nnz for part in counts)
        index_dtype = np.int32 if nnz <= np.iinfo(np.int32).max else np.int64
        data = np.empty(nnz, dtype=self.dtype)
        indices = np.empty(nnz, dtype=index_dtype)
        indptr = np.zeros(n_docs + 1, dtype=index_dtype)
        row = done = 0
        while counts:
            part = counts.pop(0)
            data[done:done + part.nnz] = part.data
            indices[done:done + part.nnz] = part.indices
            indptr[row + 1:row + part.shape[0] + 1] = part.indptr[1:] + done
            row, done = row + part.shape[0], done + part.nnz
        matrix = sp.csr_array((data, indices, indptr), shape=(n_docs, n_terms))
        matrix.sort_indices()
        return _align_api_if_sparse(matrix)


def _counts(docs: np.ndarray, ids: np.ndarray, n_docs: int) -> Any:
    """One chunk's (document, term) occurrences summed into a CSR matrix with sorted indices."""
    width = int(ids.max()) + 1 if len(ids) else 1
    counts = sp.csr_array((np.ones(len(docs), dtype=np.intc), (docs.astype(np.int32), ids.astype(np.int32))),
                          shape=(n_docs, width))
    counts.sum_duplicates()
    return counts
