"""The serving page: the API's answer for a GET form, the curve as SVG and a table, words."""

from fastapi.testclient import TestClient

from ._html import parse

QUERY = {
    "build": "dgx-h200",
    "model": "llama-3-1-70b",
    "input_tokens": "1024",
    "output_tokens": "1024",
    "ttft_s_max": "1",
    "tokens_per_s_per_user_min": "30",
    "concurrent_users": "2000",
}
BODY = {
    "build": "dgx-h200",
    "model": "llama-3-1-70b",
    "serving": {"input_tokens": 1024, "output_tokens": 1024, "ttft_s_max": 1,
                "tokens_per_s_per_user_min": 30, "concurrent_users": 2000},
}


def test_the_json_twin_is_the_apis_answer(web: TestClient) -> None:
    twin = web.get("/serving.json", params=QUERY)
    assert twin.status_code == 200
    assert twin.json() == web.post("/api/v1/serving", json=BODY).json()


def test_the_page_states_the_operating_point_in_words_and_tables_the_curve(
    web: TestClient,
) -> None:
    api = web.post("/api/v1/serving", json=BODY).json()
    response = web.get("/serving", params=QUERY)
    assert response.status_code == 200
    doc = parse(response.text)
    assert api["at_slo"]["summary"] in doc.one(id="result").text()
    table = doc.one(id="curve-caption").ancestor("table")
    assert table is not None
    rows = table.one("tbody").find_all("tr")
    assert len(rows) == len(api["curve"])
    assert "operating point" in " ".join(r.text() for r in rows)
    assert "estimate" in doc.one(id="result").text()
    link = doc.find("link", rel="alternate")
    assert link is not None and link.attrs["href"].startswith("/serving.json?")


def test_the_chart_is_an_svg_of_the_same_query(web: TestClient) -> None:
    doc = parse(web.get("/serving", params=QUERY).text)
    src = doc.one("figure", class_="chart").one("img").attrs["src"]
    assert src.startswith("/serving/curve.svg?")
    svg = web.get(src)
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert "<svg" in svg.text and "operating point" in svg.text
    assert "DGX H200" in svg.text


def test_speculation_fields_reach_the_request(web: TestClient) -> None:
    query = {"build": "dgx-h200", "model": "deepseek-v3", "speculative": "mtp"}
    answer = web.get("/serving.json", params=query).json()
    assert answer["serving"]["speculative_kind"] == "mtp"
    assert answer["serving"]["acceptance_rate"] == 0.85


def test_bad_input_is_422_naming_the_form_field_and_changes_nothing(web: TestClient) -> None:
    response = web.get("/serving", params={**QUERY, "ttft_s_max": "-1"})
    assert response.status_code == 422
    doc = parse(response.text)
    assert doc.find(id="err-ttft_s_max") is not None
    assert doc.find(id="result") is None
    twin = web.get("/serving.json", params={**QUERY, "ttft_s_max": "soon"})
    assert twin.status_code == 422
    assert twin.headers["content-type"].startswith("application/problem+json")
    assert [e["field"] for e in twin.json()["errors"]] == ["serving.ttft_s_max"]


def test_the_empty_page_is_a_form_and_its_twin_describes_the_query(web: TestClient) -> None:
    doc = parse(web.get("/serving").text)
    assert doc.one("form").attrs["method"] == "get"
    assert doc.find(id="result") is None
    description = web.get("/serving.json").json()
    assert description["fields"]["concurrent_users"] == "serving.concurrent_users"


def test_the_form_takes_the_calculators_custom_build_and_pasted_config(web: TestClient) -> None:
    doc = parse(web.get("/serving").text)
    form = doc.one("form")
    names = {n.attrs.get("name") for n in form.find_all("input") + form.find_all("select")}
    assert {"build_source", "b_per_node", "a_memory_gb", "model_source"} <= names
    query = {"build_source": "custom", "b_per_node": "2", "b_accelerator": "rtx-4090",
             "model": "llama-3-1-8b", "precision": "bf16"}
    answer = web.get("/serving.json", params=query).json()
    assert answer["build"]["slug"] is None and answer["build"]["accelerator_count"] == 2
    assert answer["curve"]


def test_the_page_names_an_expert_parallel_plan_and_its_launch_command(web: TestClient) -> None:
    query = {"build": "dgx-h200", "model": "deepseek-v3", "input_tokens": "1024",
             "output_tokens": "1024", "tokens_per_s_per_user_min": "10",
             "concurrent_users": "5000", "runtime": "vllm"}
    answer = web.get("/serving.json", params=query).json()
    assert answer["plan"]["expert_parallel"] == 8 and answer["plan"]["tensor_parallel"] == 1
    doc = parse(web.get("/serving", params=query).text)
    heading = doc.one(id="serving-plan")
    assert heading.parent is not None
    assert "expert parallel 8 with data-parallel attention" in heading.parent.text()
    command = doc.one("pre", class_="launch-command").text()
    assert "--tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel" in command
