"""A small in-process memo of derived catalog data, keyed by the catalog version in the database.

Contract:
- `snapshot(session)` reads the catalog version (`app.catalog_version`) once per
  transaction and returns a `Snapshot`; `snapshot.memo(key, compute)` returns the value cached
  for (database, version, key) or calls `compute()` and caches it.
- Every catalog write raises the version in the same transaction, so every worker process sees a
  change right after it commits: the next request reads the new version and misses the cache. No
  per-process invalidation exists (or is needed).
- Read the version *before* the data: data loaded after the version is never older than it, so a
  cached value is at worst newer than its key (and the next version misses anyway).
- Cached values are shared between threads: treat them as read-only.

`ValueCache` is the other kind: an LRU keyed by the *inputs* of a pure computation (engine runs
keyed by the build, model, workload and cost values; charts keyed by their plotted data). Its
entries stay valid across catalog versions, so an edit that leaves a build's spec unchanged (its
notes, say) does not make every worker recompute every engine sweep.
"""

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version

T = TypeVar("T")

# Generous for one catalog: a tier line at one precision is ~1,000 engine runs.
DEFAULT_MAX_ENTRIES = 20_000


class CatalogCache:
    """LRU memo whose entries belong to one (database, catalog version) scope."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
        # Latest version seen per database: older scopes are dropped when a newer one appears.
        self._latest: dict[Hashable, int] = {}

    def get(self, database: Hashable, version: int, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value for (database, version, key), computing it on a miss."""
        full_key = (database, version, key)
        with self._lock:
            if self._latest.get(database, -1) < version:
                self._drop_database(database)
                self._latest[database] = version
            try:
                value = self._entries[full_key]
            except KeyError:
                pass
            else:
                self._entries.move_to_end(full_key)
                return value  # type: ignore[no-any-return]
        # Computed outside the lock: two threads may compute the same value once each, which
        # is cheaper than serialising every request behind a slow engine sweep.
        value = compute()
        with self._lock:
            if self._latest.get(database, -1) <= version:
                self._entries[full_key] = value
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget everything (tests and benchmarks only; correctness never depends on it)."""
        with self._lock:
            self._entries.clear()
            self._latest.clear()

    def _drop_database(self, database: Hashable) -> None:
        for stale in [k for k in self._entries if k[0] == database]:
            del self._entries[stale]


CACHE = CatalogCache()


class ValueCache:
    """Thread-safe LRU memo for pure functions, keyed by the (hashable) values they depend on.

    A key must hold every input of the computation, by value (frozen dataclasses, tuples,
    strings, numbers): then an entry is never stale and needs no invalidation.
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value for `key`, computing it on a miss (outside the lock)."""
        with self._lock:
            try:
                value = self._entries[key]
            except KeyError:
                pass
            else:
                self._entries.move_to_end(key)
                return value  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget everything (tests and benchmarks only)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True)
class Snapshot:
    """The catalog as one session sees it at one version, with a memo for derived data."""

    session: Session
    database: str
    version: int

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """Cached value of compute() for this database and catalog version."""
        return CACHE.get(self.database, self.version, key, compute)


_SESSION_KEY = "tierline.catalog_snapshot"
_DATABASE_KEYS: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()


def _database_key(bind: Any) -> str:
    # Several databases can live in one process (tests, admin tools): entries are keyed by the
    # URL too. Rendering a URL costs more than a cache hit, so remember it per engine.
    try:
        return _DATABASE_KEYS[bind]
    except KeyError:
        key = bind.url.render_as_string(hide_password=True)
        _DATABASE_KEYS[bind] = key
        return key


def snapshot(session: Session) -> Snapshot:
    """The session's Snapshot: the catalog version is read once per transaction.

    A request's session keeps one transaction, so a route and the services it calls share one
    version query; after a commit or rollback the next call reads the version again.
    """
    cached = session.info.get(_SESSION_KEY)
    transaction = session.get_transaction()
    if cached is not None and transaction is not None and cached[0] is transaction:
        return cached[1]  # type: ignore[no-any-return]
    version = current_catalog_version(session)
    snap = Snapshot(
        session=session, database=_database_key(session.get_bind()), version=version
    )
    session.info[_SESSION_KEY] = (session.get_transaction(), snap)
    return snap
