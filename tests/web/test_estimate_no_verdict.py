"""The calculator's "No" leads somewhere; a pasted config shows what was parsed."""

import json
from urllib.parse import parse_qsl, urlsplit

from fastapi.testclient import TestClient

from app.engine import PRECISIONS

from ._html import parse

# Offload off: with its 256 GB of host RAM the rig would otherwise run the model partly from RAM.
NO = {
    "build": "4x-rtx-4090-workstation",
    "model": "llama-3-1-70b",
    "precision": "bf16",
    "offload": "none",
}


def _fits(web: TestClient, params: dict[str, str]) -> bool:
    response = web.get("/estimate.json", params=params)
    assert response.status_code == 200, response.text
    return bool(response.json()["fits"])


def test_no_links_to_the_builds_that_run_the_model_at_that_precision(web: TestClient) -> None:
    assert not _fits(web, NO)
    doc = parse(web.get("/estimate", params=NO).text)
    href = doc.one("a", class_="builds-that-fit").attrs["href"] or ""
    query = dict(parse_qsl(urlsplit(href).query))
    assert urlsplit(href).path == "/builds"
    assert (query["fits_model"], query["precision"]) == ("llama-3-1-70b", "bf16")
    listed = web.get("/api/v1/builds", params=query).json()["items"]
    # The builds list judges fit with the default workload (offload allowed).
    assert listed and all(
        _fits(web, {**NO, "build": item["slug"], "offload": "auto"}) for item in listed[:3]
    )


def test_no_offers_the_highest_lower_precision_that_fits_here(web: TestClient) -> None:
    doc = parse(web.get("/estimate", params=NO).text)
    link = doc.one("a", class_="precision-that-fits")
    query = dict(parse_qsl(urlsplit(link.attrs["href"] or "").query))
    assert _fits(web, query)
    bits = {p.name: p.bits_per_weight for p in PRECISIONS.values()}
    higher = [p for p, b in bits.items() if bits[query["precision"]] < b < bits["bf16"]]
    assert not any(_fits(web, {**NO, "precision": p}) for p in higher)


def test_no_offers_the_longest_context_that_fits_when_only_the_cache_is_too_big(
    web: TestClient,
) -> None:
    params = {"build": "dgx-h200", "model": "llama-3-1-70b", "precision": "bf16",
              "context_tokens": "131072", "batch": "64", "offload": "none"}
    assert not _fits(web, params)
    longest = web.get("/estimate.json", params=params).json()["max_context_tokens_that_fit"]
    doc = parse(web.get("/estimate", params=params).text)
    link = doc.one("a", class_="context-that-fits")
    assert f"{longest:,}" in link.text()
    assert _fits(web, dict(parse_qsl(urlsplit(link.attrs["href"] or "").query)))


def test_yes_has_no_ways_out(web: TestClient) -> None:
    doc = parse(web.get("/estimate", params={**NO, "build": "2x-dgx-h200-cluster"}).text)
    assert doc.find(class_="no-verdict-help") is None


def test_pasted_config_shows_what_was_parsed(web: TestClient) -> None:
    model = web.get("/api/v1/models/deepseek-v3").json()
    form = {"build": "2x-dgx-h200-cluster", "model_source": "config", "model_name": "Pasted",
            "config": json.dumps(model["config"]), "precision": "fp8"}
    doc = parse(web.get("/estimate", params=form).text)
    text = doc.one(class_="parsed-config").text()
    # Counted from the config (671B total; 37.6B active: the published 37B rounds the shared
    # expert and embeddings differently).
    assert "671B" in text and "37.6B" in text
    assert "MLA" in text
    assert "8 of 256 routed per token" in text
    # The KV cache stays 16-bit by default: (512 + 64) × 61 layers × 2 bytes.
    assert "70,272 bytes" in text
    # A catalog model is not a pasted parse: no panel.
    catalog = parse(web.get("/estimate", params={**NO}).text)
    assert catalog.find(class_="parsed-config") is None
