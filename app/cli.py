"""The `tierline` command: serve, migrate, seed, export, estimate, recommend, serving (and admin
tokens)."""

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from app.admin.cli import admin_cli
from app.config import Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.migrate import upgrade_to_head
from app.models import Build

cli = typer.Typer(
    help="tierline: which AI hardware build runs this model, how fast, and at what cost.",
    no_args_is_help=True,
    add_completion=False,
)
cli.add_typer(admin_cli, name="admin")


class ExportFormat(StrEnum):
    yaml = "yaml"
    json = "json"


def _fail(message: str) -> None:
    typer.secho(message, err=True, fg=typer.colors.RED)
    raise typer.Exit(code=1)


@cli.command()
def migrate() -> None:
    """Upgrade the database schema to the newest revision."""
    settings = get_settings()
    try:
        upgrade_to_head(settings.database_url)
    except SQLAlchemyError as exc:
        _fail(f"migration failed: {exc.__class__.__name__}: {exc}")
    typer.echo(f"database at head: {settings.database_url}")


@cli.command()
def seed(
    path: Annotated[
        Path | None,
        typer.Argument(help="a seed directory or one YAML/JSON document (default: seed_data/)"),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print what would change and change nothing")
    ] = False,
) -> None:
    """Upsert catalog records by slug from seed files; all or nothing."""
    from app.services.catalog import import_document, load_document_file, load_seed_directory

    settings = get_settings()
    source = path or settings.seed_dir
    if not source.exists():
        _fail(f"{source}: no such file or directory")
    try:
        document = load_seed_directory(source) if source.is_dir() else load_document_file(source)
    except (OSError, yaml.YAMLError) as exc:
        _fail(f"{source}: cannot read: {exc}")
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            result = import_document(session, document, actor="cli:seed", dry_run=dry_run)
    finally:
        engine.dispose()
    if result.errors:
        for err in result.errors:
            where = f"{err.kind} '{err.slug}'" if err.slug else f"{err.kind} #{err.index}"
            typer.echo(f"{source}: {where}: {err.field}: {err.message}", err=True)
        _fail(f"{len(result.errors)} invalid record(s); nothing was written")
    verb = "would" if dry_run else "did"
    for label, refs in (("create", result.created), ("update", result.updated)):
        for ref in refs:
            typer.echo(f"{label} {ref.kind} {ref.slug}")
    typer.echo(
        f"{verb} create {len(result.created)}, update {len(result.updated)}, "
        f"leave {len(result.unchanged)} unchanged"
    )


@cli.command()
def export(
    format: Annotated[ExportFormat, typer.Option("--format", help="yaml or json")] = (
        ExportFormat.yaml
    ),
    output: Annotated[Path | None, typer.Option("-o", "--output", help="file to write")] = None,
) -> None:
    """Write the whole catalog as one document that `tierline seed` accepts."""
    from app.services.catalog import export_document

    settings = get_settings()
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            document: dict[str, Any] = export_document(session)
    finally:
        engine.dispose()
    if format is ExportFormat.json:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


