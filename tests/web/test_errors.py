"""Error pages and escaping: nothing answers 500, catalog text is never markup."""

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.catalog_version import bump_catalog_version
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.models import Build, ModelProfile

from ._html import parse


def test_unknown_path_is_a_friendly_html_404(web: TestClient) -> None:
    response = web.get("/no/such/page")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    doc = parse(response.text)
    assert doc.one("h1").text() == "Page not found"
    assert doc.one("a", class_="skip-link") is not None


def test_unknown_api_path_stays_json(web: TestClient) -> None:
    response = web.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert "json" in response.headers["content-type"]


def test_wrong_method_on_a_page_is_an_html_405(web: TestClient) -> None:
    response = web.post("/builds")
    assert response.status_code == 405
    assert response.headers["content-type"].startswith("text/html")
    assert "allow" in response.headers


def test_domain_error_page_names_the_field(web: TestClient) -> None:
    response = web.get("/builds/Not A Slug")
    assert response.status_code == 404
    assert "Not A Slug" in response.text


def test_pages_asked_for_json_get_problem_json(web: TestClient) -> None:
    response = web.get("/builds/nope", headers={"accept": "application/json"})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


HOSTILE = "<script>alert('x')</script> & <b>bold</b>"


def test_catalog_text_is_escaped_on_every_page_that_shows_it(database_copies: Any) -> None:
    url = database_copies.copy(seeded=True)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        build = session.scalar(select(Build).where(Build.slug == "dgx-h200"))
        model = session.scalar(select(ModelProfile).where(ModelProfile.slug == "llama-3-1-8b"))
        assert build is not None and model is not None
        build.name = HOSTILE
        build.notes = HOSTILE
        model.name = HOSTILE
        bump_catalog_version(session)
        session.commit()
    engine.dispose()
    settings = Settings(database_url=url, seed_on_start=False, secret_key="t")
    with TestClient(create_app(settings)) as client:
        for page in ("/", "/builds", "/builds/dgx-h200", "/models", "/models/llama-3-1-8b",
                     "/compare?builds=dgx-h200,2x-dgx-h200-cluster",
                     "/estimate?build=dgx-h200&model=llama-3-1-8b",
                     "/recommend?model=llama-3-1-8b"):
            response = client.get(page)
            assert response.status_code == 200, page
            assert "<script>alert" not in response.text, page
            assert "<b>bold</b>" not in response.text, page
            assert "&lt;script&gt;alert(" in response.text, page
