"""Pages that judge fit or speed take the calculator's runtime and parallelism (issue 11)."""

from urllib.parse import parse_qsl, urlsplit

from fastapi.testclient import TestClient

from ._html import parse

# At FP8, vLLM (no GGUF offload, per-card limits) holds Llama 3.3 70B on fewer builds than each
# build's default runtime does (llama.cpp on Apple builds): a choice the filter must honour.
MODEL = "llama-3-3-70b"


def _names(html: str) -> list[str]:
    table = parse(html).one("table", class_="builds-table")
    return [row.one("th", scope="row").text() for row in table.one("tbody").find_all("tr")]


def test_builds_filter_judges_with_the_chosen_runtime_like_its_json_twin(web: TestClient) -> None:
    params = {"fits_model": MODEL, "precision": "fp8", "per_page": 200}
    default = web.get("/api/v1/builds", params=params).json()
    chosen = web.get("/api/v1/builds", params={**params, "runtime": "vllm"}).json()
    assert chosen["total"] < default["total"]
    page = web.get("/builds", params={**params, "runtime": "vllm"}).text
    assert _names(page) == [b["name"] for b in chosen["items"]]


def test_builds_filter_says_which_runtime_and_plan_judged(web: TestClient) -> None:
    params = {"fits_model": MODEL, "runtime": "vllm", "parallelism": "pipeline"}
    count = parse(web.get("/builds", params=params).text).one(id="result-count").text()
    assert "judged with vllm and a pipeline-parallel plan" in count
    default = parse(web.get("/builds", params={"fits_model": MODEL}).text)
    assert "each build's default runtime" in default.one(id="result-count").text()
    assert "automatic plan" in default.one(id="result-count").text()


def test_builds_filter_links_keep_the_runtime_and_plan(web: TestClient) -> None:
    params = {"fits_model": MODEL, "runtime": "vllm", "parallelism": "tensor"}
    doc = parse(web.get("/builds", params=params).text)
    alternate = doc.one("link", rel="alternate").attrs["href"] or ""
    query = dict(parse_qsl(urlsplit(alternate).query))
    assert query["runtime"] == "vllm" and query["parallelism"] == "tensor"
    assert web.get(alternate).status_code == 200


def test_builds_filter_refuses_an_unknown_runtime_in_words(web: TestClient) -> None:
    api = web.get("/api/v1/builds", params={"fits_model": MODEL, "runtime": "nope"})
    assert api.status_code == 422
    assert "runtime" in api.text


def test_build_page_judges_with_the_chosen_runtime(web: TestClient) -> None:
    slug = "2x-dgx-h200-cluster"
    default = parse(web.get(f"/builds/{slug}").text)
    assert "each build's default runtime" in default.one(id="judged-by").text()
    chosen = parse(web.get(f"/builds/{slug}", params={"runtime": "sglang"}).text)
    assert "judged with sglang" in chosen.one(id="judged-by").text()
    assert (chosen.one("link", rel="canonical").attrs["href"] or "").endswith("?runtime=sglang")


def test_build_page_shows_the_story_models_launch_command_with_a_copy_button(
    web: TestClient,
) -> None:
    doc = parse(web.get("/builds/2x-dgx-h200-cluster").text)
    section = doc.one(id="launch")
    assert "DeepSeek-V3" in section.one("h3").text()
    command = section.one(id="launch-command").text()
    assert command.startswith("vllm serve") and "--tensor-parallel-size" in command
    assert section.one("button", data_copy_from="launch-command").text() == "Copy"
    sglang = parse(web.get("/builds/2x-dgx-h200-cluster", params={"runtime": "sglang"}).text)
    assert sglang.one(id="launch-command").text() != command


def test_build_page_without_the_story_model_shows_no_launch_section(web: TestClient) -> None:
    doc = parse(web.get("/builds/1x-rtx-4090-desktop").text)
    assert doc.find(id="launch") is None


def test_model_page_judges_with_the_chosen_runtime_like_recommend(web: TestClient) -> None:
    params = {"precision": "fp8", "runtime": "vllm"}
    api = web.get("/api/v1/recommend", params={"model": MODEL, **params}).json()
    doc = parse(web.get(f"/models/{MODEL}", params=params).text)
    status = doc.one("p", role="status").text()
    assert f"{len(api['items'])} of" in status
    assert "judged with vllm" in status
    json_link = doc.one("a", id="builds-json").attrs["href"] or ""
    assert web.get(json_link).json()["items"] == api["items"]


def test_build_page_labels_the_vendor_total_and_gives_it_in_the_engines_unit(
    web: TestClient,
) -> None:
    doc = parse(web.get("/builds/4x-rtx-4090-workstation").text)
    total = doc.one(id="total-memory").text()
    # 4 x "24 GB" cards hold 4 x 24 GiB = 103.08 x 10^9 bytes.
    assert total.startswith("96 GB (vendor)")
    assert "= 103 GB of 10⁹ bytes" in total


def test_builds_list_and_compare_label_catalog_memory_as_vendor_gb(web: TestClient) -> None:
    doc = parse(web.get("/builds").text)
    heading = doc.one("th", class_="col-total_memory_gb").text()
    assert "GB (vendor)" in heading
    compare = parse(
        web.get(
            "/compare", params={"builds": "4x-rtx-4090-workstation,dgx-h200", "model": MODEL}
        ).text
    )
    total_row = compare.one("tr", data_key="total_memory_gb")
    assert "GB (vendor)" in total_row.one("th").text()
    assert total_row.find_all("td")[0].text() == "96 GB (vendor)"
    needed_row = compare.one("tr", data_key="memory_needed_gb")
    assert "GB of 10⁹ bytes" in needed_row.one("th").text()
