"""POST /api/v1/estimate/batch answers every entry exactly as POST /api/v1/estimate does.

The batch runs each step of an estimate over all its entries before the next step (issue 10),
so these tests compare a varied batch, entry by entry, with the single-estimate path: the same
JSON text (1 and 1.0 encode differently), the same problems, the same plan budget."""

import json
from typing import Any

import pytest

from app.services import estimates
from tests.engine.shapes import LLAMA_8B

CARD = {"name": "card", "memory_gb": 24, "memory_bandwidth_gbs": 936, "fp16_tflops": 71}
GEFORCE = {
    "name": "GeForce RTX 3090",
    "memory_gb": 24,
    "memory_bandwidth_gbs": 936,
    "fp16_tflops": 71,
    "tdp_w": 350,
    "price_usd": 900,
}
TWO_CARDS = {"name": "2x card", "accelerators_per_node": 2, "accelerator": CARD}
LLAMA_CONFIG = {**LLAMA_8B, "max_position_embeddings": 131072}
LAYERS_FLOAT = {**LLAMA_CONFIG, "num_hidden_layers": 32.0}
LAYERS_BOOL = {**LLAMA_CONFIG, "num_hidden_layers": True}
HOST = {"ram_gb": 128, "ram_bandwidth_gbs": 80}

# Catalog and inline builds and models, one and several nodes, mixed cards, host-RAM offload,
# training, cost overrides, pasted configs differing by a value's JSON type, and entries that
# fail at each step (unknown slugs, an unreadable config, a split the engine refuses).
VARIED: list[dict[str, Any]] = [
    {"build": "4x-rtx-4090-workstation", "model": "llama-3-1-70b"},
    {"build": "2x-dgx-h200-cluster", "model": "deepseek-v3", "workload": {"batch": 8}},
    {"build": "no-such-build", "model": "llama-3-1-8b"},
    {"build": TWO_CARDS, "model": "llama-3-1-8b", "costs": {"pue": 1.5, "utilization": 0.5}},
    {"build": TWO_CARDS, "model": {"name": "p", "config": LLAMA_CONFIG}},
    {"build": TWO_CARDS, "model": {"name": "p", "config": LAYERS_FLOAT}},
    {"build": TWO_CARDS, "model": {"name": "p", "config": LAYERS_BOOL}},
    {"build": TWO_CARDS, "model": {"name": "p", "config": LLAMA_CONFIG, "params_total": 8 * 10**9}},
    {
        "build": {
            "name": "4 nodes",
            "nodes": 4,
            "accelerators_per_node": 8,
            "accelerator": CARD,
            "inter_node_link": {"kind": "infiniband", "bandwidth_gbps": 400},
        },
        "model": "llama-3-1-405b",
        "workload": {"batch": 32},
    },
    {
        "build": {
            "name": "mixed",
            "accelerators": [
                {"accelerator": CARD, "count": 2},
                {"accelerator": GEFORCE, "count": 1},
            ],
            "host": HOST,
        },
        "model": "llama-3-1-70b",
        "workload": {"precision": "q4_k_m"},
    },
    {
        "build": {"name": "1x", "accelerators_per_node": 1, "accelerator": GEFORCE, "host": HOST},
        "model": "gpt-oss-120b",
        "workload": {"precision": "q4_k_m"},
    },
    {"build": TWO_CARDS, "model": "llama-3-1-8b", "workload": {"mode": "lora", "batch": 4}},
    {"build": TWO_CARDS, "model": "llama-3-1-8b", "workload": {"tensor_parallel": 3}},
    {"build": {**TWO_CARDS, "accelerator": "no-such-card"}, "model": "llama-3-1-8b"},
    {"build": TWO_CARDS, "model": {"name": "bad", "config": {"model_type": "llama"}}},
    {"build": "1x-rtx-4090-3x-rtx-3090-mixed-rig", "model": "llama-3-3-70b"},
]  # fmt: skip


def _canonical(value: Any) -> str:
    # json.dumps keeps 1, 1.0 and true apart (== does not).
    return json.dumps(value, sort_keys=True)


def test_every_entry_is_answered_as_its_single_estimate(api):
    response = api.post("/api/v1/estimate/batch", json=VARIED)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["index"] for r in results] == list(range(len(VARIED)))
    oks = []
    for index, (item, result) in enumerate(zip(VARIED, results, strict=True)):
        single = api.post("/api/v1/estimate", json=item)
        oks.append(result["ok"])
        if single.status_code == 200:
            assert result["ok"] and result["error"] is None
            assert _canonical(result["result"]) == _canonical(single.json()), index
        else:
            assert not result["ok"] and result["result"] is None
            problem, expected = result["error"], single.json()
            assert problem["status"] == single.status_code == expected["status"]
            assert problem["detail"] == expected["detail"]
            assert [e["field"] for e in problem["errors"]] == [
                f"{index}.{e['field']}" for e in expected["errors"]
            ]
    # The batch holds answers and problems of every step.
    assert oks.count(False) >= 4 and oks.count(True) >= 8


def test_the_plan_budget_names_the_entry_that_crossed_it(api, monkeypatch):
    results = api.post("/api/v1/estimate/batch", json=VARIED).json()["results"]
    spent, crossings = 0, []
    for r in results:
        if r["ok"]:
            spent += r["result"]["plan"]["plans_evaluated"] * (1 + len(r["result"]["failover"]))
            crossings.append((r["index"], spent))
    # A budget just below what the entries up to the middle answered spend together.
    index, total = crossings[len(crossings) // 2]
    monkeypatch.setattr(estimates, "REQUEST_PLAN_BUDGET", total - 1)
    response = api.post("/api/v1/estimate/batch", json=VARIED)
    assert response.status_code == 413
    assert response.json()["errors"] == [
        {"field": str(index), "message": "exceeds the request's plan budget"}
    ]


@pytest.mark.parametrize("offset", [0, 1])
def test_a_budget_the_entries_fit_in_answers_them_all(api, monkeypatch, offset):
    results = api.post("/api/v1/estimate/batch", json=VARIED).json()["results"]
    total = sum(
        r["result"]["plan"]["plans_evaluated"] * (1 + len(r["result"]["failover"]))
        for r in results
        if r["ok"]
    )
    monkeypatch.setattr(estimates, "REQUEST_PLAN_BUDGET", total + offset)
    assert api.post("/api/v1/estimate/batch", json=VARIED).status_code == 200
