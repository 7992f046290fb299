"""Property: no hostile input makes any route answer 5xx.

Hypothesis sends every route (public pages and API, the admin API with a valid token, admin
pages with a signed-in session) huge integers (past float range, past 2^63, past Python's
4,300-digit conversion limit), 1e400, NaN, NUL bytes, lone surrogates, long strings and deeply
nested JSON, in path segments, query parameters, pasted configs and JSON/YAML bodies. Runs on
the suite's backend (SQLite, or PostgreSQL with TIERLINE_TEST_DATABASE_URL).
"""

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.services.tokens import create_token
from tests.reliability.rel_support import app_routes

EXAMPLES = 12
DEPTH = 3000
# Raw JSON fragments: written into bodies as text, since several are not representable as
# Python values json.dumps accepts (or would be normalised by it).
HOSTILE_FRAGMENTS = [
    "1" + "0" * 309,  # past float range: OverflowError in float(), math.isfinite()
    "-" + "9" * 400,
    str(2**63 + 7),
    str(2**31 + 7),
    "7" * 4301,  # past Python's int/str conversion limit
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    '"a\\u0000b"',
    '"\\ud800"',
    json.dumps("x" * 20_000),
    "[" * DEPTH + "]" * DEPTH,
    '{"a":' * DEPTH + "1" + "}" * DEPTH,
    "-0",
    "true",
    "null",
    "[]",
    "{}",
]
HOSTILE_TEXT = [
    "1" + "0" * 309,
    "9" * 4301,
    "1e400",
    "-1e400",
    "nan",
    "inf",
    "-1",
    "0",
    "a\x00b",
    "\x00",
    "x" * 5000,
    "é" * 300,
    "../../etc/passwd",
    "<svg/onload=alert(1)>",
    "*",
    ",,,",
]
# Query names the routes read (declared ones are added per route): pages read raw queries.
KNOWN_QUERY_NAMES = [
    "q", "sort", "page", "per_page", "tier", "vendor", "fits_model", "precision", "model",
    "builds", "batch", "context_tokens", "prompt_tokens", "mode", "kind", "slug", "action",
    "actor", "next", "build", "build_source", "model_source", "config", "model_name", "b_nodes",
    "b_per_node", "a_memory_gb", "a_bandwidth_gbs", "a_fp16_tflops", "runtime", "parallelism",
    "training_tokens", "zero_stage", "lora_rank", "utilization", "pue", "dry_run",
]
LLAMA_CONFIG: dict[str, Any] = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 131072,
}
PLACEHOLDER = "__HOSTILE__"


def with_fragment(template: Any, pointer: list[Any], fragment: str) -> str:
    """`template` as JSON text with the value at `pointer` replaced by the raw `fragment`."""
    document = json.loads(json.dumps(template))
    node = document
    for key in pointer[:-1]:
        node = node[key]
    node[pointer[-1]] = PLACEHOLDER
    return json.dumps(document).replace(json.dumps(PLACEHOLDER), fragment, 1)


def leaves(value: Any, path: list[Any] | None = None) -> Iterator[list[Any]]:
    """Every pointer into `value` (containers included), for the fragment to replace."""
    path = path or []
    if path:
        yield path
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        yield from leaves(item, [*path, key])


@pytest.fixture(scope="module")
def hostile_client(database_copies: Any) -> Iterator[tuple[TestClient, dict[str, Any]]]:
    url = database_copies.copy(seeded=True)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        token = create_token(session, name="prober")
    engine.dispose()
    app = create_app(Settings(database_url=url, seed_on_start=False, secret_key="hostile-key"))
    with TestClient(app, raise_server_exceptions=False) as client:
        # An admin session for the pages, a Bearer token for the API.
        login = client.get("/admin/login")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
        assert csrf
        signed_in = client.post("/admin/login", data={"token": token, "csrf_token": csrf[1]},
                                follow_redirects=False)
        assert signed_in.status_code == 303
        client.headers["Authorization"] = f"Bearer {token}"
        build = client.get("/api/v1/builds", params={"per_page": 1}).json()["items"][0]["slug"]
        model = client.get("/api/v1/models", params={"per_page": 1}).json()["items"][0]["slug"]
        records = {
            "builds": client.get(f"/api/v1/admin/builds/{build}").json(),
            "models": client.get(f"/api/v1/admin/models/{model}").json(),
        }
        yield client, {"build": build, "model": model, "records": records, "app": app}


