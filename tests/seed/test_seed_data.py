"""seed_data/: counts, provenance on every spec and price, the tier-line story builds, and a
cross-check of accelerator specs against the vetted reference facts (copied with their sources
into tests/data/reference_accelerators.csv from the shared reference's accelerators.csv)."""

import csv
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.config import PROJECT_ROOT

SEED = PROJECT_ROOT / "seed_data"
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference_accelerators.csv"

# Seed slug → reference row name (the reference's `accelerator` column).
REFERENCE_NAMES = {
    "rtx-3090": "NVIDIA GeForce RTX 3090",
    "rtx-4090": "NVIDIA GeForce RTX 4090",
    "rtx-5090": "NVIDIA GeForce RTX 5090",
    "rtx-4080": "NVIDIA GeForce RTX 4080",
    "rtx-4070-ti-super": "NVIDIA GeForce RTX 4070 Ti SUPER",
    "rtx-6000-ada": "NVIDIA RTX 6000 Ada Generation",
    "rtx-pro-6000-blackwell": "NVIDIA RTX PRO 6000 Blackwell (Workstation Edition)",
    "l40s": "NVIDIA L40S",
    "a100-40gb-sxm": "NVIDIA A100 40GB SXM4",
    "a100-80gb-sxm": "NVIDIA A100 80GB SXM4",
    "h100-pcie": "NVIDIA H100 PCIe",
    "h100-sxm": "NVIDIA H100 SXM5 80GB",
    "h200-sxm": "NVIDIA H200 SXM 141GB",
    "b200": "NVIDIA B200 (HGX/DGX, SXM)",
    "b300": "NVIDIA B300 / Blackwell Ultra (HGX, SXM)",
    "gb200": "NVIDIA GB200 (per Blackwell GPU in GB200 superchip)",
    "mi300x": "AMD Instinct MI300X",
    "mi325x": "AMD Instinct MI325X",
    "mi355x": "AMD Instinct MI355X",
    "radeon-rx-7900-xtx": "AMD Radeon RX 7900 XTX",
    "gaudi-3": "Intel Gaudi 3 (OAM HL-325L)",
}
CHECKED_FIELDS = {
    "memory_gb": "memory_gb",
    "memory_bandwidth_gbs": "memory_bw_gbps",
    "tdp_w": "tdp_w",
    "fp16_tflops": "bf16_dense_tflops",
}


def _load(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((SEED / f"{name}.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def catalog() -> dict[str, list[dict[str, Any]]]:
    return {name: _load(name) for name in ("accelerators", "builds", "models")}


def test_catalog_is_large_enough_and_covers_every_tier(catalog: dict) -> None:
    assert len(catalog["accelerators"]) >= 20
    assert len(catalog["models"]) >= 25
    assert len(catalog["builds"]) >= 30
    for tier in ("desktop", "dgx", "cluster"):
        assert sum(1 for b in catalog["builds"] if b.get("tier") == tier) >= 8, tier


def test_every_record_has_a_source_and_every_price_its_own(catalog: dict) -> None:
    for kind, records in catalog.items():
        for record in records:
            assert str(record.get("source_url", "")).startswith("http"), (kind, record["slug"])
            assert record.get("as_of"), (kind, record["slug"])
            if record.get("price_usd") is not None:
                assert str(record.get("price_source_url", "")).startswith("http"), record["slug"]
                assert record.get("price_as_of"), record["slug"]


def test_story_desktop_build_has_its_published_figures(catalog: dict) -> None:
    build = next(b for b in catalog["builds"] if b["slug"] == "4x-rtx-4090-workstation")
    card = next(a for a in catalog["accelerators"] if a["slug"] == build["accelerator"])
    assert build["intra_node_link"]["kind"] == "pcie"
    # ~64 GB/s in both directions, stored per direction.
    assert 2 * build["intra_node_link"]["bandwidth_gbs"] == pytest.approx(64, rel=0.02)
    assert build["accelerators_per_node"] * card["memory_gb"] == 96
    assert build["accelerators_per_node"] * card["tdp_w"] == build["power_w"] == 1800
    assert build["price_usd"] == pytest.approx(10_000, rel=0.05)
    assert build["failover"] == "none" and build["scheduling"] == "manual"


def test_story_cluster_build_has_its_published_figures(catalog: dict) -> None:
    build = next(b for b in catalog["builds"] if b["slug"] == "2x-dgx-h200-cluster")
    card = next(a for a in catalog["accelerators"] if a["slug"] == build["accelerator"])
    assert build["nodes"] == 2 and build["intra_node_link"]["kind"] == "nvswitch"
    # 900 GB/s NVLink per GPU counted in both directions, stored per direction.
    assert 2 * build["intra_node_link"]["bandwidth_gbs"] == 900
    assert build["inter_node_link"]["kind"] == "infiniband"
    assert build["nodes"] * build["accelerators_per_node"] * card["memory_gb"] == 2256
    assert build["power_w"] == 20_400
    assert build["price_usd"] == pytest.approx(930_000, rel=0.05)
    assert "Kubernetes" in build["failover"] and "Slurm" in build["scheduling"]


def test_models_span_small_to_huge_dense_and_moe_gqa_and_mla(catalog: dict) -> None:
    models = {m["slug"]: m for m in catalog["models"]}
    sizes = [m["params_total"] for m in models.values()]
    assert min(sizes) <= 8_100_000_000 and max(sizes) >= 1_000_000_000_000
    assert models["deepseek-v3"]["params_total"] == 671_000_000_000
    assert models["deepseek-v3"]["params_active"] == 37_000_000_000
    assert any(m["params_active"] < m["params_total"] for m in models.values())
    assert any("kv_lora_rank" in m["config"] for m in models.values())


def _number(cell: str) -> float | None:
    return float(cell) if re.fullmatch(r"\d+(\.\d+)?", cell.strip()) else None


def test_accelerator_specs_agree_with_the_reference_or_are_marked(catalog: dict) -> None:
    reference = {row["accelerator"]: row for row in csv.DictReader(REFERENCE.open())}
    seeds = {a["slug"]: a for a in catalog["accelerators"]}
    mismatches = []
    for slug, ref_name in REFERENCE_NAMES.items():
        seed, ref = seeds[slug], reference[ref_name]
        for field, ref_field in CHECKED_FIELDS.items():
            expected = _number(ref[ref_field])
            if expected is None or seed.get(field) is None:
                continue
            marked = field in seed.get("estimated", []) or field in seed.get("notes", "")
            if abs(seed[field] - expected) > 0.01 * expected and not marked:
                mismatches.append((slug, field, seed[field], expected))
    assert not mismatches
