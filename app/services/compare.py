"""Builds side by side: the tier-line table plus, with a model, the engine's figures.

Contract (callers: the JSON API and the /compare page):
- `compare_builds(session, *, query: CompareQuery, costs) -> CompareOut`.
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

from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.engine import CostAssumptions, Estimate
from app.formatting import (
    DASH,
    gb,
    gbps,
    gbs,
    usd,
    watts,
)
from app.schemas.compare import STORY_MODEL, CompareModel, CompareOut, CompareQuery
from app.services.build_rows import BuildRow, find_build
from app.services.compare_rows import (
    cell_text,
    connection_text,
    failover_text,
    model_rows,
    pooling_text,
    run_model_label,
    table_row,
)
from app.services.engine_runs import catalog_estimate, simple_workload
from app.services.estimate_answers import workload_out
from app.services.model_profiles import ModelProfileRow, find_model_profile, model_profile_rows


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


def compare_builds(
    session: Session, *, query: CompareQuery, costs: CostAssumptions
) -> CompareOut:
    """Builds side by side."""
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
) -> CompareOut:
    items = [b.list_item for b in builds]
    workload = simple_workload(
        precision=query.precision,
        context_tokens=query.context_tokens,
        batch=query.batch,
        runtime=query.runtime,
        parallelism=query.parallelism,
        offload=query.offload,
    )
    rows = [
        table_row("connection", "Connection", [connection_text(b) for b in builds], cell_text),
        table_row(
            "gpu_to_gpu_bandwidth_gbs",
            "GPU-to-GPU bandwidth",
            [i.intra_node_bandwidth_gbs if i.accelerator_count > 1 else None for i in items],
            # Vendors quote links both ways (NVLink "900 GB/s", the 4090 rig's "~64 GB/s");
            # stored per direction, shown both ways so the figures match what people quote.
            lambda v: DASH if v is None else f"{gbs(v)} per direction ({gbs(2 * v)} both ways)",
            "GB/s per accelerator, per direction",
        ),
        table_row(
            "inter_node_bandwidth_gbps",
            "Node-to-node bandwidth",
            [i.inter_node_bandwidth_gbps if i.nodes > 1 else None for i in items],
            gbps,
            "Gb/s per node",
        ),
        table_row(
            "memory_pooling",
            "Memory pooling",
            [i.memory_pooled for i in items],
            cell_text,
            display=[pooling_text(b) for b in builds],
        ),
    ]
    rows += [
        table_row(
            "accelerators", "Cards per node", [i.accelerators_label for i in items], cell_text
        ),
        table_row(
            "min_accelerator_memory_gb",
            "Smallest card's memory",
            [i.min_accelerator_memory_gb for i in items],
            gb,
            "GB",
        ),
        table_row(
            "slowest_pcie_gbs",
            "Slowest card-to-host link",
            [i.slowest_pcie_gbs for i in items],
            lambda v: DASH if v is None else f"{gbs(v)} per direction",
            "GB/s per direction",
        ),
        table_row("host_memory_gb", "Host RAM", [i.host_memory_gb for i in items], gb, "GB"),
        table_row(
            "host_ram_bandwidth_gbs",
            "Host RAM bandwidth (peak)",
            [i.host_ram_bandwidth_gbs for i in items],
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
        run = table_row(
            "run_model",
            run_model_label(model, query.precision, size),
            [e.fits for e in estimates],
            cell_text,
            display=[e.verdict for e in estimates],
        )
        rows.append(run)
        model_out = CompareModel(
            slug=model.slug,
            name=model.name,
            params_total=model.params_total,
            precision=query.precision,
            rule_of_thumb_gb=size,
            given=given,
            judged_by=_judged_by(model, given),
        )
    rows += [
        table_row("failover", "Failover", [b.failover for b in builds], cell_text),
    ]
    if model is not None:
        rows.append(
            table_row(
                "failover_computed",
                f"After losing one accelerator / one node ({model.name}, estimate)",
                [failover_text(b, model, workload, costs) for b in builds],
                cell_text,
            )
        )
    rows += [
        table_row("scheduling", "Scheduling", [b.scheduling for b in builds], cell_text),
        table_row("power_w", "Power", [i.power_w for i in items], watts, "W"),
        table_row(
            "total_memory_gb",
            "Total VRAM",
            [i.total_memory_gb for i in items],
            gb,
            "GB",
        ),
        table_row(
            "pooled_memory_gb",
            "Pooled memory (one scale-up domain)",
            [i.pooled_memory_gb for i in items],
            gb,
            "GB",
        ),
        table_row("price_usd", "Price", [i.price_usd for i in items], usd, "USD"),
    ]
    if model is not None and given:
        rows += model_rows(model, estimates, query)
    # CompareOut.workload is documented as an object of any keys, so it takes the plain values.
    workload_values = workload_out(workload).model_dump()
    return CompareOut(builds=items, model=model_out, workload=workload_values, rows=rows)


