"""Builds side by side: the tier-line table plus, with a model, the engine's figures.

Contract (callers: the JSON API and the /compare page):
- `compare_builds(session, *, query: CompareQuery, costs) -> dict` in the `CompareOut` shape.
  Unknown build or model slugs raise NotFound naming `builds` / `model`.
- Rows, in order: connection, gpu_to_gpu_bandwidth_gbs, inter_node_bandwidth_gbps,
  memory_pooling, accelerators, min_accelerator_memory_gb, slowest_pcie_gbs, host_memory_gb,
  host_ram_bandwidth_gbs, run_model ("Run a N GB model?": the engine's verdict per build, N the
  rule-of-thumb size of the chosen model at the precision, or of deepseek-v3 -- the tier-line
  story -- when no model is given; the largest catalog model when deepseek-v3 is absent), failover,
  failover_computed (fit and speed after losing one accelerator / one node, for that model),
  scheduling, power_w, total_memory_gb, pooled_memory_gb, price_usd; with a model given also
  fits, memory_per_accelerator_gb, memory_needed_gb, runtime, plan, launch_command,
  decode_tokens_per_s, aggregate_decode_tokens_per_s, time_to_first_token_s, bottleneck,
  usd_per_million_tokens, max_context_tokens_that_fit. `runtime` (None = each build's
  default) and `parallelism` come from the query.
  Each row has raw `values`, human `display` strings and `same` (all values equal).
"""

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from app.engine import CostAssumptions, Estimate, Workload
from app.formatting import (
    DASH,
    gb,
    gbps,
    gbs,
    precision_label,
    seconds,
    tokens,
    tps,
    usd,
    watts,
)
from app.schemas.compare import STORY_MODEL, CompareQuery
from app.services.builds import INTER_LINK_LABELS, INTRA_LINK_LABELS, BuildRow, find_build
from app.services.cache import Snapshot, snapshot
from app.services.estimates import (
    catalog_estimate,
    failover_cases,
    simple_workload,
    workload_out,
)
from app.services.model_profiles import ModelProfileRow, find_model_profile, model_profile_rows


def connection_text(row: BuildRow) -> str:
    """How the accelerators are connected, in words."""
    item = row.item
    intra = INTRA_LINK_LABELS.get(item["intra_node_link_kind"], item["intra_node_link_kind"])
    if item["accelerator_count"] == 1:
        intra = "single accelerator" if item["intra_node_link_kind"] != "unified" else intra
    elif item["intra_node_link_kind"] == "pcie":
        intra = "PCIe through the host"
    if item["nodes"] == 1:
        return intra
    inter = INTER_LINK_LABELS.get(item["inter_node_link_kind"], item["inter_node_link_kind"])
    speed = item["inter_node_bandwidth_gbps"]
    inter_text = f"{inter} {speed:,.0f} Gb/s" if speed else inter
    return f"{intra} inside each node + {inter_text} between {item['nodes']} nodes"


def pooling_text(row: BuildRow) -> str:
    """Whether memory is pooled over a fast fabric, in words."""
    spec = row.spec
    size = gb(spec.accelerator.memory_gb)
    count = spec.accelerator_count
    if spec.accelerator.memory_kind == "unified" and count == 1:
        return f"Unified — {size} shared by CPU and GPU"
    if count == 1:
        return f"One card — {size}"
    if spec.is_mixed:
        sizes = " / ".join(
            dict.fromkeys(gb(g.accelerator.memory_gb) for g in spec.accelerator_groups)
        )
        return f"No — {count} isolated cards of {len(spec.accelerator_groups)} kinds ({sizes})"
    if not spec.memory_pooled:
        return f"No — {count} isolated {size} cards"
    domain = spec.pooled_domain_accelerators
    link = INTRA_LINK_LABELS.get(spec.intra_node_link.kind, spec.intra_node_link.kind)
    where = "per node" if domain == spec.accelerators_per_node else "in one domain"
    return f"Yes — {domain} × {size} pooled {where} over {link}"


def _story_model(snap: Snapshot, query: CompareQuery) -> tuple[ModelProfileRow | None, bool]:
    if query.model is not None:
        return find_model_profile(snap, query.model, field="model"), True
    rows = model_profile_rows(snap)
    if STORY_MODEL in rows:
        return rows[STORY_MODEL], False
    if not rows:
        return None, False
    return max(rows.values(), key=lambda m: (m.params_total, m.slug)), False


