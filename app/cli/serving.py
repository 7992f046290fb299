"""`tierline serving`: the serving curve, the operating point at an SLO, and sizing."""

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from app.cli.common import echo_field_errors, engine_answer, fail
from app.formatting import int_commas, number, usd

if TYPE_CHECKING:
    from app.schemas.serving import ServingOut


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
    # Imported when the command runs, so that `tierline serve` and `--help` start quickly.
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
    try:
        # The API's own validation, so the command refuses what the endpoint refuses.
        request = ServingRequest.model_validate(raw)
    except ValidationError as exc:
        echo_field_errors(exc)
        fail("invalid input; nothing was computed")
    answer = engine_answer(
        lambda session, settings: run_serving(
            session, request=request, costs=cost_assumptions(settings)
        ),
        error_code=1,
    )
    if as_json:
        sys.stdout.write(
            json.dumps(answer.model_dump(mode="json"), ensure_ascii=False, allow_nan=False) + "\n"
        )
        return
    typer.echo(serving_table(answer))


def serving_table(answer: "ServingOut") -> str:
    """The serving answer as a readable table, the operating point and findings below it."""
    lines = [
        f"{answer.model.name} on {answer.build.name} — {answer.plan.description}"
        f" (all figures are estimates)"
    ]
    if not answer.fits:
        lines.append("Does not fit: no serving curve.")
    else:
        header = ("users", "tok/s/user", "tok/s total", "tok/s/accel", "TTFT s", "ITL ms",
                  "$/M in", "$/M out")
        lines.append("  ".join(f"{h:>11}" for h in header))
        for p in answer.curve:
            cells = (
                int_commas(p.concurrency),
                number(p.tokens_per_s_per_user),
                int_commas(p.tokens_per_s_total),
                int_commas(p.tokens_per_s_per_accelerator),
                number(p.ttft_s),
                number(p.itl_ms),
                usd(p.usd_per_million_input_tokens),
                usd(p.usd_per_million_output_tokens),
            )
            lines.append("  ".join(f"{c:>11}" for c in cells))
    at = answer.at_slo
    if at is not None:
        lines.append(f"At the SLO: {at.summary}")
    for finding in answer.findings:
        lines.append(f"[{finding.severity}] {finding.message}")
    return "\n".join(lines)
