"""The pasted config.json check (schemas/common.py) answers the same with its memo."""

import pytest
from pydantic import ValidationError

from app.schemas.inline import InlineModel

CONFIG = {"model_type": "llama", "num_hidden_layers": 32, "architectures": ["LlamaForCausalLM"]}


def _validate(config: dict[str, object]) -> InlineModel:
    return InlineModel.model_validate({"name": "m", "config": config})


def test_a_config_that_passed_passes_again() -> None:
    assert _validate(dict(CONFIG)).config == CONFIG
    assert _validate(dict(CONFIG)).config == CONFIG


@pytest.mark.parametrize("bad", [1e13, float("nan"), "x\x00"])
def test_a_changed_value_is_checked_after_the_config_passed(bad: object) -> None:
    _validate(dict(CONFIG))
    for _ in range(2):  # refused configs are never remembered as passed
        with pytest.raises(ValidationError, match="num_hidden_layers"):
            _validate({**CONFIG, "num_hidden_layers": bad})


def test_a_value_marshal_cannot_write_is_still_checked() -> None:
    with pytest.raises(ValidationError, match="nested too deeply"):
        nested: dict[str, object] = {}
        inner = nested
        for _ in range(3000):
            inner["a"] = {}
            inner = inner["a"]  # type: ignore[assignment]
        _validate(nested)