def _judged_by(model: ModelProfileRow, given: bool) -> str:
    """Why this model judged the engine rows, in words (a default must never be silent)."""
    if given:
        return f"{model.name}, the model asked for"
    why = (
        "the default tier-line story model"
        if model.slug == STORY_MODEL
        else f"the largest catalog model ({STORY_MODEL}, the usual default, is not in the catalog)"
    )
    return f"no model given: {model.name}, {why}; pass model=<slug> to judge another"


def _row(
    key: str,
    label: str,
    values: list[Any],
    fmt: Callable[[Any], str],
    unit: str | None = None,
) -> dict[str, Any]:
    return {
        "key": key,
        "label": label,
        "unit": unit,
        "values": values,
        "display": [fmt(v) for v in values],
        "same": all(v == values[0] for v in values),
    }


def _text(value: Any) -> str:
    return DASH if value is None or value == "" else str(value)


def compare_builds(
    session: Session, *, query: CompareQuery, costs: CostAssumptions
) -> dict[str, Any]:
    """Builds side by side (CompareOut shape)."""
    snap = snapshot(session)
    builds = [find_build(snap, slug, field="builds") for slug in query.slugs]
    model, given = _story_model(snap, query)
    key = ("compare", query.model_dump_json(), costs)
    return snap.memo(key, lambda: _compare(snap, query, builds, model, given, costs))


def _compare(
    snap: Snapshot,
    query: CompareQuery,
    builds: list[BuildRow],
    model: ModelProfileRow | None,
    given: bool,
    costs: CostAssumptions,
) -> dict[str, Any]:
    items = [b.item for b in builds]
    workload = simple_workload(
        precision=query.precision,
        context_tokens=query.context_tokens,
        batch=query.batch,
        runtime=query.runtime,
        parallelism=query.parallelism,
    )
    rows = [
        _row("connection", "Connection", [connection_text(b) for b in builds], _text),
        _row(
            "gpu_to_gpu_bandwidth_gbs",
            "GPU-to-GPU bandwidth",
            [i["intra_node_bandwidth_gbs"] if i["accelerator_count"] > 1 else None for i in items],
            # Vendors quote links both ways (NVLink "900 GB/s", the 4090 rig's "~64 GB/s");
            # stored per direction, shown both ways so the figures match what people quote.
            lambda v: DASH if v is None else f"{gbs(v)} per direction ({gbs(2 * v)} both ways)",
            "GB/s per accelerator, per direction",
        ),
        _row(
            "inter_node_bandwidth_gbps",
            "Node-to-node bandwidth",
            [i["inter_node_bandwidth_gbps"] if i["nodes"] > 1 else None for i in items],
            gbps,
            "Gb/s per node",
        ),
        _row(
            "memory_pooling",
            "Memory pooling",
            [i["memory_pooled"] for i in items],
            lambda v: "",
        ),
    ]
    rows[-1]["display"] = [pooling_text(b) for b in builds]
    rows += [
        _row("accelerators", "Cards per node", [i["accelerators_label"] for i in items], _text),
        _row(
            "min_accelerator_memory_gb",
            "Smallest card's memory",
            [i["min_accelerator_memory_gb"] for i in items],
            gb,
            "GB",
        ),
        _row(
            "slowest_pcie_gbs",
            "Slowest card-to-host link",
            [i["slowest_pcie_gbs"] for i in items],
            lambda v: DASH if v is None else f"{gbs(v)} per direction",
            "GB/s per direction",
        ),
        _row("host_memory_gb", "Host RAM", [i["host_memory_gb"] for i in items], gb, "GB"),
        _row(
            "host_ram_bandwidth_gbs",
            "Host RAM bandwidth (peak)",
            [i["host_ram_bandwidth_gbs"] for i in items],
            gbs,
            "GB/s",
        ),
    ]
    model_out = None
    estimates: list[Estimate] = []
    if model is not None:
        estimates = [
            catalog_estimate(snap, build=b, model=model, workload=workload, costs=costs)
            for b in builds
        ]
        size = model.rule_of_thumb_gb(query.precision)
        run = _row(
            "run_model",
            _run_model_label(model, query.precision, size),
            [e.fits for e in estimates],
            lambda v: "",
        )
        run["display"] = [e.verdict for e in estimates]
        rows.append(run)
        model_out = {
            "slug": model.slug,
            "name": model.name,
            "params_total": model.params_total,
            "precision": query.precision,
            "rule_of_thumb_gb": size,
            "given": given,
            "judged_by": _judged_by(model, given),
        }
    rows += [
        _row("failover", "Failover", [b.failover for b in builds], _text),
    ]
    if model is not None:
        rows.append(
            _row(
                "failover_computed",
                f"After losing one accelerator / one node ({model.name}, estimate)",
                [_failover_text(b, model, workload, costs) for b in builds],
                _text,
            )
        )
    rows += [
        _row("scheduling", "Scheduling", [b.scheduling for b in builds], _text),
        _row("power_w", "Power", [i["power_w"] for i in items], watts, "W"),
        _row(
            "total_memory_gb",
            "Total VRAM",
            [i["total_memory_gb"] for i in items],
            gb,
            "GB",
        ),
        _row(
            "pooled_memory_gb",
            "Pooled memory (one scale-up domain)",
            [i["pooled_memory_gb"] for i in items],
            gb,
            "GB",
        ),
        _row("price_usd", "Price", [i["price_usd"] for i in items], usd, "USD"),
    ]
    if model is not None and given:
        rows += _model_rows(model, estimates, query)
    return {
        "builds": items,
        "model": model_out,
        "workload": workload_out(workload),
        "rows": rows,
    }


