"""`tierline estimate` and `tierline recommend`: the calculator and the ranking, as text or JSON."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.common import echo_json, engine_answer, fail, read_object, validated
from app.formatting import DASH, gb, hours, seconds, tps, usd

if TYPE_CHECKING:
    from app.schemas.recommend import RecommendAtSlo

# Options `estimate` and `recommend` share.
Precision = Annotated[str | None, typer.Option(help="weight precision (default fp8)")]
ContextTokens = Annotated[int | None, typer.Option("--context-tokens")]
Batch = Annotated[int | None, typer.Option(help="concurrent sequences")]
AsJson = Annotated[bool, typer.Option("--json", help="print the API's JSON answer")]


def estimate(
    build: Annotated[str | None, typer.Option(help="catalog build slug")] = None,
    build_file: Annotated[
        Path | None, typer.Option("--build-file", help="inline build object (JSON or YAML)")
    ] = None,
    model: Annotated[str | None, typer.Option(help="catalog model slug")] = None,
    config: Annotated[
        Path | None, typer.Option(help="a Hugging Face config.json instead of --model")
    ] = None,
    model_name: Annotated[
        str | None, typer.Option("--model-name", help="name for --config (default: file stem)")
    ] = None,
    mode: Annotated[str, typer.Option(help="inference | training | lora | qlora")] = "inference",
    precision: Precision = None,
    kv_cache_precision: Annotated[str | None, typer.Option("--kv-cache-precision")] = None,
    context_tokens: ContextTokens = None,
    prompt_tokens: Annotated[int | None, typer.Option("--prompt-tokens")] = None,
    batch: Batch = None,
    runtime: Annotated[
        str | None, typer.Option(help="vllm, sglang, trt-llm, llama.cpp, ollama, mlx")
    ] = None,
    parallelism: Annotated[str | None, typer.Option(help="auto | tensor | pipeline")] = None,
    tensor_parallel: Annotated[int | None, typer.Option("--tensor-parallel")] = None,
    pipeline_parallel: Annotated[int | None, typer.Option("--pipeline-parallel")] = None,
    memory_utilization: Annotated[
        float | None, typer.Option("--memory-utilization", help="usable share of memory, 0-1")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Estimate fit, plan, speed and cost: the POST /api/v1/estimate answer."""
    # Imported when the command runs, so that `tierline serve` and `--help` start quickly.
    from app.schemas.estimate import EstimateRequest
    from app.services.estimates import cost_assumptions, run_estimate

    if (build is None) == (build_file is None):
        fail("give exactly one of --build SLUG and --build-file FILE")
    if (model is None) == (config is None):
        fail("give exactly one of --model SLUG and --config config.json")
    body: dict[str, Any] = {}
    if build_file is not None:
        body["build"] = read_object(build_file, "a build")
    else:
        body["build"] = build
    if config is not None:
        body["model"] = {
            "name": model_name or config.stem,
            "config": read_object(config, "config.json"),
        }
    else:
        body["model"] = model
    options = {
        "mode": mode,
        "precision": precision,
        "kv_cache_precision": kv_cache_precision,
        "context_tokens": context_tokens,
        "prompt_tokens": prompt_tokens,
        "batch": batch,
        "runtime": runtime,
        "parallelism": parallelism,
        "tensor_parallel": tensor_parallel,
        "pipeline_parallel": pipeline_parallel,
        "memory_utilization": memory_utilization,
    }
    body["workload"] = {k: v for k, v in options.items() if v is not None}
    request = validated(EstimateRequest, body)
    answer = engine_answer(
        lambda session, settings: run_estimate(
            session, request=request, costs=cost_assumptions(settings)
        ).model_dump(mode="json")
    )
    if as_json:
        echo_json(answer)
    else:
        print_estimate(answer)


