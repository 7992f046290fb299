"""app/caching.py: the LRU both cache kinds share, and the catalog kind's version scopes."""

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