def _run_model_label(model: ModelProfileRow, precision: str, size_gb: float) -> str:
    # The tier line's question quotes the rule of thumb people use; the cells are the engine's
    # detailed need (KV cache, runtime overhead, 16-bit embeddings), so say which is which.
    return (
        f"Run a {gb(size_gb)} model? ({gb(size_gb)}: {model.name} at "
        f"{precision_label(precision)} by the rule of thumb, parameters × bytes × 1.2; "
        "each cell: the engine's detailed need)"
    )


def _aggregate_label(batch: int) -> str:
    # At one sequence the total equals the per-sequence row; the label says so instead of
    # reading like a second, different figure.
    if batch == 1:
        return "Decode speed, all sequences together (estimate; one sequence, so as above)"
    return f"Decode speed, all {batch} sequences together (estimate)"


def _failover_text(
    build: BuildRow, model: ModelProfileRow, workload: Workload, costs: CostAssumptions
) -> str:
    parts = []
    for case in failover_cases(build.spec, model.spec, workload, costs):
        if case["fits"] and case["decode_tokens_per_s"] is not None:
            parts.append(f"{case['lost']}: fits, {case['decode_tokens_per_s']:,.1f} tokens/s")
        elif case["accelerators_left"] == 0:
            parts.append(f"{case['lost']}: nothing left to run on")
        else:
            parts.append(f"{case['lost']}: does not fit")
    return "; ".join(parts)


def _model_rows(
    model: ModelProfileRow, estimates: list[Estimate], query: CompareQuery
) -> list[dict[str, Any]]:
    def tput(attr: str) -> list[Any]:
        return [getattr(e.throughput, attr) if e.throughput else None for e in estimates]

    return [
        _row(
            "fits",
            f"Fits {model.name} at {precision_label(query.precision)}?",
            [e.fits for e in estimates],
            lambda v: "Yes" if v else "No",
        ),
        _row(
            "memory_per_accelerator_gb",
            "Memory needed on the fullest accelerator",
            [e.memory.per_accelerator_gb for e in estimates],
            gb,
            "GB",
        ),
        _row(
            "memory_needed_gb",
            "Memory needed (estimate)",
            [e.memory.total_gb for e in estimates],
            gb,
            "GB",
        ),
        _row("runtime", "Runtime", [e.runtime for e in estimates], _text),
        _row("plan", "Parallel plan", [e.plan.description for e in estimates], _text),
        _row(
            "launch_command",
            "Launch command",
            [e.plan.launch_command for e in estimates],
            _text,
        ),
        _row(
            "decode_tokens_per_s",
            "Decode speed, each sequence (estimate)",
            tput("decode_tokens_per_s"),
            tps,
            "tokens/s",
        ),
        _row(
            "aggregate_decode_tokens_per_s",
            _aggregate_label(query.batch),
            tput("aggregate_decode_tokens_per_s"),
            tps,
            "tokens/s",
        ),
        _row(
            "time_to_first_token_s",
            "Time to first token (estimate)",
            tput("time_to_first_token_s"),
            seconds,
            "s",
        ),
        _row("bottleneck", "Bottleneck", tput("bottleneck"), _text),
        _row(
            "usd_per_million_tokens",
            "$ per million tokens (estimate)",
            [e.cost.usd_per_million_tokens if e.throughput else None for e in estimates],
            usd,
            "USD",
        ),
        _row(
            "max_context_tokens_that_fit",
            "Largest context that fits",
            [e.max_context_tokens_that_fit for e in estimates],
            tokens,
            "tokens",
        ),
    ]