@cli.command()
def serving(
    build: Annotated[str, typer.Argument(help="a catalog build slug")],
    model: Annotated[str, typer.Argument(help="a catalog model slug")],
    precision: Annotated[str, typer.Option(help="weight precision")] = "fp8",
    runtime: Annotated[str, typer.Option(help="inference runtime")] = "vllm",
    input_tokens: Annotated[int | None, typer.Option(help="prompt tokens per request")] = None,
    output_tokens: Annotated[int | None, typer.Option(help="answer tokens per request")] = None,
    ttft_s_max: Annotated[float | None, typer.Option(help="TTFT limit, seconds")] = None,
    itl_ms_max: Annotated[float | None, typer.Option(help="inter-token latency limit, ms")] = None,
    tokens_per_s_per_user_min: Annotated[
        float | None, typer.Option(help="minimum tokens/s per user")
    ] = None,
    concurrent_users: Annotated[int | None, typer.Option(help="target concurrent users")] = None,
    requests_per_s: Annotated[float | None, typer.Option(help="target requests/s")] = None,
    speculative: Annotated[str, typer.Option(help="none, mtp or draft")] = "none",
    acceptance_rate: Annotated[float | None, typer.Option(help="speculation acceptance")] = None,
    draft_model: Annotated[str | None, typer.Option(help="draft model slug")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the API's JSON")] = False,
) -> None:
    """Serving curve of a build and model, the operating point at an SLO, and sizing."""
    from pydantic import ValidationError

    from app.errors import DomainError
    from app.schemas.serving import ServingRequest
    from app.services.estimates import cost_assumptions
    from app.services.serving import run_serving

    serving_fields = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "ttft_s_max": ttft_s_max,
        "itl_ms_max": itl_ms_max,
        "tokens_per_s_per_user_min": tokens_per_s_per_user_min,
        "concurrent_users": concurrent_users,
        "requests_per_s": requests_per_s,
    }
    spec = {"kind": speculative, "acceptance_rate": acceptance_rate, "draft_model": draft_model}
    raw = {
        "build": build,
        "model": model,
        "workload": {"precision": precision, "runtime": runtime},
        "serving": {
            **{k: v for k, v in serving_fields.items() if v is not None},
            "speculative": {k: v for k, v in spec.items() if v is not None},
        },
    }
    settings = get_settings()
    try:
        # The API's own validation, so the command refuses what the endpoint refuses.
        request = ServingRequest.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            typer.echo(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}", err=True)
        _fail("invalid input; nothing was computed")
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            answer = run_serving(session, request=request, costs=cost_assumptions(settings))
    except DomainError as exc:
        _fail(exc.detail)
    finally:
        engine.dispose()
    if as_json:
        sys.stdout.write(json.dumps(answer, ensure_ascii=False, allow_nan=False) + "\n")
        return
    typer.echo(serving_table(answer))


def serving_table(answer: dict[str, Any]) -> str:
    """The serving answer as a readable table, the operating point and findings below it."""
    lines = [
        f"{answer['model']['name']} on {answer['build']['name']} — {answer['plan']['description']}"
        f" (all figures are estimates)"
    ]
    if not answer["fits"]:
        lines.append("Does not fit: no serving curve.")
    else:
        header = ("users", "tok/s/user", "tok/s total", "tok/s/accel", "TTFT s", "ITL ms",
                  "$/M in", "$/M out")
        lines.append("  ".join(f"{h:>11}" for h in header))
        for p in answer["curve"]:
            cells = (
                f"{p['concurrency']:,}",
                f"{p['tokens_per_s_per_user']:,.1f}",
                f"{p['tokens_per_s_total']:,.0f}",
                f"{p['tokens_per_s_per_accelerator']:,.0f}",
                f"{p['ttft_s']:,.3f}",
                f"{p['itl_ms']:,.2f}",
                _money(p["usd_per_million_input_tokens"]),
                _money(p["usd_per_million_output_tokens"]),
            )
            lines.append("  ".join(f"{c:>11}" for c in cells))
    at = answer["at_slo"]
    if at is not None:
        lines.append(f"At the SLO: {at['summary']}")
    for finding in answer["findings"]:
        lines.append(f"[{finding['severity']}] {finding['message']}")
    return "\n".join(lines)


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:,.3f}"


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="interface to bind")] = None,
    port: Annotated[int | None, typer.Option(help="port to listen on")] = None,
    workers: Annotated[int | None, typer.Option(help="worker processes")] = None,
    no_migrate: Annotated[
        bool, typer.Option("--no-migrate", help="skip migrations and seeding (multi-host deploys)")
    ] = False,
) -> None:
    """Migrate, seed an empty catalog, and serve the site and API."""
    import uvicorn

    settings = get_settings()
    problem = settings.exposure_problem(host or settings.host)
    if problem is not None:
        typer.echo(f"refusing to start: {problem}", err=True)
        raise typer.Exit(2)
    if not no_migrate:
        migrate()
        if settings.seed_on_start and _catalog_is_empty(settings.database_url):
            seed(None, dry_run=False)
    from app.metrics import multiprocess_directory

    options = uvicorn_options(settings, host=host, port=port, workers=workers)
    # Several workers share their Prometheus metrics through a fresh directory (app/metrics.py).
    with multiprocess_directory(options["workers"]):
        uvicorn.run("app.main:app_factory", factory=True, **options)


