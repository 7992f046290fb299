"""Fetching a config.json by Hugging Face id: the real httpx code against a local fake Hub."""

from collections.abc import Iterator

import pytest

from app.config import Settings
from app.errors import InvalidInput, NotFound, ServiceUnavailable
from app.services.hf_hub import RECENT, config_url, fetch_config, parse_hf_id
from tests.fake_hub import GATED_TOKEN, LLAMA_8B, closed_port_url, fake_hub, requests_seen


@pytest.fixture(scope="module")
def hub() -> Iterator[str]:
    with fake_hub() as url:
        yield url


@pytest.fixture(autouse=True)
def no_remembered_fetches() -> None:
    RECENT.clear()


def _settings(endpoint: str, **extra: object) -> Settings:
    return Settings(hf_endpoint=endpoint, hf_timeout_s=5, **extra)  # type: ignore[arg-type]


def test_fetches_a_config_by_id(hub: str) -> None:
    got = fetch_config("meta-llama/Llama-3.1-8B", settings=_settings(hub))
    assert got.config == LLAMA_8B
    assert got.url == f"{hub}/meta-llama/Llama-3.1-8B/resolve/main/config.json"
    assert got.page_url == f"{hub}/meta-llama/Llama-3.1-8B"


def test_sends_no_token_unless_one_is_set(hub: str) -> None:
    fetch_config("meta-llama/Llama-3.1-8B", settings=_settings(hub))
    assert requests_seen()[-1][1] is None
    fetch_config("meta-llama/Llama-3.1-8B", settings=_settings(hub, hf_token="hf_x"))
    assert requests_seen()[-1][1] == "Bearer hf_x"


def test_accepts_the_model_page_address_and_stray_slashes(hub: str) -> None:
    assert parse_hf_id(" https://huggingface.co/meta-llama/Llama-3.1-8B/tree/main ") == (
        "meta-llama/Llama-3.1-8B"
    )
    assert parse_hf_id("/deepseek-ai/DeepSeek-V3/") == "deepseek-ai/DeepSeek-V3"
    assert config_url("a/b", "https://hub.example/") == (
        "https://hub.example/a/b/resolve/main/config.json"
    )


@pytest.mark.parametrize("bad", ["llama", "a/b/c", "../etc/passwd", "a/..", "org/na me", ""])
def test_malformed_ids_are_refused_before_any_request(hub: str, bad: str) -> None:
    before = len(requests_seen())
    with pytest.raises(InvalidInput) as caught:
        fetch_config(bad, settings=_settings(hub), field="hf_id")
    assert caught.value.errors[0].field == "hf_id"
    assert "org/name" in caught.value.errors[0].message
    assert len(requests_seen()) == before


def test_unknown_model_is_not_found_naming_the_field(hub: str) -> None:
    with pytest.raises(NotFound) as caught:
        fetch_config("nobody/nothing", settings=_settings(hub))
    assert caught.value.errors[0].field == "hf_id"
    assert "no model 'nobody/nothing'" in caught.value.detail


def test_gated_model_without_token_says_to_set_one(hub: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        fetch_config("gated-org/gated-model", settings=_settings(hub))
    assert "gated or private" in caught.value.detail
    assert "TIERLINE_HF_TOKEN" in caught.value.detail


def test_gated_model_with_a_wrong_token_says_the_token_lacks_access(hub: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        fetch_config("gated-org/gated-model", settings=_settings(hub, hf_token="hf_wrong"))
    assert "has no access" in caught.value.detail


def test_gated_model_with_a_token_that_has_access_is_fetched(hub: str) -> None:
    got = fetch_config("gated-org/gated-model", settings=_settings(hub, hf_token=GATED_TOKEN))
    assert got.config == LLAMA_8B


def test_follows_the_hubs_redirect_for_a_renamed_model(hub: str) -> None:
    assert fetch_config("renamed-org/old-name", settings=_settings(hub)).config == LLAMA_8B


@pytest.mark.parametrize(
    ("hf_id", "reason"),
    [
        ("odd-org/html-page", "not valid JSON"),
        ("odd-org/json-list", "not a JSON object"),
        ("odd-org/tokenizer-like", "neither model_type nor architectures"),
        ("odd-org/huge", "larger than"),
    ],
)
def test_what_is_not_a_config_is_refused(hub: str, hf_id: str, reason: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        fetch_config(hf_id, settings=_settings(hub))
    assert reason in caught.value.detail
    assert "is not a model config" in caught.value.detail


def test_a_failing_hub_is_a_503_with_retry_after(hub: str) -> None:
    with pytest.raises(ServiceUnavailable) as caught:
        fetch_config("odd-org/broken", settings=_settings(hub))
    assert "HTTP 500" in caught.value.detail
    assert caught.value.headers["Retry-After"]


def test_a_slow_hub_times_out_with_a_clear_message(hub: str) -> None:
    settings = Settings(hf_endpoint=hub, hf_timeout_s=0.3)
    with pytest.raises(ServiceUnavailable) as caught:
        fetch_config("odd-org/slow", settings=settings)
    assert "no answer within 0.3 s" in caught.value.detail


def test_offline_is_a_503_that_suggests_pasting_the_config() -> None:
    with pytest.raises(ServiceUnavailable) as caught:
        fetch_config("meta-llama/Llama-3.1-8B", settings=_settings(closed_port_url()))
    assert "cannot connect" in caught.value.detail
    assert "paste the model's config.json" in caught.value.detail


def test_a_second_fetch_of_the_same_id_is_served_from_memory(hub: str) -> None:
    settings = _settings(hub, hf_token="hf_cache_test")
    fetch_config("deepseek-ai/DeepSeek-V3", settings=settings)
    seen = len(requests_seen())
    again = fetch_config("deepseek-ai/DeepSeek-V3", settings=settings)
    assert len(requests_seen()) == seen
    assert again.config["model_type"] == "deepseek_v3"
