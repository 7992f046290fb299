"""XSS: markup in every text field an admin can set is escaped on every public page, and
`javascript:` URLs are refused where a source URL is expected."""

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.services.catalog import export_document, import_document
from tests.reliability.rel_support import app_routes

PAYLOAD = '"><img src=x onerror=alert(1)><script>alert(1)</script>'
SHORT_PAYLOAD = "<script>alert(1)</script>"
# What must never reach a page unescaped.
RAW_MARKERS = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>")
URL_FIELDS = ("source_url", "price_source_url")
KIND_PAGES = {"builds": "builds", "accelerators": "accelerators", "models": "models"}


def _string_paths(record: dict[str, Any]) -> Iterator[tuple[str, ...]]:
    """Paths of the string fields of a record, one level of nesting included."""
    for key, value in record.items():
        if key == "slug" or key in URL_FIELDS or key == "config":
            continue
        if isinstance(value, str) or value is None:
            yield (key,)
        elif isinstance(value, dict):
            for sub, subvalue in value.items():
                if isinstance(subvalue, str) or subvalue is None:
                    yield (key, sub)


def _set(record: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


@pytest.fixture(scope="module")
def poisoned(database_copies) -> Iterator[tuple[TestClient, dict[str, str], list[str]]]:  # type: ignore[no-untyped-def]
    """One record of each kind with every text field the import accepts set to markup."""
    url = database_copies.copy(seeded=True)
    engine = make_engine(url)
    targets: dict[str, str] = {}
    accepted: list[str] = []
    with make_sessionmaker(engine)() as session:
        document = export_document(session)
        changed: dict[str, list[dict[str, Any]]] = {}
        # The poisoned build's own accelerator is the poisoned one, so build pages show both.
        first_build = document["builds"][0]
        firsts = {
            "builds": first_build,
            "accelerators": next(a for a in document["accelerators"]
                                 if a["slug"] == first_build["accelerator"]),
            "models": document["models"][0],
        }
        for kind, first in firsts.items():
            record = copy.deepcopy(first)
            targets[kind] = record["slug"]
            for path in list(_string_paths(record)):
                for payload in (PAYLOAD, SHORT_PAYLOAD):
                    trial = copy.deepcopy(record)
                    _set(trial, path, payload)
                    if import_document(session, {kind: [trial]}, actor="test", dry_run=True).ok:
                        record = trial
                        accepted.append(f"{kind}.{'.'.join(path)}")
                        break
            changed[kind] = [record]
        result = import_document(session, changed, actor="test:xss")
        assert result.ok, [e.as_dict() for e in result.errors]
    engine.dispose()
    app = create_app(Settings(database_url=url, seed_on_start=False, secret_key="test-secret"))
    with TestClient(app) as client:
        yield client, targets, accepted


def _public_pages(client: TestClient, targets: dict[str, str]) -> list[str]:
    build, model = targets["builds"], targets["models"]
    query = f"builds={build},{_other_build(client, build)}&build={build}&model={model}"
    pages = []
    for path, methods in app_routes(client.app):
        if "GET" not in methods or path.startswith(("/api/", "/admin", "/docs", "/metrics")):
            continue
        if path in ("/openapi.json", "/healthz") or path.endswith((".json", ".csv", ".md")):
            continue
        params = re.findall(r"{([^}]+)}", path)
        if not params:
            pages.append(path)
            # Pages that show records only when asked (compare, estimate, recommend, charts):
            # unknown query parameters are ignored elsewhere.
            pages.append(f"{path}?{query}")
            continue
        kind = next((k for k in KIND_PAGES if path.startswith(f"/{k}/")), None)
        if kind and len(params) == 1:
            pages.append(path.replace("{" + params[0] + "}", targets[kind]))
    return pages


def _other_build(client: TestClient, slug: str) -> str:
    items = client.get("/api/v1/builds", params={"per_page": 2}).json()["items"]
    return next(item["slug"] for item in items if item["slug"] != slug)


def test_every_admin_text_field_is_escaped_on_every_public_page(poisoned) -> None:  # type: ignore[no-untyped-def]
    client, targets, accepted = poisoned
    assert any(field.startswith("builds.") for field in accepted)
    assert "builds.name" in accepted and "models.name" in accepted
    pages = _public_pages(client, targets)
    assert pages
    shown_somewhere = False
    for page in pages:
        response = client.get(page, headers={"accept": "text/html"})
        assert response.status_code < 500, page
        if not re.search(r"html|svg", response.headers.get("content-type", "")):
            continue
        for marker in RAW_MARKERS:
            assert marker not in response.text, f"{page} renders {marker!r} unescaped"
        shown_somewhere |= "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    # The payloads did reach the pages (escaped), so the check above is not vacuous.
    assert shown_somewhere, f"no page showed a poisoned field; pages: {pages}"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JaVaScRiPt:alert(document.cookie)",
                                 "data:text/html,<script>alert(1)</script>",
                                 " javascript:alert(1)"])
def test_javascript_urls_are_refused(session, url: str) -> None:  # type: ignore[no-untyped-def]
    document = export_document(session)
    for kind in ("builds", "accelerators", "models"):
        record = copy.deepcopy(document[kind][0])
        record["source_url"] = url
        result = import_document(session, {kind: [record]}, actor="test", dry_run=True)
        assert not result.ok
        assert any(e.field.endswith("source_url") for e in result.errors), result.errors


def test_markdown_exports_keep_poisoned_names_as_text(poisoned) -> None:  # type: ignore[no-untyped-def]
    client, targets, _accepted = poisoned
    build = targets["builds"]
    response = client.get(f"/compare.md?builds={build},{_other_build(client, build)}")
    assert response.status_code == 200
    text = response.text
    for marker in RAW_MARKERS:
        assert marker not in text, f"compare.md carries {marker!r} as raw HTML"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the name is there, as text


def test_markdown_link_and_emphasis_syntax_in_a_name_stays_text() -> None:
    from app.schemas.build import BuildListItem
    from app.schemas.compare import CompareOut
    from app.web.compare import markdown_table

    hostile = "[click](javascript:alert(1)) *bold* `code` a|b ![img](x)"
    # Only the name matters here: the typed answer is built without the other fields.
    build = BuildListItem.model_construct(name=hostile)
    table = markdown_table(CompareOut.model_construct(builds=[build], rows=[]))
    header = table.splitlines()[0]
    assert header.count(" | ") == 1  # the name's own pipe is escaped, not a new column
    for raw in ("[click](", "*bold*", "`code`", "![img]"):
        assert raw not in header, raw
