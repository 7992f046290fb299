"""Compare's numbers agree: the header says what its size is, no row repeats another's label,
precision is written one way, and displays (page and Markdown) come from app.formatting."""

from fastapi.testclient import TestClient

from app import formatting

from ._html import parse

BUILDS = "4x-rtx-4090-workstation,dgx-h200,2x-dgx-h200-cluster"
PARAMS = {"builds": BUILDS, "model": "llama-3-1-70b", "precision": "bf16", "batch": "4"}


def test_run_model_header_names_the_rule_of_thumb_and_the_cells_the_engines_need(
    web: TestClient,
) -> None:
    api = web.get("/api/v1/compare", params={"builds": BUILDS}).json()
    run = next(r for r in api["rows"] if r["key"] == "run_model")
    size = formatting.gb(api["model"]["rule_of_thumb_gb"])
    assert f"{size}: DeepSeek-V3 at FP8 by the rule of thumb" in run["label"]
    assert "the engine's detailed need" in run["label"]
    # The cells carry a different (engine) figure; the header must not present it as the same.
    assert not any(size in cell for cell in run["display"])


def test_no_two_rows_share_a_label_and_precision_is_upper_case(web: TestClient) -> None:
    for batch in ("1", "4"):
        api = web.get("/api/v1/compare", params={**PARAMS, "batch": batch}).json()
        labels = [r["label"] for r in api["rows"]]
        assert len(labels) == len(set(labels))
        assert not any("sequence(s)" in label for label in labels)
        assert not any("bf16" in label for label in labels)
        assert any("BF16" in label for label in labels)
    page = parse(web.get("/compare", params=PARAMS).text)
    assert "bf16" not in page.one("main").text()


def test_displays_are_the_shared_formatting_in_the_page_and_the_markdown(
    web: TestClient,
) -> None:
    api = web.get("/api/v1/compare", params=PARAMS).json()
    rows = {r["key"]: r for r in api["rows"]}
    shared = {
        "time_to_first_token_s": formatting.seconds,
        "decode_tokens_per_s": formatting.tps,
        "aggregate_decode_tokens_per_s": formatting.tps,
        "usd_per_million_tokens": formatting.usd,
        "power_w": formatting.watts,
        "total_memory_gb": formatting.gb,
        "price_usd": formatting.usd,
        "max_context_tokens_that_fit": formatting.tokens,
    }
    markdown = web.get("/compare.md", params=PARAMS).text
    for key, fmt in shared.items():
        expected = [fmt(v) for v in rows[key]["values"]]
        assert rows[key]["display"] == expected, key
        line = next(x for x in markdown.splitlines() if x.startswith(f"| {rows[key]['label']}"))
        for text in expected:
            assert text in line, (key, text)