def recommend(
    model: Annotated[str, typer.Option(help="catalog model slug")],
    max_price: Annotated[float | None, typer.Option("--max-price", help="USD at most")] = None,
    min_tokens_per_s: Annotated[
        float | None, typer.Option("--min-tokens-per-s", help="decode tokens/s per sequence")
    ] = None,
    precision: Precision = None,
    context_tokens: ContextTokens = None,
    batch: Batch = None,
    runtime: Annotated[str | None, typer.Option(help="default: per build from the inputs")] = None,
    sort: Annotated[
        str | None, typer.Option(help="price_usd, usd_per_million_tokens, -decode_tokens_per_s")
    ] = None,
    ttft_s_max: Annotated[
        float | None, typer.Option("--ttft-s-max", help="SLO: time to first token at most, s")
    ] = None,
    itl_ms_max: Annotated[
        float | None, typer.Option("--itl-ms-max", help="SLO: inter-token latency at most, ms")
    ] = None,
    tokens_per_s_per_user_min: Annotated[
        float | None,
        typer.Option("--tokens-per-s-per-user-min", help="SLO: tokens/s each user sees"),
    ] = None,
    concurrent_users: Annotated[
        int | None, typer.Option("--concurrent-users", help="SLO load: users at once")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """The builds that run a model, ranked (and at a service level when one is given): the GET
    /api/v1/recommend answer."""
    from app.schemas.recommend import RecommendQuery
    from app.services.estimates import cost_assumptions
    from app.services.recommend import recommend as recommend_builds

    values = {
        "model": model,
        "max_price_usd": max_price,
        "min_decode_tokens_per_s": min_tokens_per_s,
        "precision": precision,
        "context_tokens": context_tokens,
        "batch": batch,
        "runtime": runtime,
        "sort": sort,
        "ttft_s_max": ttft_s_max,
        "itl_ms_max": itl_ms_max,
        "tokens_per_s_per_user_min": tokens_per_s_per_user_min,
        "concurrent_users": concurrent_users,
    }
    query = validated(RecommendQuery, {k: v for k, v in values.items() if v is not None})
    answer = engine_answer(
        lambda session, settings: recommend_builds(
            session, query=query, costs=cost_assumptions(settings)
        )
    )
    if as_json:
        echo_json(answer.model_dump(mode="json"))
        return
    typer.echo(
        f"{answer.model.name}: {len(answer.items)} of {answer.fitting} fitting builds pass the "
        f"limits ({answer.considered} considered), ranked by {answer.sort}"
    )
    for item in answer.items:
        typer.echo(
            f"{item.rank:>3}. {item.build.name}"
            f"  {usd(item.build.price_usd)}"
            f"  {tps(item.decode_tokens_per_s)}  {item.runtime}: {item.plan}"
            f"{'  (Pareto front)' if item.pareto else ''}"
        )
        typer.echo(f"     {item.launch_command}")
    if answer.at_slo is not None:
        print_at_slo(answer.at_slo)
    typer.echo("All figures are estimates (docs/engine.md).")


def print_at_slo(at_slo: "RecommendAtSlo") -> None:
    """The ranking at the service level, and the builds that cannot meet it with the reason."""
    from app.services.recommend_slo import miss_reason, slo_summary

    typer.echo(f"At {slo_summary(at_slo)}: {len(at_slo.items)} builds")
    for item in at_slo.items:
        copies = item.copies_needed or 1
        at_load = item.usd_per_million_output_tokens_at_load
        typer.echo(
            f"{item.rank:>3}. {copies} x {item.build.name}"
            f"  {usd(item.price_usd_for_copies)}"
            f"  {item.concurrency:,} requests per copy at {tps(item.tokens_per_s_per_user)}"
            f" each, TTFT {seconds(item.ttft_s)}"
            f"  {usd(at_load if at_load is not None else item.usd_per_million_output_tokens)}"
            " per million output tokens"
        )
    for miss in at_slo.missed:
        typer.echo(f"     not {miss.build.name}: {miss_reason(miss, at_slo)}")


def print_estimate(answer: dict[str, Any]) -> None:
    """The estimate as label/value lines, the findings below them."""
    plan, mem, t, cost = answer["plan"], answer["memory"], answer["throughput"], answer["cost"]
    w = answer["workload"]
    rows = [
        ("Build", answer["build"]["name"]),
        ("Model", answer["model"]["name"]),
        (
            "Workload",
            f"{w['mode']} at {w['precision']}, {w['context_tokens']:,} tokens of context, "
            f"batch {w['batch']}, runtime {w['runtime']}",
        ),
        ("Verdict", answer["verdict"]),
        ("Memory needed", gb(mem["total_gb"])),
        ("Rule of thumb", gb(mem["rule_of_thumb_gb"]) + " (parameters x bytes x 1.2)"),
        (
            "Fullest accelerator",
            f"{gb(mem['per_accelerator_gb'])} of "
            f"{gb(mem['available_per_accelerator_gb'])} usable",
        ),
        ("Plan", f"{plan['description']} ({plan['objective']})"),
        ("Launch", plan["launch_command"]),
        ("Decode per sequence", tps(t["decode_tokens_per_s"])),
        ("Decode, all sequences", tps(t["aggregate_decode_tokens_per_s"])),
        ("Time to first token", seconds(t["time_to_first_token_s"])),
        ("Bottleneck", t["bottleneck"] or DASH),
        ("$ per million tokens", usd(cost["usd_per_million_tokens"])),
    ]
    if answer.get("training"):
        tr = answer["training"]
        rows += [
            ("Training tokens/s", tps(tr["tokens_per_s"])),
            ("Time to train", hours(tr["time_to_train_hours"])),
        ]
    for case in answer.get("failover") or []:
        state = (
            f"fits, {tps(case['decode_tokens_per_s'])}"
            if case["fits"]
            else "does not fit"
        )
        rows.append((f"After losing {case['lost']}", state))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        typer.echo(f"{label:<{width}}  {value}")
    for finding in answer["findings"]:
        typer.echo(f"[{finding['severity']}] {finding['message']}")
    typer.echo("All figures are estimates (docs/engine.md).")
