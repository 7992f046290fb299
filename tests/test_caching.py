"""app/caching.py: the LRU both cache kinds share, and the catalog kind's version scopes."""

import threading
import time
from collections.abc import Callable

from app.caching import CatalogCache, ValueCache


def test_value_cache_computes_once_per_key_and_evicts_the_least_recently_used() -> None:
    cache = ValueCache(max_entries=2)
    computed: list[str] = []

    def value(key: str) -> str:
        return cache.get(key, lambda: computed.append(key) or key.upper())

    assert [value("a"), value("b"), value("a")] == ["A", "B", "A"]
    value("c")  # "b" is the least recently used of a, b
    value("a")
    value("b")
    assert computed == ["a", "b", "c", "b"]
    assert len(cache) == 2


def test_a_newer_catalog_version_drops_that_database_s_older_entries_only() -> None:
    cache = CatalogCache(max_entries=10)
    computed: list[tuple[str, int]] = []

    def value(database: str, version: int) -> int:
        def compute() -> int:
            computed.append((database, version))
            return version

        return cache.get(database, version, "k", compute)

    value("one", 1)
    value("two", 1)
    value("one", 2)
    value("one", 2)
    value("two", 1)  # another database keeps its scope
    assert computed == [("one", 1), ("two", 1), ("one", 2)]
    assert len(cache) == 2


def test_a_value_computed_for_a_version_that_went_stale_meanwhile_is_not_kept() -> None:
    cache = CatalogCache(max_entries=10)

    def slow_compute() -> str:
        cache.get("db", 2, "other", lambda: "newer")  # a newer version appears mid-compute
        return "older"

    assert cache.get("db", 1, "k", slow_compute) == "older"  # the caller still gets its value
    assert len(cache) == 1  # only ("db", 2, "other"): nothing kept under version 1


def _race(cache: ValueCache, compute: Callable[[], str], threads: int) -> list[object]:
    """`threads` threads miss one key together; each records its value or its error."""
    out: list[object] = []
    start = threading.Barrier(threads)

    def one() -> None:
        start.wait()
        try:
            out.append(cache.get("page", compute))
        except RuntimeError as exc:
            out.append(exc)

    workers = [threading.Thread(target=one) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=10)
    return out


def test_threads_that_miss_one_key_together_wait_for_one_computation() -> None:
    cache = ValueCache(max_entries=4)
    calls: list[int] = []

    def render() -> str:
        calls.append(1)
        time.sleep(0.2)  # long enough for every other thread to arrive and wait
        return "page"

    assert _race(cache, render, threads=8) == ["page"] * 8
    assert len(calls) == 1


def test_when_the_computing_thread_fails_the_waiters_start_over() -> None:
    cache = ValueCache(max_entries=4)
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        time.sleep(0.2)
        if len(calls) == 1:
            raise RuntimeError("the first computation fails")
        return "page"

    out = _race(cache, flaky, threads=4)
    assert sum(isinstance(v, RuntimeError) for v in out) == 1
    assert out.count("page") == 3
    assert len(calls) == 2  # the failed one, then one for the three waiters
    assert cache.get("page", lambda: "not computed again") == "page"
