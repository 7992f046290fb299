"""The calculator: same request and service as POST /api/v1/estimate, as a GET form."""

import json

from fastapi.testclient import TestClient

from ._html import parse

STORY = {"build": "2x-dgx-h200-cluster", "model": "deepseek-v3", "precision": "fp8"}


def _api(web: TestClient, build: object, model: object, **workload: object) -> dict:
    response = web.post("/api/v1/estimate",
                        json={"build": build, "model": model, "workload": workload})
    assert response.status_code == 200, response.text
    return response.json()


def test_verdict_is_the_engines_in_words(web: TestClient) -> None:
    for build, word in (("4x-rtx-4090-workstation", "No"), ("2x-dgx-h200-cluster", "Yes")):
        api = _api(web, build, "deepseek-v3", precision="fp8")
        doc = parse(web.get("/estimate", params={**STORY, "build": build}).text)
        box = doc.one(class_="verdict-box").text()
        assert word in box and api["verdict"] in box
        assert ("is-yes" in doc.one(class_="verdict-box").attrs["class"]) == api["fits"]


def test_result_shows_breakdown_plan_speed_cost_findings_and_assumptions(
    web: TestClient,
) -> None:
    doc = parse(web.get("/estimate", params=STORY).text)
    for anchor in ("memory", "plan", "speed", "cost", "findings", "assumptions"):
        assert doc.find(id=anchor) is not None, anchor
    api = _api(web, "2x-dgx-h200-cluster", "deepseek-v3", precision="fp8")
    text = doc.one(id="result").text()
    assert api["plan"]["description"] in text
    for assumption in api["assumptions"]:
        assert " ".join(assumption.split()) in text
    chart = doc.one("figure", class_="chart").one("img")
    assert chart.attrs["src"].startswith("/estimate/memory.svg?")


def test_json_twin_answers_like_the_api(web: TestClient) -> None:
    twin = web.get("/estimate.json", params={**STORY, "batch": "4", "context_tokens": "8192"})
    api = _api(web, "2x-dgx-h200-cluster", "deepseek-v3", precision="fp8", batch=4,
               context_tokens=8192)
    assert twin.json() == api


def test_memory_chart_is_svg(web: TestClient) -> None:
    response = web.get("/estimate/memory.svg", params=STORY)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert "Weights" in response.text


