"""The rows of a compare table: words for connections and pooling, the engine's figures per build.

Each row is a `CompareRow` (key, label, unit, values, display, same): raw values, human strings,
and whether every build has the same value.
"""

from collections.abc import Callable
from typing import Any

from app.engine import CostAssumptions, Estimate, Workload
from app.formatting import DASH, gb, precision_label, seconds, tokens, tps, usd
from app.schemas.compare import CompareQuery, CompareRow
from app.services.build_rows import INTER_LINK_LABELS, INTRA_LINK_LABELS, BuildRow
from app.services.engine_runs import failover_cases
from app.services.model_profiles import ModelProfileRow


def connection_text(row: BuildRow) -> str:
    """How the accelerators are connected, in words."""
    item = row.list_item
    intra = INTRA_LINK_LABELS.get(item.intra_node_link_kind, item.intra_node_link_kind)
    if item.accelerator_count == 1:
        intra = "single accelerator" if item.intra_node_link_kind != "unified" else intra
    elif item.intra_node_link_kind == "pcie":
        intra = "PCIe through the host"
    if item.nodes == 1:
        return intra
    inter = INTER_LINK_LABELS.get(item.inter_node_link_kind, item.inter_node_link_kind)
    speed = item.inter_node_bandwidth_gbps
    inter_text = f"{inter} {speed:,.0f} Gb/s" if speed else inter
    return f"{intra} inside each node + {inter_text} between {item.nodes} nodes"


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


def table_row(
    key: str,
    label: str,
    values: list[Any],
    fmt: Callable[[Any], str],
    unit: str | None = None,
    *,
    display: list[str] | None = None,
) -> CompareRow:
    """One compare row: raw values, their display strings (`fmt` of each value unless given),
    and whether all are equal."""
    return CompareRow(
        key=key,
        label=label,
        unit=unit,
        values=values,
        display=[fmt(v) for v in values] if display is None else display,
        same=all(v == values[0] for v in values),
    )


def cell_text(value: Any) -> str:
    """A text cell (a dash when empty)."""
    return DASH if value is None or value == "" else str(value)


def run_model_label(model: ModelProfileRow, precision: str, size_gb: float) -> str:
    """The label of the "Run a N GB model?" row."""
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


def failover_text(
    build: BuildRow, model: ModelProfileRow, workload: Workload, costs: CostAssumptions
) -> str:
    """Fit and speed after losing one accelerator / one node, in words."""
    parts = []
    for case in failover_cases(build.spec, model.spec, workload, costs):
        if case.fits and case.decode_tokens_per_s is not None:
            parts.append(f"{case.lost}: fits, {case.decode_tokens_per_s:,.1f} tokens/s")
        elif case.accelerators_left == 0:
            parts.append(f"{case.lost}: nothing left to run on")
        else:
            parts.append(f"{case.lost}: does not fit")
    return "; ".join(parts)


def model_rows(
    model: ModelProfileRow, estimates: list[Estimate], query: CompareQuery
) -> list[CompareRow]:
    """The engine rows of a compare table with a model."""
    def tput(attr: str) -> list[Any]:
        return [getattr(e.throughput, attr) if e.throughput else None for e in estimates]

    return [
        table_row(
            "fits",
            f"Fits {model.name} at {precision_label(query.precision)}?",
            [e.fits for e in estimates],
            lambda v: "Yes" if v else "No",
        ),
        table_row(
            "memory_per_accelerator_gb",
            "Memory needed on the fullest accelerator",
            [e.memory.per_accelerator_gb for e in estimates],
            gb,
            "GB",
        ),
        table_row(
            "memory_needed_gb",
            "Memory needed (estimate)",
            [e.memory.total_gb for e in estimates],
            gb,
            "GB",
        ),
        table_row("runtime", "Runtime", [e.runtime for e in estimates], cell_text),
        table_row("plan", "Parallel plan", [e.plan.description for e in estimates], cell_text),
        table_row(
            "launch_command",
            "Launch command",
            [e.plan.launch_command for e in estimates],
            cell_text,
        ),
        table_row(
            "decode_tokens_per_s",
            "Decode speed, each sequence (estimate)",
            tput("decode_tokens_per_s"),
            tps,
            "tokens/s",
        ),
        table_row(
            "aggregate_decode_tokens_per_s",
            _aggregate_label(query.batch),
            tput("aggregate_decode_tokens_per_s"),
            tps,
            "tokens/s",
        ),
        table_row(
            "time_to_first_token_s",
            "Time to first token (estimate)",
            tput("time_to_first_token_s"),
            seconds,
            "s",
        ),
        table_row("bottleneck", "Bottleneck", tput("bottleneck"), cell_text),
        table_row(
            "usd_per_million_tokens",
            "$ per million tokens (estimate)",
            [e.cost.usd_per_million_tokens if e.throughput else None for e in estimates],
            usd,
            "USD",
        ),
        table_row(
            "max_context_tokens_that_fit",
            "Largest context that fits",
            [e.max_context_tokens_that_fit for e in estimates],
            tokens,
            "tokens",
        ),
    ]
