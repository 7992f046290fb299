"""`tierline estimate` and `tierline recommend`: the API's answers in a terminal."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.main import create_app
from tests.engine.shapes import LLAMA_8B

runner = CliRunner()
# A catalog build and model, and a ranking with limits, that several tests run.
PAIR = ["--build", "4x-rtx-4090-workstation", "--model", "llama-3-3-70b"]
RECOMMEND = ["recommend", "--model", "llama-3-3-70b", "--max-price", "15000",
             "--min-tokens-per-s", "20"]


@pytest.fixture
def api(seeded: str) -> Iterator[TestClient]:
    settings = Settings(database_url=seeded, seed_on_start=False, secret_key="t")
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.mark.parametrize("command", [["estimate"], ["recommend"]])
def test_engine_commands_have_help(command: list[str]) -> None:
    result = runner.invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_estimate_json_is_the_api_answer(api: TestClient) -> None:
    args = [
        *PAIR,
        "--precision",
        "int4",
        "--json",
    ]
    result = runner.invoke(cli, ["estimate", *args])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    expected = api.post(
        "/api/v1/estimate",
        json={
            "build": "4x-rtx-4090-workstation",
            "model": "llama-3-3-70b",
            "workload": {"precision": "int4"},
        },
    ).json()
    assert answer == expected
    assert answer["plan"]["launch_command"].startswith("vllm serve ")


def test_estimate_table_names_the_verdict_plan_and_launch_command(seeded: str) -> None:
    result = runner.invoke(
        cli,
        [
            "estimate",
            *PAIR,
            "--precision",
            "q4_k_m",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Verdict" in result.output and "llama-server -m " in result.output
    assert "runtime llama.cpp" in result.output


def test_estimate_with_a_build_file_and_a_config(seeded: str, tmp_path: Path) -> None:
    build = tmp_path / "rig.json"
    build.write_text(
        json.dumps(
            {
                "name": "2x 3090",
                "accelerators_per_node": 2,
                "accelerator": "rtx-3090",
            }
        )
    )
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA_8B))
    result = runner.invoke(
        cli,
        [
            "estimate",
            "--build-file",
            str(build),
            "--config",
            str(config),
            "--json",
            "--precision",
            "bf16",
        ],
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["fits"] and answer["model"]["name"] == "config"


def test_bad_input_names_the_field_and_exits_2(seeded: str) -> None:
    result = runner.invoke(
        cli,
        [
            "estimate",
            *PAIR,
            "--precision",
            "int4",
            "--runtime",
            "vllm",
            "--tensor-parallel",
            "3",
        ],
    )
    assert result.exit_code == 2
    assert "workload.tensor_parallel" in result.output
    missing = runner.invoke(cli, ["estimate", "--model", "llama-3-3-70b"])
    assert missing.exit_code == 1 and "--build" in missing.output


def test_recommend_prints_the_api_ranking(api: TestClient) -> None:
    result = runner.invoke(cli, [*RECOMMEND, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    expected = api.get(
        "/api/v1/recommend",
        params={
            "model": "llama-3-3-70b",
            "max_price_usd": 15000,
            "min_decode_tokens_per_s": 20,
        },
    ).json()
    assert answer == expected and answer["items"]
    # Key for key in the API's order too (the answer is the API's RecommendOut).
    assert list(answer["items"][0]) == list(expected["items"][0])
    table = runner.invoke(cli, RECOMMEND)
    assert table.exit_code == 0
    for item in answer["items"]:
        assert item["build"]["name"] in table.output and item["launch_command"] in table.output


def test_recommend_at_a_service_level_prints_the_api_ranking(api: TestClient) -> None:
    slo = ["--ttft-s-max", "2", "--tokens-per-s-per-user-min", "20", "--concurrent-users", "50"]
    base = ["recommend", "--model", "llama-3-3-70b", "--precision", "int4", *slo]
    result = runner.invoke(cli, [*base, "--json"])
    assert result.exit_code == 0, result.output
    expected = api.get(
        "/api/v1/recommend",
        params={
            "model": "llama-3-3-70b",
            "precision": "int4",
            "ttft_s_max": 2,
            "tokens_per_s_per_user_min": 20,
            "concurrent_users": 50,
        },
    ).json()
    answer = json.loads(result.output)
    assert answer == expected and expected["at_slo"]["items"]
    assert list(answer["at_slo"]["items"][0]) == list(expected["at_slo"]["items"][0])
    table = runner.invoke(cli, base)
    assert table.exit_code == 0
    assert "for 50 concurrent users" in table.output
    top = expected["at_slo"]["items"][0]
    assert f"  1. {top['copies_needed']} x {top['build']['name']}" in table.output
    missed = expected["at_slo"]["missed"][0]
    assert f"not {missed['build']['name']}:" in table.output


def test_gpt_oss_120b_at_the_default_fp8_names_its_published_mxfp4_answer(seeded: str) -> None:
    # Issue 14's headline case: a No at fp8 on a 4090 + 64 GB, but it is published in MXFP4.
    pair = ["estimate", "--build", "1x-rtx-4090-desktop", "--model", "gpt-oss-120b"]
    result = runner.invoke(cli, pair)
    assert result.exit_code == 0, result.output
    assert "Verdict                       No" in result.output
    assert "gpt-oss-120b is published in MXFP4" in result.output
    assert "at precision=mxfp4: Yes, with offload, " in result.output
    asked = runner.invoke(cli, [*pair, "--precision", "mxfp4"])
    assert asked.exit_code == 0 and "is published in" not in asked.output
