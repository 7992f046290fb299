"""Memos keyed by what a page shows from the catalog, not by the catalog version.

A catalog memo (`Snapshot.memo`) is dropped by every write, so one admin edit would make every
worker recompute every build page's fits and serving curve (~40-100 ms each on a desktop build,
more for a mixed rig). Here the key is a digest of the records the value is derived from: an edit
to one build changes that build's digest only, and the other builds' values are kept. The digests
themselves are memoised per catalog version (one `repr` per record and version).
"""

import hashlib
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from app.caching import Snapshot, ValueCache
from app.services.build_rows import find_build
from app.services.model_profiles import model_profile_rows

T = TypeVar("T")

# Two values per build page and query (fits: 18-25 kB pickled, serving section: 6-9 kB, a few
# times that in memory): 512 entries cover every seeded build under a few plan choices and limits
# (tens of MB per worker at worst).
PAGE_VALUES = ValueCache(max_entries=512)


def _digest(value: Any) -> str:
    # repr is by value for the rows' frozen specs, typed models, dates and floats (exact), and
    # the rows are built by one code path, so equal records give equal text.
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


def build_digest(snap: Snapshot, slug: str) -> str:
    """Digest of one build's record, list item and engine spec (NotFound for an unknown slug)."""
    row = find_build(snap, slug)
    return snap.memo(
        ("inputs", "build", slug), lambda: _digest((row.slug, row.spec, row.list_item, row.record))
    )


def models_digest(snap: Snapshot) -> str:
    """Digest of every catalog model's record, list item and engine spec."""

    def load() -> str:
        rows = sorted(model_profile_rows(snap).values(), key=lambda m: m.slug)
        return _digest([(m.slug, m.spec, m.list_item, m.record) for m in rows])

    return snap.memo(("inputs", "models"), load)


def by_inputs(key: Hashable, compute: Callable[[], T]) -> T:
    """compute() memoised by `key`, which must hold every input (digests, query values, costs)."""
    return PAGE_VALUES.get(key, compute)
