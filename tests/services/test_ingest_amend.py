"""benchmarks/ingest_measurements.py --amend: corrections change only the named fields of the named
records, are validated, and a second run changes nothing."""

import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]

RECORD = """\
- slug: {slug}
  hardware:
    accelerator: h100-sxm
    count: 8
    nodes: 2
    build: null
    intra_node_link: nvswitch
    host: null
    groups: null
  model: llama-3-1-8b
  runtime: vllm
  precision: bf16
  batch: null
  concurrency: 4
  prompt_tokens: null
  output_tokens: 128
  context_depth_tokens: null
  tensor_parallel: 8
  metric: itl_ms
  value: 12.5
  unit: ms
  source_url: https://example.org/{slug}
  as_of: '2026-11-30'
  notes: 'first note'
"""


@pytest.fixture(scope="module")
def ingest() -> Iterator[types.ModuleType]:
    spec = importlib.util.spec_from_file_location(
        "tierline_ingest_measurements", ROOT / "benchmarks" / "ingest_measurements.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    path = tmp_path / "measurements.yaml"
    path.write_text("# header kept\n" + RECORD.format(slug="a") + RECORD.format(slug="b"))
    return path


def test_amend_sets_fields_and_appends_the_note(ingest: types.ModuleType, seed: Path) -> None:
    before = seed.read_text()
    changed = ingest.amend(
        seed,
        [
            {
                "slugs": ["b"],
                "set": {
                    "prompt_tokens": 1024,
                    "requests": 40,
                    "hardware.inter_node_link": "infiniband",
                },
                "note": "quoted from the source.",
            }
        ],
    )
    assert changed == 1
    a, b = yaml.safe_load(seed.read_text())
    assert a == yaml.safe_load(before)[0]  # the other record is untouched
    assert b["prompt_tokens"] == 1024
    assert b["requests"] == 40  # absent before: inserted
    assert b["hardware"]["inter_node_link"] == "infiniband"
    assert b["notes"] == "first note quoted from the source."
    # Only the amended record's lines differ: the header and record a are byte-identical.
    assert seed.read_text().startswith(before[: before.index("- slug: b")])


def test_amend_twice_changes_nothing(ingest: types.ModuleType, seed: Path) -> None:
    amendment = [{"slugs": ["a"], "set": {"output_tokens": 105}, "note": "mean generated."}]
    ingest.amend(seed, amendment)
    once = seed.read_text()
    assert ingest.amend(seed, amendment) == 0
    assert seed.read_text() == once


def test_amend_refuses_an_invalid_record_and_an_unknown_slug(
    ingest: types.ModuleType, seed: Path
) -> None:
    before = seed.read_text()
    with pytest.raises(ValidationError):
        ingest.amend(seed, [{"slugs": ["a"], "set": {"unit": "s"}}])  # itl_ms is in ms
    with pytest.raises(KeyError):
        ingest.amend(seed, [{"slugs": ["missing"], "set": {"batch": 2}}])
    assert seed.read_text() == before
