"""Admin fixtures: the seeded catalog plus a few records of our own, and a valid token."""

import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from app.db import make_engine, make_sessionmaker
from app.migrate import upgrade_to_head
from app.services.catalog import import_document
from app.services.tokens import create_token

LLAMA_8B_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

ACCELERATORS = [
    {
        "slug": "adm-rtx-4090",
        "name": "Test RTX 4090",
        "vendor": "NVIDIA",
        "memory_gb": 24,
        "memory_bandwidth_gbs": 1008,
        "fp16_tflops": 165.2,
        "tdp_w": 450,
        "source_url": "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/",
        "as_of": "2024-01-15",
    },
    {
        "slug": "adm-h200",
        "name": "Test H200 SXM",
        "vendor": "NVIDIA",
        "memory_gb": 141,
        "memory_bandwidth_gbs": 4800,
        "fp16_tflops": 989,
        "fp8_tflops": 1979,
        "tdp_w": 700,
        "source_url": "https://www.nvidia.com/en-us/data-center/h200/",
        "as_of": "2024-11-01",
    },
]
BUILDS = [
    {
        "slug": "adm-4x-4090",
        "name": "Test 4x RTX 4090 workstation",
        "accelerator": "adm-rtx-4090",
        "accelerators_per_node": 4,
        "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 64},
        "power_w": 2400,
        "price_usd": 10000,
        "price_source_url": "https://example.com/quote",
        "price_as_of": "2024-06-01",
        "source_url": "https://example.com/4x4090",
        "as_of": "2024-06-01",
    },
    {
        "slug": "adm-dgx-h200",
        "name": "Test DGX H200",
        "accelerator": "adm-h200",
        "accelerators_per_node": 8,
        "intra_node_link": {"kind": "nvswitch", "bandwidth_gbs": 900},
        "power_w": 10200,
        "failover": "hardware HA",
        "scheduling": "Kubernetes",
        "source_url": "https://www.nvidia.com/en-us/data-center/dgx-h200/",
        "as_of": "2024-11-01",
    },
]
MODELS = [
    {
        "slug": "adm-llama-8b",
        "name": "Test Llama 3.1 8B",
        "organization": "Meta",
        "params_total": 8_030_261_248,
        "params_active": 8_030_261_248,
        "max_context_tokens": 131072,
        "config": LLAMA_8B_CONFIG,
        "source_url": "https://huggingface.co/meta-llama/Llama-3.1-8B",
        "as_of": "2024-07-23",
    }
]
FIXTURE_DOCUMENT = {"accelerators": ACCELERATORS, "builds": BUILDS, "models": MODELS}


@pytest.fixture(scope="session")
def admin_template(database_copies: Any) -> str:
    """The seeded catalog plus this package's own records, built once per session."""
    url: str = database_copies.copy(seeded=True)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        result = import_document(session, FIXTURE_DOCUMENT, actor="fixture")
    engine.dispose()
    assert result.ok, [e.as_dict() for e in result.errors]
    return url


@pytest.fixture
def database_url(database_copies: Any, admin_template: str) -> str:
    """A fresh copy of `admin_template` per test (independent of the seed's figures)."""
    if database_copies.postgres is None:
        target = database_copies.tmp / f"admin_{uuid.uuid4().hex}.db"
        shutil.copyfile(make_url(admin_template).database, target)
        return f"sqlite:///{target}"
    name = database_copies.postgres.create(template=make_url(admin_template).database)
    database_copies.created.append(name)
    url: str = database_copies.postgres.url(name)
    return url


@pytest.fixture
def pg_url(postgres_factory: Any) -> Iterator[str]:
    """A migrated PostgreSQL database of our own holding the fixture records, for races that
    need PostgreSQL whatever the suite's backend."""
    name = postgres_factory.create()
    url: str = postgres_factory.url(name)
    try:
        upgrade_to_head(url)
        engine = make_engine(url)
        with make_sessionmaker(engine)() as session:
            assert import_document(session, FIXTURE_DOCUMENT, actor="fixture").ok
        engine.dispose()
        yield url
    finally:
        postgres_factory.drop(name)


def backend_url(backend: str, request: pytest.FixtureRequest) -> str:
    """The database of a test parametrized over "sqlite" and "postgresql": `pg_url` or the
    suite's own copy (skipped when the suite itself runs on PostgreSQL)."""
    url: str = request.getfixturevalue("pg_url" if backend == "postgresql" else "database_url")
    if backend == "sqlite" and not url.startswith("sqlite"):
        pytest.skip("the suite's backend is PostgreSQL; the postgresql case covers it")
    return url


@pytest.fixture
def admin_token(database_url: str) -> str:
    engine = make_engine(database_url)
    with make_sessionmaker(engine)() as session:
        token = create_token(session, name="alice")
    engine.dispose()
    return token


@pytest.fixture
def auth(admin_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {admin_token}"}


@pytest.fixture
def admin_client(client: TestClient, auth: dict[str, str]) -> Iterator[TestClient]:
    client.headers.update(auth)
    yield client


def etag_of(client: TestClient, kind_key: str, slug: str) -> str:
    response = client.get(f"/api/v1/admin/{kind_key}/{slug}")
    assert response.status_code == 200, response.text
    return response.headers["etag"]