def test_described_build_and_pasted_config_run_like_the_api(web: TestClient) -> None:
    config = web.get("/api/v1/models/llama-3-1-8b").json()["config"]
    form = {
        "build_source": "custom", "b_name": "Two 3090s", "b_per_node": "2",
        "b_intra_kind": "pcie", "b_intra_gbs": "25", "b_price_usd": "2500",
        "a_name": "RTX 3090", "a_memory_gb": "24", "a_bandwidth_gbs": "936",
        "a_fp16_tflops": "71", "model_source": "config", "model_name": "My Llama",
        "config": json.dumps(config), "precision": "bf16",
    }
    api = _api(
        web,
        {"name": "Two 3090s", "accelerators_per_node": 2,
         "accelerator": {"name": "RTX 3090", "memory_gb": 24, "memory_bandwidth_gbs": 936,
                         "fp16_tflops": 71},
         "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 25}, "price_usd": 2500},
        {"name": "My Llama", "config": config},
        precision="bf16",
    )
    response = web.get("/estimate", params=form)
    assert response.status_code == 200, response.text[-2000:]
    assert api["verdict"] in parse(response.text).one(class_="verdict-box").text()
    assert web.get("/estimate.json", params=form).json() == api


def test_invalid_config_json_is_a_notice_on_the_config_field(web: TestClient) -> None:
    response = web.get("/estimate", params={"build": "dgx-h200", "model_source": "config",
                                            "config": "{not json"})
    assert response.status_code == 422
    doc = parse(response.text)
    assert "config" in doc.one(class_="notices").text()
    assert doc.one(class_="field-error", id="err-config") is not None
    assert doc.one("textarea").text() == "{not json"  # kept for correcting


def test_out_of_range_workload_is_named_not_a_500(web: TestClient) -> None:
    for field, value in (("batch", "0"), ("context_tokens", "1e30"), ("precision", "fp7"),
                         ("mode", "dreaming"), ("prompt_tokens", "99999999")):
        response = web.get("/estimate", params={**STORY, field: value})
        assert response.status_code == 422, (field, response.status_code)
        # Named in words, as the page calls it, not by its API path.
        assert field.replace("_", " ") in parse(response.text).one(class_="notices").text()


def test_bad_described_build_names_the_field(web: TestClient) -> None:
    custom = {"build_source": "custom", "model": "llama-3-1-8b", "a_memory_gb": "24",
              "a_bandwidth_gbs": "900", "a_fp16_tflops": "70"}
    for field, value, words in (("b_per_node", "\x00", "Cards of the first kind per node"),
                                ("a_memory_gb", "-1", "Memory per accelerator"),
                                ("b_nodes", "99999999", "Nodes")):
        response = web.get("/estimate", params={**custom, "b_per_node": "2", field: value})
        assert response.status_code == 422, (field, response.status_code)
        notices = parse(response.text).one(class_="notices").text()
        assert words in notices and "build." not in notices, (field, notices)
        beside = parse(response.text).one(id=f"err-{field}").text()
        assert beside.startswith(words), (field, beside)


def test_unknown_build_is_a_404_with_the_form(web: TestClient) -> None:
    response = web.get("/estimate", params={**STORY, "build": "nope"})
    assert response.status_code == 404
    doc = parse(response.text)
    assert "nope" in doc.one(class_="notices").text()
    assert doc.find("form", action="/estimate") is not None


def test_empty_calculator_is_a_form_and_its_twin_describes_the_query(web: TestClient) -> None:
    doc = parse(web.get("/estimate").text)
    assert doc.find(class_="verdict-box") is None
    assert doc.find("form", action="/estimate") is not None
    assert "fields" in web.get("/estimate.json").json()


def test_plan_shows_runtime_objective_and_a_copyable_launch_command(web: TestClient) -> None:
    params = {"build": "4x-rtx-4090-workstation", "model": "llama-3-3-70b", "precision": "int4"}
    doc = parse(web.get("/estimate", params=params).text)
    api = _api(web, "4x-rtx-4090-workstation", "llama-3-3-70b", precision="int4")
    code = doc.one(id="launch-command").text()
    assert code == api["plan"]["launch_command"] and code.startswith("vllm serve ")
    button = doc.one("button", **{"data-copy-from": "launch-command"})
    assert button is not None
    text = doc.one(id="result").text()
    assert api["plan"]["runtime"] in text and api["plan"]["objective"] in text
    for case in api["failover"]:
        assert f"Losing {case['lost']}" in text


def test_runtime_is_automatic_by_default_and_memory_share_is_exposed(web: TestClient) -> None:
    doc = parse(web.get("/estimate").text)
    runtime = doc.one("select", id="f-runtime")
    assert runtime.one("option").attrs.get("value") == ""  # automatic first
    assert doc.find("input", id="f-memory_utilization") is not None
    gguf = parse(
        web.get(
            "/estimate",
            params={"build": "4x-rtx-4090-workstation", "model": "llama-3-3-70b",
                    "precision": "q4_k_m"},
        ).text
    )
    assert gguf.one(id="launch-command").text().startswith("llama-server ")


def test_a_tensor_parallel_size_the_runtime_refuses_is_named_on_the_page(web: TestClient) -> None:
    response = web.get(
        "/estimate",
        params={"build": "4x-rtx-4090-workstation", "model": "llama-3-3-70b",
                "precision": "int4", "runtime": "vllm", "tensor_parallel": "3"},
    )
    assert response.status_code == 422
    assert "tensor_parallel" in response.text and "attention heads" in response.text


def test_described_build_takes_several_card_kinds_and_a_host(web: TestClient) -> None:
    query = {"build_source": "custom", "b_accelerator": "rtx-3090", "b_per_node": "2",
             "b_pcie_gen": "4", "b_pcie_lanes": "8", "g2_accelerator": "rtx-4090",
             "g2_count": "1", "h_ram_gb": "128", "h_channels": "2", "h_speed_mts": "5600",
             "model": "llama-3-1-8b", "precision": "bf16"}
    response = web.get("/estimate.json", params=query)
    assert response.status_code == 200, response.text
    assert response.json()["build"]["accelerator_count"] == 3
    assert response.json()["build"]["total_memory_gb"] == 72


def test_bad_card_row_and_host_errors_sit_beside_their_fields_in_words(web: TestClient) -> None:
    query = {"build_source": "custom", "b_accelerator": "rtx-3090", "b_per_node": "2",
             "g2_accelerator": "rtx-4090", "g2_count": "0", "h_bandwidth_gbs": "-3",
             "model": "llama-3-1-8b"}
    response = web.get("/estimate", params=query)
    assert response.status_code == 422
    doc = parse(response.text)
    assert doc.one(id="err-g2_count").text().startswith("Count of card kind 2:")
    assert doc.one(id="err-h_bandwidth_gbs").text().startswith("RAM bandwidth:")


def test_ram_speed_without_channels_asks_for_the_channels_beside_the_field(
    web: TestClient,
) -> None:
    query = {"build_source": "custom", "b_accelerator": "rtx-4090", "b_per_node": "1",
             "h_ram_gb": "96", "h_speed_mts": "5600", "model": "gpt-oss-120b",
             "precision": "mxfp4"}
    response = web.get("/estimate", params=query)
    assert response.status_code == 422
    note = parse(response.text).one(id="err-h_channels").text()
    assert note.startswith("RAM channels: give the number of RAM channels too")


def test_offloading_build_shows_what_lives_where(web: TestClient) -> None:
    query = {"build": "1x-rtx-4090-128gb-ddr5", "model": "gpt-oss-120b", "precision": "mxfp4"}
    response = web.get("/estimate", params=query)
    assert response.status_code == 200
    caption = parse(response.text).one(id="placement-caption").text()
    assert "expert layers in RAM" in caption
    assert "--n-cpu-moe" in parse(response.text).one(id="launch-command").text()


# Issue 14: the 12 GB card first, two 24 GB cards beside it (60 GB hold Llama 3.3 70B at 4 bits).
SMALL_FIRST = {"build_source": "custom", "b_accelerator": "rtx-3060-12gb", "b_per_node": "1",
               "g2_accelerator": "rtx-3090", "g2_count": "2", "model": "llama-3-3-70b"}
WITH_RAM = {**SMALL_FIRST, "h_ram_gb": "128", "h_channels": "2", "h_speed_mts": "5600"}


def test_host_ram_leaves_the_runtime_and_words_of_a_build_that_fits_in_vram(
    web: TestClient,
) -> None:
    for precision, runtime in (("int4", "vllm"), ("q4_k_m", "llama.cpp")):
        without = web.get("/estimate.json", params={**SMALL_FIRST, "precision": precision})
        with_ram = web.get("/estimate.json", params={**WITH_RAM, "precision": precision})
        assert without.status_code == with_ram.status_code == 200, with_ram.text
        assert with_ram.json()["plan"]["runtime"] == without.json()["plan"]["runtime"] == runtime
        assert with_ram.json()["findings"] == without.json()["findings"]
        page = parse(web.get("/estimate", params={**WITH_RAM, "precision": precision}).text)
        text = page.one(id="result").text()
        for finding in with_ram.json()["findings"]:
            assert " ".join(finding["message"].split()) in text
        assert "keeps the rest in host RAM" not in text


def test_a_card_row_below_an_empty_row_is_refused_beside_it_not_shifted(web: TestClient) -> None:
    # Filling row 3 with row 2 left empty must not move row 3's count, PCIe lanes or errors onto
    # row 2 (before the fix row 3's bad PCIe lanes were checked against row 2, which was empty).
    query = {"build_source": "custom", "b_accelerator": "rtx-4090", "b_per_node": "1",
             "g3_accelerator": "rtx-3090", "g3_count": "1", "g3_pcie_lanes": "8",
             "model": "llama-3-1-8b"}
    response = web.get("/estimate", params=query)
    assert response.status_code == 422
    doc = parse(response.text)
    assert doc.one(id="err-g3_accelerator").text().startswith(
        "Card of card kind 3: fill card kind 2 first")
    assert not doc.find_all(id="err-g2_count")
    filled = {**query, "g2_accelerator": "rtx-3090", "g2_count": "1"}
    assert web.get("/estimate.json", params=filled).status_code == 200


def test_a_count_without_a_card_is_an_error_beside_the_card_field(web: TestClient) -> None:
    query = {"build_source": "custom", "b_accelerator": "rtx-4090", "b_per_node": "1",
             "g2_count": "2", "model": "llama-3-1-8b"}
    response = web.get("/estimate", params=query)
    assert response.status_code == 422
    note = parse(response.text).one(id="err-g2_accelerator").text()
    assert note.startswith("Card of card kind 2:") and "choose" in note
