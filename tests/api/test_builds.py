"""GET /api/v1/builds, /builds/{slug}, /builds.csv: shape, filters, sort, pages, CSV, errors."""

import csv
import io
from typing import Any

import pytest

from app.schemas.build import BuildIn, BuildListItem, BuildRead
from app.schemas.listing import AcceleratorQuery, BuildQuery, ModelQuery
from app.services.records import strip_read_only

from ._support import problem_fields

STORY_DESKTOP = "4x-rtx-4090-workstation"
STORY_CLUSTER = "2x-dgx-h200-cluster"


def all_items(api: Any, **params: Any) -> list[dict[str, Any]]:
    body = api.get("/api/v1/builds", params={"per_page": 200, **params}).json()
    assert body["total"] == len(body["items"])
    return body["items"]


def test_list_has_every_build_with_the_item_fields(api, catalog):
    body = api.get("/api/v1/builds").json()
    assert body["total"] == len(catalog.builds)
    assert body["page"] == 1 and body["per_page"] == 50
    assert {i["slug"] for i in all_items(api)} == set(catalog.builds)
    for item in body["items"]:
        BuildListItem.model_validate(item)
        build = catalog.builds[item["slug"]]
        assert item["accelerator_count"] == build.nodes * build.accelerators_per_node
        assert item["total_memory_gb"] == pytest.approx(
            item["accelerator_count"] * build.accelerator.memory_gb
        )


def test_story_builds_carry_their_published_figures(api):
    items = {i["slug"]: i for i in all_items(api)}
    desktop, cluster = items[STORY_DESKTOP], items[STORY_CLUSTER]
    assert (desktop["tier"], desktop["memory_pooled"], desktop["total_memory_gb"]) == (
        "desktop",
        False,
        96,
    )
    assert desktop["pooled_memory_gb"] == 24
    assert (cluster["tier"], cluster["memory_pooled"], cluster["total_memory_gb"]) == (
        "cluster",
        True,
        2256,
    )
    assert cluster["pooled_memory_gb"] == 8 * 141


def test_pages_cover_every_build_once_and_link_to_the_next(api, catalog):
    url: str | None = "/api/v1/builds?per_page=7&sort=slug"
    seen: list[str] = []
    pages = 0
    while url is not None and pages < 50:
        response = api.get(url)
        body = response.json()
        seen += [i["slug"] for i in body["items"]]
        pages += 1
        assert len(body["items"]) <= 7
        link = response.headers.get("link", "")
        if body["next_url"] is None:
            assert 'rel="next"' not in link
        else:
            assert f'<{body["next_url"]}>; rel="next"' in link
        url = body["next_url"]
    assert seen == sorted(catalog.builds)
    assert pages == -(-len(catalog.builds) // 7)


def test_page_past_the_end_is_empty_with_the_total(api, catalog):
    body = api.get("/api/v1/builds", params={"page": 999, "per_page": 10}).json()
    assert body["items"] == [] and body["next_url"] is None
    assert body["total"] == len(catalog.builds)


def test_last_full_page_has_no_next(api, catalog):
    total = len(catalog.builds)
    body = api.get("/api/v1/builds", params={"per_page": total}).json()
    assert len(body["items"]) == total and body["next_url"] is None
    body = api.get("/api/v1/builds", params={"per_page": total - 1}).json()
    assert body["next_url"] is not None and "page=2" in body["next_url"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"per_page": 201}, "per_page"),
        ({"per_page": 0}, "per_page"),
        ({"page": 0}, "page"),
        ({"page": "two"}, "page"),
        ({"tier": "laptop"}, "tier"),
        ({"sort": "colour"}, "sort"),
        ({"sort": "-colour"}, "sort"),
        ({"min_memory_gb": -1}, "min_memory_gb"),
        ({"min_memory_gb": "1e400"}, "min_memory_gb"),
        ({"max_price_usd": "nan"}, "max_price_usd"),
        ({"q": "a\x00b"}, "q"),
        ({"q": "x" * 201}, "q"),
        ({"fits_model": "deepseek-v3", "precision": "fp7"}, "precision"),
        ({"fits_model": "deepseek-v3", "context_tokens": 10_000_001}, "context_tokens"),
        ({"fits_model": "Not A Slug"}, "fits_model"),
    ],
)
def test_bad_list_parameters_answer_422_naming_the_field(api, params, field):
    response = api.get("/api/v1/builds", params=params)
    assert response.status_code == 422
    assert field in problem_fields(response)


