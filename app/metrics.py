"""Prometheus metrics (prometheus-client); `GET /metrics` is served by app/api/metrics.py.

Request counts and latencies are labelled by the matched route *template* (`/api/v1/builds/{slug}`,
never the raw path) so label cardinality stays bounded whatever clients send. With several worker
processes, `tierline serve --workers N` points PROMETHEUS_MULTIPROC_DIR at a fresh directory before
the workers start; prometheus-client then keeps each worker's values in files there and a scrape of
any worker aggregates them all. The catalog version and database status are read from the database
at scrape time, so every worker reports the same values.
"""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from app.catalog_version import read_catalog_version

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Counter(
    "tierline_http_requests",
    "HTTP requests answered, by method, route template and status code.",
    ["method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "tierline_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and route template.",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
ENGINE_EVALUATIONS = Counter(
    "tierline_engine_evaluations",
    "Engine estimates computed (one per build x model x workload evaluated).",
)


def multiprocess_dir() -> str | None:
    """The prometheus-client multiprocess directory, when several workers share metrics."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


@contextmanager
def multiprocess_directory(workers: int) -> Iterator[str | None]:
    """With several workers, point PROMETHEUS_MULTIPROC_DIR at a fresh directory while serving.

    The workers are spawned afterwards and inherit the variable, so prometheus-client starts in
    multiprocess mode in each of them. A directory set by the operator is used as it is.
    """
    if workers <= 1 or multiprocess_dir():
        yield multiprocess_dir()
        return
    with tempfile.TemporaryDirectory(prefix="tierline-metrics-") as directory:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        try:
            yield directory
        finally:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)


def count_engine_evaluations(n: int = 1) -> None:
    """Count `n` engine evaluations (called by the services that run the engine)."""
    if n > 0:
        ENGINE_EVALUATIONS.inc(n)


# Labelled children by (method, route, status): `labels()` validates and locks on every call,
# a dict lookup does not. Bounded like the labels themselves (route templates, not raw paths).
_CHILDREN: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def observe_request(method: str, route: str, status: int, duration_s: float) -> None:
    """Record one answered request (called by the request-log middleware)."""
    key = (method, route, status)
    children = _CHILDREN.get(key)
    if children is None:
        label = method if method in KNOWN_METHODS else "OTHER"
        children = (
            HTTP_REQUESTS.labels(label, route, str(status)),
            HTTP_LATENCY.labels(label, route),
        )
        if len(_CHILDREN) < 10_000:  # unknown methods are many keys for one label
            _CHILDREN[key] = children
    children[0].inc()
    children[1].observe(duration_s)


class CatalogCollector(Collector):
    """Reads the catalog version from the database at scrape time (same in every worker)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("tierline_database_up", "1 when the database answered the scrape.")
        version = GaugeMetricFamily(
            "tierline_catalog_version", "Catalog version (raised by every catalog write)."
        )
        try:
            with self.engine.connect() as conn:
                value = read_catalog_version(conn)
        except SQLAlchemyError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        if value is not None:
            version.add_metric([], float(value))
            yield version


def render_metrics(engine: Engine) -> bytes:
    """The Prometheus text exposition of this process (or all workers) plus the catalog gauges."""
    if multiprocess_dir():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        process_metrics = generate_latest(registry)
    else:
        process_metrics = generate_latest(REGISTRY)
    catalog = CollectorRegistry()
    catalog.register(CatalogCollector(engine))
    return process_metrics + generate_latest(catalog)
