"""The tier line: story numbers from the catalog and the engine, every build placed, the chart."""

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.engine import rule_of_thumb_gb
from app.models import Build
from app.services.catalog import export_document, import_document
from app.services.records import BUILD, MODEL, get_record

from ._html import parse


def test_story_quotes_the_rule_of_thumb_for_the_story_model_from_its_parameters(
    web: TestClient, db: Session
) -> None:
    model = get_record(db, MODEL, "deepseek-v3")
    need = rule_of_thumb_gb(model.params_total, "fp8")
    card = parse(web.get("/").text).one(id="story-model").text()
    # 671 B parameters × 1 byte at FP8 × 1.2: the figure people quote.
    assert round(need) == 805
    assert "~805 GB" in card


def test_story_desktop_card_shows_isolated_memory_and_a_no_from_the_engine(
    web: TestClient, db: Session
) -> None:
    build = get_record(db, BUILD, "4x-rtx-4090-workstation")
    card = parse(web.get("/").text).one(id="story-desktop").text()
    assert build.accelerator.memory_gb * build.accelerator_count == 96
    assert "96 GB" in card
    assert "isolated" in card
    compare = web.get(
        "/api/v1/compare",
        params={"builds": "4x-rtx-4090-workstation,2x-dgx-h200-cluster", "model": "deepseek-v3",
                "precision": "fp8"},
    ).json()
    verdict = next(r for r in compare["rows"] if r["key"] == "run_model")["display"][0]
    assert verdict.startswith("No")
    assert verdict in card


def test_story_cluster_card_shows_pooled_nodes_links_and_a_yes(
    web: TestClient, db: Session
) -> None:
    build = get_record(db, BUILD, "2x-dgx-h200-cluster")
    assert (build.accelerator.memory_gb, build.accelerator_count) == (141, 16)
    card = parse(web.get("/").text).one(id="story-cluster").text()
    assert "2,256 GB" in card  # 16 × 141 GB
    assert "1,128 GB pooled" in card  # 8 × 141 GB per NVSwitch node
    assert "NVSwitch" in card and "InfiniBand" in card
    assert "✓ Yes" in card


def test_every_catalog_build_is_placed_on_the_tier_line(web: TestClient) -> None:
    tiers = web.get("/api/v1/tiers").json()["tiers"]
    doc = parse(web.get("/").text)
    for group in tiers:
        section_rows = [
            row for row in doc.find_all("tr")
            if row.ancestor("section") is not None
            and row.ancestor("section").find("h2", id=f"tier-{group['tier']}") is not None
            and row.find("th", scope="row") is not None
        ]
        assert [r.one("th").text() for r in section_rows] == [b["name"] for b in group["builds"]]


def test_largest_model_each_build_runs_matches_the_tiers_api(web: TestClient) -> None:
    tiers = web.get("/api/v1/tiers", params={"precision": "int4"}).json()["tiers"]
    html = web.get("/", params={"precision": "int4"}).text
    for group in tiers:
        for b in group["builds"]:
            if b["largest_model"]:
                assert f'href="/models/{b["largest_model"]["slug"]}"' in html


def test_tier_line_chart_is_an_svg_cached_per_catalog_version(web: TestClient) -> None:
    first = web.get("/tierline.svg")
    second = web.get("/tierline.svg")
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("image/svg+xml")
    assert "<svg" in first.text and "Desktop" in first.text
    assert first.content == second.content
    assert "script-src" not in first.headers["content-security-policy"]


def test_bad_precision_gives_the_page_with_a_notice(web: TestClient) -> None:
    response = web.get("/", params={"precision": "fp7"})
    assert response.status_code == 200
    notice = parse(response.text).one(class_="notices").text()
    assert "precision" in notice


def test_home_page_revalidates_with_its_etag(web: TestClient) -> None:
    first = web.get("/")
    tag = first.headers["etag"]
    assert web.get("/").headers["etag"] == tag
    again = web.get("/", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""


def test_home_page_shows_a_catalog_edit_at_once(client: TestClient, session: Session) -> None:
    before = client.get("/")
    build = session.scalars(select(Build).where(Build.slug == "4x-rtx-4090-workstation")).one()
    assert build.name in before.text
    document = export_document(session)
    record = next(b for b in document["builds"] if b["slug"] == build.slug)
    record["name"] = "Renamed 4090 rig for the cache test"
    assert import_document(session, {"builds": [record]}, actor="test").ok
    after = client.get("/")
    assert "Renamed 4090 rig for the cache test" in after.text
    assert after.headers["etag"] != before.headers["etag"]


def test_a_largest_model_that_needs_offload_says_so_with_its_speed(web: TestClient) -> None:
    tiers = web.get("/api/v1/tiers").json()["tiers"]
    builds = {b["slug"]: b for group in tiers for b in group["builds"]}
    budget = builds["rtx-3060-12gb-64gb-ddr4-budget"]["largest_model"]
    dgx = builds["2x-dgx-h200-cluster"]["largest_model"]
    assert budget["offloaded"] and 0 < budget["decode_tokens_per_s"] < 5
    assert not dgx["offloaded"] and dgx["decode_tokens_per_s"] > 0
    doc = parse(web.get("/").text)
    row = next(
        r for r in doc.find_all("tr")
        if r.find("th", scope="row") is not None
        and r.one("th").text() == builds["rtx-3060-12gb-64gb-ddr4-budget"]["name"]
    )
    assert "with offload to host RAM" in row.text() and "tokens/s" in row.text()


def test_a_mixed_build_lists_its_card_kinds_on_the_tier_line(web: TestClient) -> None:
    tiers = web.get("/api/v1/tiers").json()["tiers"]
    mixed = next(
        b for g in tiers for b in g["builds"] if b["slug"] == "2x-rtx-3090-1x-rtx-4090-desktop"
    )
    assert mixed["accelerators_label"] == "2× RTX 3090 + 1× RTX 4090"
    row = next(
        r for r in parse(web.get("/").text).find_all("tr")
        if r.find("th", scope="row") is not None and r.one("th").text() == mixed["name"]
    )
    assert "2× RTX 3090 + 1× RTX 4090" in row.text() and "3 × NVIDIA" not in row.text()
