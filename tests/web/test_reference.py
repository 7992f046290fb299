"""Glossary, "About the numbers" and the rendered engine documentation."""

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app

from ._html import parse


def test_glossary_defines_the_link_and_parallelism_terms(web: TestClient) -> None:
    doc = parse(web.get("/glossary").text)
    for key in ("nvlink", "nvswitch", "infiniband", "kv-cache", "tensor-parallel",
                "pipeline-parallel"):
        assert doc.find("dt", id=key) is not None, key
    terms = web.get("/glossary.json").json()["terms"]
    assert {t["key"] for t in terms} >= {"nvlink", "kv-cache"}


def test_pages_explain_terms_inline_with_abbr_linking_the_glossary(web: TestClient) -> None:
    doc = parse(web.get("/").text)
    abbrs = doc.find_all("abbr")
    assert any(a.text() == "NVSwitch" and "switch" in (a.attrs.get("title") or "")
               for a in abbrs)
    assert all(a.ancestor("a").attrs["href"].startswith("/glossary#") for a in abbrs)


def _about_client(tmp_path: Path, database_url: str, text: str | None) -> TestClient:
    docs = tmp_path / "docs"
    docs.mkdir()
    if text is not None:
        (docs / "engine.md").write_text(text, encoding="utf-8")
    settings = Settings(database_url=database_url, seed_on_start=False, secret_key="t",
                        docs_dir=docs)
    return TestClient(create_app(settings))


ENGINE_MD = """# Engine

## 1. Fit

Weights plus KV cache.

## 8. Accuracy (`benchmarks/accuracy.py`)

| metric | value |
| --- | --- |
| decode median error | 11.2 % |

Fit verdicts agree 100 %.

## 9. Cost

Amortised price.
"""


def test_about_shows_the_accuracy_section_of_the_engine_doc(
    tmp_path: Path, database_copies: Any
) -> None:
    with _about_client(tmp_path, database_copies.copy(seeded=True), ENGINE_MD) as client:
        doc = parse(client.get("/about").text)
        accuracy = doc.one(class_="accuracy").text()
        assert "decode median error" in accuracy and "11.2 %" in accuracy
        assert "Amortised price" not in accuracy  # only that section
        table = doc.one(class_="accuracy").one("table")
        assert table.one("caption").text().startswith("Accuracy")
        assert all(th.attrs.get("scope") == "col" for th in table.find_all("th"))
        full = client.get("/about/engine")
        assert "Amortised price" in full.text
        md = client.get("/about/engine.md")
        assert md.text == ENGINE_MD and md.headers["content-type"].startswith("text/markdown")
        assert client.get("/about.json").json()["accuracy_markdown"].count("11.2 %") == 1


def test_about_without_an_engine_doc_says_so(tmp_path: Path, database_copies: Any) -> None:
    with _about_client(tmp_path, database_copies.copy(seeded=True), None) as client:
        response = client.get("/about")
        assert response.status_code == 200
        assert "not available" in response.text
        assert client.get("/about/engine.md").status_code == 404


def test_repository_engine_doc_renders(web: TestClient) -> None:
    response = web.get("/about/engine")
    assert response.status_code == 200
    assert "<h2" in response.text
