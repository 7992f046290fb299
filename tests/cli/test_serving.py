"""`tierline serving`: the same answer as POST /api/v1/serving, as a table or as JSON."""

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.main import create_app

runner = CliRunner()
ARGS = ["serving", "dgx-h200", "llama-3-1-70b", "--input-tokens", "1024", "--output-tokens",
        "1024", "--tokens-per-s-per-user-min", "30", "--concurrent-users", "2000"]
BODY = {
    "build": "dgx-h200",
    "model": "llama-3-1-70b",
    "workload": {"precision": "fp8", "runtime": "vllm"},
    "serving": {"input_tokens": 1024, "output_tokens": 1024, "tokens_per_s_per_user_min": 30,
                "concurrent_users": 2000},
}


def test_serving_json_is_the_apis_answer(seeded: str) -> None:
    result = runner.invoke(cli, [*ARGS, "--json"])
    assert result.exit_code == 0, result.output
    settings = Settings(database_url=seeded, seed_on_start=False, secret_key="t")
    with TestClient(create_app(settings)) as client:
        expected = client.post("/api/v1/serving", json=BODY).json()
    assert json.loads(result.output) == expected
    assert expected["at_slo"]["copies_needed"] >= 1


def test_serving_table_lists_the_curve_and_the_operating_point(seeded: str) -> None:
    result = runner.invoke(cli, ARGS)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "estimates" in lines[0]
    assert lines[1].split()[:2] == ["users", "tok/s/user"]
    assert lines[2].split()[0] == "1"
    assert any(line.startswith("At the SLO: ") and "2,000 concurrent users" in line
               for line in lines)


def test_serving_refuses_bad_input_naming_the_field(seeded: str) -> None:
    result = runner.invoke(cli, [*ARGS[:3], "--ttft-s-max", "-1"])
    assert result.exit_code == 1
    assert "serving.ttft_s_max" in result.output


def test_serving_names_an_unknown_build(seeded: str) -> None:
    result = runner.invoke(cli, ["serving", "no-such-build", "llama-3-1-8b"])
    assert result.exit_code == 1
    assert "no-such-build" in result.output


def test_serving_has_help() -> None:
    result = runner.invoke(cli, ["serving", "--help"])
    assert result.exit_code == 0 and "--json" in result.output