def uvicorn_options(
    settings: Settings,
    *,
    host: str | None = None,
    port: int | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """How `serve` runs uvicorn (benchmarks/http_bench.py runs its baseline the same way)."""
    return {
        "host": host or settings.host,
        "port": port or settings.port,
        "workers": workers or settings.workers,
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
        "log_level": settings.log_level,
        # One log line per request: the app's JSON line (app/middleware/logs.py) carries the
        # method, route, status, duration and request id, so uvicorn's text line would repeat it.
        "access_log": False,
        "timeout_graceful_shutdown": 20,
    }


def _read_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON or YAML object from a file, or exit naming the file and the problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        _fail(f"{path}: cannot read: {exc.strerror or exc}")
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        _fail(f"{path}: not valid JSON/YAML: {exc}")
    if not isinstance(data, dict):
        _fail(f"{path}: {what} must be a JSON/YAML object")
    return data


def _engine_answer(run: Any) -> Any:
    """Run a service call on the configured catalog; domain errors exit 2 naming the field."""
    from app.errors import DomainError

    settings = get_settings()
    engine = make_engine(settings.database_url)
    try:
        with make_sessionmaker(engine)() as session:
            return run(session, settings)
    except DomainError as exc:
        for err in exc.errors:
            typer.echo(f"{err.field}: {err.message}", err=True)
        typer.secho(exc.detail, err=True, fg=typer.colors.RED)
        raise typer.Exit(code=2) from None
    finally:
        engine.dispose()


def _fmt(value: Any, unit: str = "", digits: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        text = f"{value:,.{digits}f}"
    else:
        text = f"{value:,}" if isinstance(value, int) else str(value)
    return f"{text} {unit}".rstrip()


def _print_estimate(answer: dict[str, Any]) -> None:
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
        ("Memory needed", _fmt(mem["total_gb"], "GB")),
        ("Rule of thumb", _fmt(mem["rule_of_thumb_gb"], "GB") + " (parameters x bytes x 1.2)"),
        (
            "Fullest accelerator",
            f"{_fmt(mem['per_accelerator_gb'], 'GB')} of "
            f"{_fmt(mem['available_per_accelerator_gb'], 'GB')} usable",
        ),
        ("Plan", f"{plan['description']} ({plan['objective']})"),
        ("Launch", plan["launch_command"]),
        ("Decode per sequence", _fmt(t["decode_tokens_per_s"], "tokens/s")),
        ("Decode, all sequences", _fmt(t["aggregate_decode_tokens_per_s"], "tokens/s")),
        ("Time to first token", _fmt(t["time_to_first_token_s"], "s", 2)),
        ("Bottleneck", _fmt(t["bottleneck"])),
        ("$ per million tokens", _fmt(cost["usd_per_million_tokens"], "USD", 2)),
    ]
    if answer.get("training"):
        tr = answer["training"]
        rows += [
            ("Training tokens/s", _fmt(tr["tokens_per_s"], "tokens/s", 0)),
            ("Time to train", _fmt(tr["time_to_train_hours"], "hours")),
        ]
    for case in answer.get("failover") or []:
        state = (
            f"fits, {_fmt(case['decode_tokens_per_s'], 'tokens/s')}"
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


@cli.command()
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
    precision: Annotated[str | None, typer.Option(help="weight precision (default fp8)")] = None,
    kv_cache_precision: Annotated[str | None, typer.Option("--kv-cache-precision")] = None,
    context_tokens: Annotated[int | None, typer.Option("--context-tokens")] = None,
    prompt_tokens: Annotated[int | None, typer.Option("--prompt-tokens")] = None,
    batch: Annotated[int | None, typer.Option(help="concurrent sequences")] = None,
    runtime: Annotated[
        str | None, typer.Option(help="vllm, sglang, trt-llm, llama.cpp, ollama, mlx")
    ] = None,
    parallelism: Annotated[str | None, typer.Option(help="auto | tensor | pipeline")] = None,
    tensor_parallel: Annotated[int | None, typer.Option("--tensor-parallel")] = None,
    pipeline_parallel: Annotated[int | None, typer.Option("--pipeline-parallel")] = None,
    memory_utilization: Annotated[
        float | None, typer.Option("--memory-utilization", help="usable share of memory, 0-1")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the API's JSON answer")] = False,
) -> None:
    """Estimate fit, plan, speed and cost: the POST /api/v1/estimate answer."""
    from pydantic import ValidationError

    from app.schemas.estimate import EstimateRequest
    from app.services.estimates import cost_assumptions, run_estimate

    if (build is None) == (build_file is None):
        _fail("give exactly one of --build SLUG and --build-file FILE")
    if (model is None) == (config is None):
        _fail("give exactly one of --model SLUG and --config config.json")
    body: dict[str, Any] = {}
    if build_file is not None:
        body["build"] = _read_object(build_file, "a build")
    else:
        body["build"] = build
    if config is not None:
        body["model"] = {
            "name": model_name or config.stem,
            "config": _read_object(config, "config.json"),
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
    try:
        request = EstimateRequest.model_validate(body)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            typer.echo(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}", err=True)
        raise typer.Exit(code=2) from None
    answer = _engine_answer(
        lambda session, settings: run_estimate(
            session, request=request, costs=cost_assumptions(settings)
        )
    )
    if as_json:
        typer.echo(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        _print_estimate(answer)


@cli.command()
def recommend(
    model: Annotated[str, typer.Option(help="catalog model slug")],
    max_price: Annotated[float | None, typer.Option("--max-price", help="USD at most")] = None,
    min_tokens_per_s: Annotated[
        float | None, typer.Option("--min-tokens-per-s", help="decode tokens/s per sequence")
    ] = None,
    precision: Annotated[str | None, typer.Option(help="weight precision (default fp8)")] = None,
    context_tokens: Annotated[int | None, typer.Option("--context-tokens")] = None,
    batch: Annotated[int | None, typer.Option(help="concurrent sequences")] = None,
    runtime: Annotated[str | None, typer.Option(help="default: per build from the inputs")] = None,
    sort: Annotated[
        str | None, typer.Option(help="price_usd, usd_per_million_tokens, -decode_tokens_per_s")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the API's JSON answer")] = False,
) -> None:
    """The builds that run a model, ranked: the GET /api/v1/recommend answer."""
    from pydantic import ValidationError

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
    }
    try:
        query = RecommendQuery.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            typer.echo(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}", err=True)
        raise typer.Exit(code=2) from None
    answer = _engine_answer(
        lambda session, settings: recommend_builds(
            session, query=query, costs=cost_assumptions(settings)
        )
    )
    if as_json:
        typer.echo(json.dumps(answer, indent=2, ensure_ascii=False))
        return
    m = answer["model"]
    typer.echo(
        f"{m['name']}: {len(answer['items'])} of {answer['fitting']} fitting builds pass the "
        f"limits ({answer['considered']} considered), ranked by {answer['sort']}"
    )
    for item in answer["items"]:
        typer.echo(
            f"{item['rank']:>3}. {item['build']['name']}"
            f"  {_fmt(item['build']['price_usd'], 'USD', 0)}"
            f"  {_fmt(item['decode_tokens_per_s'], 'tokens/s')}  {item['runtime']}: {item['plan']}"
            f"{'  (Pareto front)' if item['pareto'] else ''}"
        )
        typer.echo(f"     {item['launch_command']}")
    typer.echo("All figures are estimates (docs/engine.md).")


def _catalog_is_empty(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return (conn.scalar(select(func.count()).select_from(Build)) or 0) == 0
    finally:
        engine.dispose()


def main() -> None:
    """Console-script entry point."""
    cli()
