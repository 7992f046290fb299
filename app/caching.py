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
- `memo_at_current_version(engine, key, compute)` is the same memo for values cached whole
  (an API URL's body), read without an ORM Session on a hit.

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
from typing import Any, TypeVar, cast

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version, read_catalog_version

T = TypeVar("T")

# Generous for one catalog: a tier line at one precision is ~1,000 engine runs.
DEFAULT_MAX_ENTRIES = 20_000


_MISSING = object()


class _Flight:
    """One computation in progress; threads that miss the same key wait for it."""

    __slots__ = ("done", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = _MISSING  # stays _MISSING when the computation raised


class _LRUMemo:
    """The LRU both cache kinds share: lock-guarded lookups, values computed outside the lock.

    One computation per key at a time: threads that miss a key another thread is computing
    wait for its value instead of computing it again (after an admin edit, every request for
    a popular page misses at once, and 30 threads rendering it on 2 cores made every one of
    them late). Different keys compute in parallel. If the computing thread raises, the
    waiters start over (one computes, the others wait for it).

    Subclasses may drop entries before a lookup (`_before_lookup`) and refuse to keep a value
    computed for a key that went stale meanwhile (`_may_store`); both run under the lock.
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}

    def _memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            self._before_lookup(key)
            value = self._entries.get(key, _MISSING)
            if value is not _MISSING:
                self._entries.move_to_end(key)
                return value  # type: ignore[no-any-return]
            flight = self._flights.get(key)
            leading = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
        if not leading:
            flight.done.wait()
            if flight.value is not _MISSING:
                return flight.value  # type: ignore[no-any-return]
            return self._memo(key, compute)  # it raised (for its own request): try afresh
        try:
            value = compute()
            flight.value = value
        finally:
            with self._lock:
                if flight.value is not _MISSING and self._may_store(key):
                    self._entries[key] = flight.value
                    while len(self._entries) > self.max_entries:
                        self._entries.popitem(last=False)
                del self._flights[key]
            flight.done.set()
        return value

    def _before_lookup(self, key: Hashable) -> None:
        pass

    def _may_store(self, key: Hashable) -> bool:
        return True

    def clear(self) -> None:
        """Forget everything (tests and benchmarks only; correctness never depends on it)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


_ScopedKey = tuple[Hashable, int, Hashable]  # (database, catalog version, key)


class CatalogCache(_LRUMemo):
    """LRU memo whose entries belong to one (database, catalog version) scope."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        super().__init__(max_entries)
        # Latest version seen per database: older scopes are dropped when a newer one appears.
        self._latest: dict[Hashable, int] = {}

    def get(self, database: Hashable, version: int, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value for (database, version, key), computing it on a miss."""
        return self._memo((database, version, key), compute)

    def _before_lookup(self, key: Hashable) -> None:
        database, version, _ = cast(_ScopedKey, key)
        if self._latest.get(database, -1) < version:
            for stale in [k for k in self._entries if cast(_ScopedKey, k)[0] == database]:
                del self._entries[stale]
            self._latest[database] = version

    def _may_store(self, key: Hashable) -> bool:
        # A value computed while a newer version appeared belongs to a scope already dropped.
        database, version, _ = cast(_ScopedKey, key)
        return self._latest.get(database, -1) <= version

    def clear(self) -> None:
        """Forget everything (tests and benchmarks only; correctness never depends on it)."""
        with self._lock:
            self._entries.clear()
            self._latest.clear()


CACHE = CatalogCache()


class ValueCache(_LRUMemo):
    """Thread-safe LRU memo for pure functions, keyed by the (hashable) values they depend on.

    A key must hold every input of the computation, by value (frozen dataclasses, tuples,
    strings, numbers): then an entry is never stale and needs no invalidation.
    """

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The cached value for `key`, computing it on a miss (outside the lock)."""
        return self._memo(key, compute)


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
    # URL too. Rendering a URL costs more than a cache hit, so remember it per engine (a
    # session bound to a Connection, as memo_at_current_version opens them, names its engine).
    bind = bind.engine
    try:
        return _DATABASE_KEYS[bind]
    except KeyError:
        key = bind.url.render_as_string(hide_password=True)
        _DATABASE_KEYS[bind] = key
        return key


def memo_at_current_version(
    engine: Engine, key: Hashable, compute: Callable[[Connection, int], T]
) -> T:
    """The value cached for `key` at the catalog version the database holds now, or
    `compute(connection, version)` on a miss, with the connection the version was read on.

    For answers cached whole (an API URL's body): the version is read on a bare Connection,
    so a hit opens no ORM Session (~16 µs against ~67 µs for a Session's first query, most of
    a cached GET's own time); a miss reads its data on that same connection, after the version.
    """
    with engine.connect() as connection:
        version = read_catalog_version(connection) or 0
        return CACHE.get(
            _database_key(engine), version, key, lambda: compute(connection, version)
        )


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