@pytest.mark.parametrize("tier", ["desktop", "dgx", "cluster"])
def test_tier_filter(api, catalog, tier):
    items = all_items(api, tier=tier)
    assert items and all(i["tier"] == tier for i in items)
    assert len(items) == sum(1 for b in catalog.builds.values() if b.tier == tier)


def test_vendor_filter_ignores_case(api, catalog):
    upper = all_items(api, vendor="NVIDIA")
    lower = all_items(api, vendor="nvidia")
    assert upper == lower
    expected = {s for s, b in catalog.builds.items() if b.accelerator.vendor.lower() == "nvidia"}
    assert {i["slug"] for i in upper} == expected
    assert expected != set(catalog.builds)


def test_memory_and_price_filters(api, catalog):
    big = all_items(api, min_memory_gb=500)
    assert big and all(i["total_memory_gb"] >= 500 for i in big)
    assert len(big) == sum(1 for i in all_items(api) if i["total_memory_gb"] >= 500)
    cheap = all_items(api, max_price_usd=20_000)
    assert cheap and all(i["price_usd"] is not None and i["price_usd"] <= 20_000 for i in cheap)
    assert STORY_DESKTOP in {i["slug"] for i in cheap}
    assert STORY_CLUSTER not in {i["slug"] for i in cheap}


def test_text_search(api):
    items = all_items(api, q="4090")
    assert STORY_DESKTOP in {i["slug"] for i in items}
    for i in items:
        text = " ".join([i["slug"], i["name"], i["accelerator"], i["accelerator_name"]]).lower()
        assert "4090" in text
    assert all_items(api, q="no-such-thing-anywhere") == []


@pytest.mark.parametrize("precision", ["fp8", "bf16"])
def test_fits_model_keeps_the_builds_the_engine_says_fit(api, catalog, precision):
    items = all_items(api, fits_model="deepseek-v3", precision=precision)
    expected = {
        slug
        for slug in catalog.builds
        if catalog.estimate(slug, "deepseek-v3", precision=precision).fits
    }
    assert {i["slug"] for i in items} == expected
    assert STORY_DESKTOP not in expected


def test_fits_model_story(api):
    slugs = {i["slug"] for i in all_items(api, fits_model="deepseek-v3")}
    assert STORY_CLUSTER in slugs and STORY_DESKTOP not in slugs


def test_fits_model_unknown_is_404_naming_it(api):
    response = api.get("/api/v1/builds", params={"fits_model": "no-such-model"})
    assert response.status_code == 404
    assert problem_fields(response) == ["fits_model"]


@pytest.mark.parametrize(
    "field",
    [
        "name",
        "slug",
        "price_usd",
        "power_w",
        "total_memory_gb",
        "pooled_memory_gb",
        "accelerator_count",
        "nodes",
        "accelerator_memory_gb",
        "intra_node_bandwidth_gbs",
    ],
)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_orders_values_with_nulls_last(api, field, descending):
    items = all_items(api, sort=("-" if descending else "") + field)
    values = [i[field] for i in items]
    present = [v for v in values if v is not None]
    assert values == present + [None] * (len(values) - len(present))
    if field in ("name", "slug"):
        present = [v.casefold() for v in present]
    assert present == sorted(present, reverse=descending)
    assert len(set(present)) > 1  # the test would not notice a missing sort otherwise


def test_default_sort_is_the_tier_line(api):
    tiers = [i["tier"] for i in all_items(api)]
    order = {"desktop": 0, "dgx": 1, "cluster": 2}
    assert [order[t] for t in tiers] == sorted(order[t] for t in tiers)