def _declared_query_names(app: Any, path: str, method: str) -> list[str]:
    for route in app.routes:
        if getattr(route, "path", None) == path and method in getattr(route, "methods", ()):
            dependant = getattr(route, "dependant", None)
            if dependant is not None:
                return [p.name for p in dependant.query_params]
    return []


ROUTES = sorted(
    (path, method)
    for path, methods in app_routes(create_app(Settings(database_url="sqlite://",
                                                        secret_key="collect-only")))
    for method in methods
    if method != "HEAD" and not path.startswith(("/static", "/docs"))
)


def body_templates(path: str, context: dict[str, Any]) -> list[Any]:
    """Valid-looking bodies for a write route, for a hostile fragment to be planted in."""
    estimate = {"build": context["build"], "model": {"name": "x", "config": LLAMA_CONFIG},
                "workload": {"batch": 1, "context_tokens": 4096}}
    if path == "/api/v1/estimate":
        return [estimate]
    if path == "/api/v1/estimate/batch":
        return [[estimate, {"build": context["build"], "model": context["model"]}]]
    if path.endswith("/from-config"):
        return [{"slug": "probe", "name": "Probe", "config": LLAMA_CONFIG,
                 "source_url": "https://example.org/config.json", "as_of": "2024-01-01"}]
    if path.endswith("/import"):
        return [{"builds": [context["records"]["builds"]]},
                {"models": [context["records"]["models"]]}]
    for key in ("builds", "models"):
        if f"/admin/{key}/" in path:
            return [context["records"][key]]
    return [{"name": "x"}]


@pytest.mark.parametrize(("path", "method"), ROUTES, ids=[f"{m} {p}" for p, m in ROUTES])
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_no_hostile_input_is_a_5xx(  # type: ignore[no-untyped-def]
    hostile_client, path: str, method: str, data: st.DataObject
) -> None:
    client, context = hostile_client
    app = context["app"]
    # Path parameters: a real slug or hostile text.
    def fill(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[0]
        real = {"event_id": "1"}.get(name) or (
            context["model"] if "/models/" in path else context["build"])
        return quote(data.draw(st.sampled_from([real, *HOSTILE_TEXT[:12]]), label=name), safe="")

    url = re.sub(r"{([^}]+)}", fill, path)
    names = sorted(set(_declared_query_names(app, path, method)) | set(KNOWN_QUERY_NAMES))
    chosen = data.draw(st.lists(st.sampled_from(names), min_size=0, max_size=3, unique=True),
                       label="query names")
    params: dict[str, str] = {}
    for name in chosen:
        if name == "config":
            params["model_source"] = "config"
            template = data.draw(st.sampled_from(list(leaves(LLAMA_CONFIG))), label="config at")
            params[name] = with_fragment(LLAMA_CONFIG, template,
                                         data.draw(st.sampled_from(HOSTILE_FRAGMENTS)))
        else:
            params[name] = data.draw(st.sampled_from(HOSTILE_TEXT), label=name)
    request: dict[str, Any] = {"params": params, "follow_redirects": False}
    if method in ("POST", "PUT", "PATCH"):
        template = data.draw(st.sampled_from(body_templates(path, context)), label="template")
        pointer = data.draw(st.sampled_from(list(leaves(template)) or [[]]), label="at")
        fragment = data.draw(st.sampled_from(HOSTILE_FRAGMENTS), label="fragment")
        text = with_fragment(template, pointer, fragment) if pointer else fragment
        as_yaml = path.endswith("/import") and data.draw(st.booleans(), label="yaml")
        # YAML is a superset of JSON: the same text exercises the YAML loader.
        request["content"] = text.encode("utf-8", "surrogatepass")
        request["headers"] = {
            "Content-Type": "application/yaml" if as_yaml else "application/json",
            "If-Match": '"1"',
        }
        if path.startswith("/admin"):  # page forms: urlencoded fields, CSRF included
            request.pop("content")
            request["headers"] = {}
            request["data"] = {"csrf_token": "x", "text": text[:200_000]}
    response = client.request(method, url, **request)
    assert response.status_code < 500, (
        f"{method} {url[:120]} params={ {k: v[:60] for k, v in params.items()} } -> "
        f"{response.status_code} {response.text[:300]}"
    )
