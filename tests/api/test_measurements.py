"""GET /api/v1/measurements: list, filters, sort, CSV, detail, errors."""

import csv
import io
from typing import Any

from app.schemas.measurement import MeasurementIn, MeasurementListItem, MeasurementRead
from app.services.records import strip_read_only

from ._support import problem_fields


def items(api: Any, **params: Any) -> list[dict[str, Any]]:
    body = api.get("/api/v1/measurements", params={"per_page": 200, **params}).json()
    return body["items"]


def total(api: Any, **params: Any) -> int:
    return int(api.get("/api/v1/measurements", params={"per_page": 1, **params}).json()["total"])


def test_list_shape_and_paging(api: Any) -> None:
    body = api.get("/api/v1/measurements", params={"per_page": 5}).json()
    assert len(body["items"]) == 5 and body["total"] > 5 and body["next_url"]
    for item in body["items"]:
        MeasurementListItem.model_validate(item)


def test_filters_keep_only_matching_rows(api: Any) -> None:
    everything = total(api)
    for field, value in (
        ("runtime", "vllm"),
        ("metric", "prefill_tokens_per_s"),
        ("model", "llama-3-8b"),
    ):
        kept = items(api, **{field: value})
        assert kept and all(i[field] == value for i in kept)
        assert total(api, **{field: value}) < everything
    on_card = items(api, accelerator="rtx-4090")
    # Runs on the card itself, or mixed runs that include it (named in accelerator_name).
    assert on_card and all(
        i["accelerator"] == "rtx-4090" or "4090" in i["accelerator_name"] for i in on_card
    )
    assert any(i["accelerator"] == "rtx-4090" for i in on_card)
    by_source = items(api, source="sgl-project/sglang")
    assert by_source and all("sgl-project/sglang" in i["source_url"] for i in by_source)


def test_sort_by_value_descending(api: Any) -> None:
    values = [i["value"] for i in items(api, metric="decode_tokens_per_s", sort="-value")]
    assert values == sorted(values, reverse=True)


def test_csv_has_every_matching_row_and_the_list_columns(api: Any) -> None:
    response = api.get("/api/v1/measurements.csv", params={"runtime": "llama.cpp"})
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert list(rows[0]) == list(MeasurementListItem.model_fields)
    assert len(rows) == total(api, runtime="llama.cpp") > 200  # every row, not one page


def test_detail_is_the_document_with_its_version_as_etag(api: Any) -> None:
    slug = items(api, per_page=1)[0]["slug"]
    response = api.get(f"/api/v1/measurements/{slug}")
    body = MeasurementRead.model_validate(response.json())
    assert response.headers["etag"] == f'"{body.version}"'
    # What GET answers is what the admin PUT accepts back.
    MeasurementIn.model_validate(strip_read_only(response.json()))
    assert body.source_url.startswith("http")


def test_unknown_slug_and_bad_filters_are_problems_naming_the_field(api: Any) -> None:
    missing = api.get("/api/v1/measurements/no-such-measurement")
    assert missing.status_code == 404 and problem_fields(missing) == ["slug"]
    bad = api.get("/api/v1/measurements", params={"metric": "speed", "sort": "colour"})
    assert bad.status_code == 422
    assert set(problem_fields(bad)) == {"metric", "sort"}