def test_detail_is_the_full_record_and_can_be_put_back(api, catalog):
    response = api.get(f"/api/v1/builds/{STORY_CLUSTER}")
    assert response.status_code == 200
    body = response.json()
    BuildRead.model_validate(body)
    record = BuildIn.model_validate(strip_read_only(body))
    assert record.slug == STORY_CLUSTER
    build = catalog.builds[STORY_CLUSTER]
    assert body["source_url"] == build.source_url and body["version"] == build.version
    assert body["price_source_url"] == build.price_source_url
    assert body["inter_node_link"]["kind"] == "infiniband"
    assert body["total_memory_gb"] == 2256 and body["memory_pooled"] is True
    assert response.headers["etag"] == f'"{build.version}"'


@pytest.mark.parametrize("slug", ["no-such-build", "UPPER", "a%00b", "x" * 150])
def test_detail_unknown_slug_is_404(api, slug):
    response = api.get(f"/api/v1/builds/{slug}")
    assert response.status_code == 404
    assert problem_fields(response) == ["slug"]


def test_csv_has_every_matching_row_with_units_in_the_header(api):
    response = api.get("/api/v1/builds.csv", params={"tier": "dgx", "per_page": 1})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    expected = all_items(api, tier="dgx")
    assert [r["slug"] for r in rows] == [i["slug"] for i in expected]
    header = response.text.splitlines()[0].split(",")
    assert {"total_memory_gb", "price_usd", "power_w", "intra_node_bandwidth_gbs"} <= set(header)
    first = rows[0]
    assert float(first["total_memory_gb"]) == expected[0]["total_memory_gb"]


def test_csv_refuses_bad_filters(api):
    response = api.get("/api/v1/builds.csv", params={"sort": "nope"})
    assert response.status_code == 422 and problem_fields(response) == ["sort"]


@pytest.mark.parametrize(
    ("path", "query"),
    [("/api/v1/builds", BuildQuery), ("/api/v1/accelerators", AcceleratorQuery),
     ("/api/v1/models", ModelQuery)],
)
def test_sort_values_are_documented_and_each_is_accepted(api, path, query):
    spec = api.get("/openapi.json").json()
    (param,) = [p for p in spec["paths"][path]["get"]["parameters"] if p["name"] == "sort"]
    (string,) = [b for b in param["schema"]["anyOf"] if b.get("type") == "string"]
    fields = set(query.SORT_FIELDS)
    assert set(string["enum"]) == {"", *fields, *(f"-{f}" for f in fields)}
    for value in string["enum"]:
        response = api.get(path, params={"sort": value, "per_page": 1})
        assert response.status_code == 200, (value, response.text)


MIXED = "2x-rtx-3090-1x-rtx-4090-desktop"


def test_mixed_build_reads_its_groups_host_and_label(api):
    body = api.get(f"/api/v1/builds/{MIXED}").json()
    assert [(g["accelerator"], g["count"]) for g in body["accelerators"]] == [
        ("rtx-3090", 2),
        ("rtx-4090", 1),
    ]
    assert body["accelerators_label"] == "2× RTX 3090 + 1× RTX 4090"
    assert body["mixed"] is True
    # The single-accelerator fields keep their meaning: the first card, cards per node.
    assert body["accelerator"] == "rtx-3090" and body["accelerators_per_node"] == 3
    assert body["total_memory_gb"] == 72
    assert body["host"]["ram_bandwidth_gbs"] == pytest.approx(2 * 3600 * 8 / 1000)
    assert body["host"]["ram_gb"] == body["host_memory_gb"] == 128
    assert body["slowest_pcie_gbs"] == pytest.approx(4 * 1.969)


def test_accelerator_filter_finds_a_card_in_any_group(api):
    slugs = [b["slug"] for b in api.get("/api/v1/builds?accelerator=rtx-4090&per_page=100")
             .json()["items"]]
    assert MIXED in slugs and "1x-rtx-4090-3x-rtx-3090-mixed-rig" in slugs


def test_single_kind_build_reads_as_one_group(api):
    body = api.get("/api/v1/builds/4x-rtx-4090-workstation").json()
    assert body["accelerators"] == [
        {"accelerator": "rtx-4090", "count": 4, "pcie_generation": None, "pcie_lanes": None}
    ]
    assert body["mixed"] is False and body["accelerators_label"] == "4× RTX 4090"
