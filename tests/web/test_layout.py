"""What every page shares: lang, skip link, canonical, JSON twin, footer provenance, print
stylesheet, labelled inputs, captioned tables, and nothing third-party or inline."""

import re
from datetime import date

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Accelerator, Build, CatalogState, ModelProfile

from ._html import Node, parse

PAGES = [
    "/",
    "/builds",
    "/builds?tier=dgx&sort=-price_usd",
    "/builds/4x-rtx-4090-workstation",
    "/compare",
    "/compare?builds=4x-rtx-4090-workstation,2x-dgx-h200-cluster",
    "/compare?builds=4x-rtx-4090-workstation,dgx-h200&model=llama-3-1-70b&precision=bf16",
    "/models",
    "/models/deepseek-v3",
    "/estimate",
    "/estimate?build=2x-dgx-h200-cluster&model=deepseek-v3&precision=fp8",
    "/recommend",
    "/recommend?model=llama-3-1-70b",
    "/glossary",
    "/about",
    "/about/engine",
]


@pytest.fixture(scope="module")
def pages(web: TestClient) -> dict[str, tuple[str, Node]]:
    out = {}
    for url in PAGES:
        response = web.get(url)
        assert response.status_code == 200, (url, response.text[:500])
        assert response.headers["content-type"].startswith("text/html")
        out[url] = (response.text, parse(response.text))
    return out


@pytest.mark.parametrize("url", PAGES)
def test_page_declares_language_and_has_a_skip_link_to_main(pages, url) -> None:
    _, doc = pages[url]
    assert doc.one("html").attrs.get("lang") == "en"
    skip = doc.one("a", class_="skip-link")
    assert skip.attrs["href"] == "#main"
    assert doc.one("main").attrs.get("id") == "main"


@pytest.mark.parametrize("url", PAGES)
def test_page_links_a_canonical_url_and_a_json_twin(pages, url, web: TestClient) -> None:
    _, doc = pages[url]
    canonical = doc.one("link", rel="canonical").attrs["href"] or ""
    assert canonical.startswith("http://testserver/")
    twin = doc.one("link", rel="alternate", type="application/json").attrs["href"] or ""
    response = web.get(twin)
    assert response.status_code == 200, (twin, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("url", PAGES)
def test_footer_gives_catalog_version_and_latest_as_of(pages, url, db: Session) -> None:
    _, doc = pages[url]
    version = db.scalar(select(CatalogState.version))
    dates: list[date] = [
        d
        for column in (Build.as_of, Accelerator.as_of, ModelProfile.as_of, Build.price_as_of,
                       Accelerator.price_as_of)
        if (d := db.scalar(select(func.max(column)))) is not None
    ]
    footer = doc.one("footer").text()
    assert f"Catalog version {version}" in footer
    assert max(dates).isoformat() in footer
    assert "source" in footer.lower()


@pytest.mark.parametrize("url", PAGES)
def test_page_has_a_print_stylesheet(pages, url) -> None:
    _, doc = pages[url]
    sheets = doc.find_all("link", rel="stylesheet")
    assert any(link.attrs.get("media") == "print" for link in sheets)


@pytest.mark.parametrize("url", PAGES)
def test_page_loads_nothing_from_other_hosts_and_has_no_inline_script_or_style(
    pages, url
) -> None:
    html, doc = pages[url]
    for node in doc.find_all("script"):
        assert node.attrs.get("src", "").startswith("/static/"), node.attrs
        assert not node.text(), "inline script"
    for node in doc.find_all("link"):
        href = node.attrs.get("href") or ""
        if node.attrs.get("rel") in ("stylesheet", "icon"):
            assert href.startswith("/"), href
    for node in doc.find_all("img"):
        assert (node.attrs.get("src") or "").startswith("/"), node.attrs
    assert not re.search(r"\son[a-z]+\s*=", html), "inline event handler"
    assert not re.search(r"\sstyle\s*=", html), "inline style attribute"
    assert "<style" not in html


@pytest.mark.parametrize("url", PAGES)
def test_every_form_control_has_a_label(pages, url) -> None:
    _, doc = pages[url]
    labelled = {n.attrs.get("for") for n in doc.find_all("label")}
    for control in doc.find_all("input") + doc.find_all("select") + doc.find_all("textarea"):
        if control.attrs.get("type") in ("hidden", "submit"):
            continue
        inside_label = control.ancestor("label") is not None
        assert inside_label or control.attrs.get("id") in labelled, control.attrs


@pytest.mark.parametrize("url", PAGES)
def test_every_table_has_a_caption_and_scoped_headers(pages, url) -> None:
    _, doc = pages[url]
    for table in doc.find_all("table"):
        assert table.find("caption") is not None and table.one("caption").text()
        headers = table.find_all("th")
        assert headers, "a table without headers"
        for th in headers:
            assert th.attrs.get("scope") in ("col", "row"), th.attrs


@pytest.mark.parametrize("url", PAGES)
def test_every_image_has_a_text_alternative(pages, url) -> None:
    _, doc = pages[url]
    for img in doc.find_all("img"):
        assert "alt" in img.attrs
        if img.ancestor("figure") is not None:
            assert len(img.attrs["alt"] or "") > 40, "charts need a real description"
