"""schemathesis over every operation of the OpenAPI document, in-process: no server errors, and
every response conforms to its documented status codes, content type, headers and schema.

Positive and negative data, up to 100 generated cases per operation (FUZZ_EXAMPLES below). Admin
operations are called with a valid token so their validation is exercised, not just the 401; the
database is this module's own seeded copy, so the fuzzer's writes touch nothing else.

The cases come from schemathesis' documented `APIOperation.as_strategy` under plain Hypothesis
`@given`, not from its pytest plugin: the plugin reaches into pytest internals and broke on a new
pytest release, while this path depends only on public APIs of both.
"""

import os
from collections.abc import Iterator

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.services.tokens import create_token

# The full 100 cases per operation run once, in the SQLite suite (about 2 minutes on 2 cores);
# the PostgreSQL suite repeats a shorter pass (the same operations, 20 cases each) to catch
# backend-specific 500s; benchmarks/fuzz_http.py runs a longer pass over HTTP on PostgreSQL.
ON_POSTGRES = bool(os.environ.get("TIERLINE_TEST_DATABASE_URL"))
FUZZ_EXAMPLES = int(os.environ.get("TIERLINE_FUZZ_EXAMPLES", "20" if ON_POSTGRES else "100"))


def _operation_labels() -> list[str]:
    """Every operation of the document, read at collection time (no database is touched)."""
    document = create_app(Settings(seed_on_start=False, secret_key="test-secret")).openapi()
    return [
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "put", "post", "patch", "delete")
    ]


@pytest.fixture(scope="module")
def fuzz_app(database_copies) -> Iterator[tuple[object, str]]:  # type: ignore[no-untyped-def]
    url = database_copies.copy(seeded=True)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        token = create_token(session, name="fuzzer")
    engine.dispose()
    app = create_app(Settings(database_url=url, seed_on_start=False, secret_key="test-secret"))
    with TestClient(app):  # runs the lifespan
        yield app, token


@pytest.fixture(scope="module")
def api_schema(fuzz_app):  # type: ignore[no-untyped-def]
    app, _ = fuzz_app
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    # Schema-valid input may still be refused with 422 for reasons OpenAPI cannot express
    # (cross-field rules such as tensor_parallel x pipeline_parallel <= accelerators, slugs that
    # must name existing records); every other check, response conformance included, stays on.
    schema.config.checks.update(excluded_check_names=["positive_data_acceptance"])
    return schema


def test_every_operation_is_fuzzed(api_schema) -> None:  # type: ignore[no-untyped-def]
    """The collected labels are exactly the served document's operations (none left unfuzzed)."""
    served = {op.ok().label for op in api_schema.get_all_operations()}
    assert served == set(_operation_labels())


@pytest.mark.parametrize("label", _operation_labels())
def test_api_operation(label: str, api_schema, fuzz_app) -> None:  # type: ignore[no-untyped-def]
    _, token = fuzz_app
    operation = api_schema.find_operation_by_label(label)
    assert operation is not None, label
    strategy = st.one_of(
        operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )

    @given(case=strategy)
    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case) -> None:  # type: ignore[no-untyped-def]
        case.call_and_validate(headers={"Authorization": f"Bearer {token}"})

    run()
