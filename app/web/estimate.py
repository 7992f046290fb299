"""The calculator: a GET form, so every result has a shareable URL.

The form's fields map onto the POST /api/v1/estimate request (FORM_FIELDS); the page validates
it with the same schema and runs the same service, and /estimate.json answers the same query
with the API's JSON.
"""

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.engine import INFERENCE_RUNTIMES, KV_BITS, PRECISIONS
from app.errors import DomainError, FieldError, InvalidInput
from app.models import INTER_NODE_LINK_KINDS, INTRA_NODE_LINK_KINDS, MEMORY_KINDS
from app.schemas.estimate import InlineModel
from app.services.cache import snapshot
from app.services.charts import SVG_HEADERS, cached_chart, memory_breakdown_svg
from app.services.estimates import (
    cost_assumptions,
    inline_model_spec,
    parse_estimate_request,
    run_estimate,
)
from app.services.hf_hub import fetch_config
from app.services.pages import filter_options
from app.services.recommend import lower_precisions
from app.web.builds import precision_options
from app.web.common import Notice, raw_query, render, with_query
from app.web.templating import link_name

router = APIRouter(include_in_schema=False)

# Form field -> path in the estimate request. Custom-build fields are used when
# build_source=custom, the pasted config when model_source=config.
CUSTOM_BUILD_FIELDS = {
    "b_name": "build.name",
    "b_nodes": "build.nodes",
    "b_per_node": "build.accelerators_per_node",
    "b_intra_kind": "build.intra_node_link.kind",
    "b_intra_gbs": "build.intra_node_link.bandwidth_gbs",
    "b_inter_kind": "build.inter_node_link.kind",
    "b_inter_gbps": "build.inter_node_link.bandwidth_gbps",
    "b_power_w": "build.power_w",
    "b_price_usd": "build.price_usd",
}
CUSTOM_ACCELERATOR_FIELDS = {
    "a_name": "build.accelerator.name",
    "a_memory_gb": "build.accelerator.memory_gb",
    "a_bandwidth_gbs": "build.accelerator.memory_bandwidth_gbs",
    "a_fp16_tflops": "build.accelerator.fp16_tflops",
    "a_fp8_tflops": "build.accelerator.fp8_tflops",
    "a_tdp_w": "build.accelerator.tdp_w",
    "a_memory_kind": "build.accelerator.memory_kind",
}
WORKLOAD_FIELDS = (
    "mode",
    "precision",
    "kv_cache_precision",
    "context_tokens",
    "prompt_tokens",
    "batch",
    "parallelism",
    "runtime",
    "training_tokens",
    "zero_stage",
    "activation_recomputation",
    "lora_rank",
    "memory_utilization",
    "tensor_parallel",
    "pipeline_parallel",
)
COST_FIELDS = ("amortization_years", "electricity_usd_per_kwh", "pue", "utilization")
FORM_FIELDS: dict[str, str] = {
    "build": "build",
    "model": "model",
    "config": "model.config",
    "model_name": "model.name",
    **CUSTOM_BUILD_FIELDS,
    **CUSTOM_ACCELERATOR_FIELDS,
    **{f: f"workload.{f}" for f in WORKLOAD_FIELDS},
    **{f: f"costs.{f}" for f in COST_FIELDS},
}
FIELD_FOR_PATH = {path: name for name, path in FORM_FIELDS.items()}
MODES = (
    ("inference", "Inference"),
    ("training", "Full training / fine-tuning"),
    ("lora", "LoRA fine-tuning"),
    ("qlora", "QLoRA fine-tuning (4-bit base)"),
)
PARALLELISM = (
    ("auto", "Automatic"),
    ("tensor", "Tensor parallel"),
    ("pipeline", "Pipeline parallel"),
)
# Runtimes a page offers (the training loop, pytorch, is not an inference choice).
RUNTIME_OPTIONS = tuple((r, r) for r in INFERENCE_RUNTIMES)
MAX_CONFIG_CHARS = 100_000
EXAMPLE_QUERY = "/estimate.json?build=2x-dgx-h200-cluster&model=deepseek-v3&precision=fp8"


def _set(target: dict[str, Any], path: str, value: Any) -> None:
    node = target
    *parents, leaf = path.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value


def request_from_form(raw: dict[str, str]) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """The estimate request a calculator query describes (None when it names no build or
    model yet), plus the form-level problems found before schema validation."""
    errors: list[FieldError] = []
    body: dict[str, Any] = {}
    build_source = raw.get("build_source", "catalog")
    model_source = raw.get("model_source", "catalog")
    if build_source == "custom":
        for name, path in CUSTOM_BUILD_FIELDS.items():
            if name in raw:
                _set(body, path, raw[name])
        accelerator = raw.get("b_accelerator", "custom")
        if accelerator == "custom":
            for name, path in CUSTOM_ACCELERATOR_FIELDS.items():
                if name in raw:
                    _set(body, path, raw[name])
            body.setdefault("build", {}).setdefault("accelerator", {})
            body["build"]["accelerator"].setdefault("name", "Custom accelerator")
        else:
            _set(body, "build.accelerator", accelerator)
        body["build"].setdefault("name", "Custom build")
    elif "build" in raw:
        body["build"] = raw["build"]
    if model_source == "config":
        text = raw.get("config", "")
        if text:
            if len(text) > MAX_CONFIG_CHARS:
                errors.append(FieldError("config", f"longer than {MAX_CONFIG_CHARS:,} characters"))
            else:
                try:
                    config = json.loads(text)
                except json.JSONDecodeError as exc:
                    errors.append(FieldError("config", f"not valid JSON ({exc.msg}, line "
                                                       f"{exc.lineno})"))
                except ValueError:  # e.g. numbers too long to convert
                    errors.append(FieldError("config", "not valid JSON"))
                except RecursionError:
                    errors.append(FieldError("config", "nested too deeply"))
                else:
                    if isinstance(config, dict):
                        body["model"] = {"name": raw.get("model_name") or "Pasted model",
                                         "config": config}
                    else:
                        errors.append(FieldError("config", "must be a JSON object"))
    elif "model" in raw:
        body["model"] = raw["model"]
    workload: dict[str, Any] = {f: raw[f] for f in WORKLOAD_FIELDS if f in raw}
    if "activation_recomputation" in workload:
        # "default" (or absent) leaves the mode's standard recipe; on/off choose explicitly.
        choice = workload.pop("activation_recomputation")
        if choice in ("true", "on", "1"):
            workload["activation_recomputation"] = True
        elif choice in ("false", "off", "0"):
            workload["activation_recomputation"] = False
    body["workload"] = workload
    costs = {f: raw[f] for f in COST_FIELDS if f in raw}
    if costs:
        body["costs"] = costs
    if "build" not in body and "model" not in body:
        return None, errors
    if "build" not in body:
        errors.append(FieldError("build", "choose a catalog build or describe one"))
    if "model" not in body and not any(e.field == "config" for e in errors):
        errors.append(FieldError("model", "choose a catalog model or paste a config.json"))
    return body, errors


def _form_field(path: str) -> str:
    """The form field that a request path came from (its nearest known ancestor)."""
    parts = path.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in FIELD_FOR_PATH:
            return FIELD_FOR_PATH[candidate]
        parts.pop()
    return path


def _form_notices(errors: list[FieldError]) -> list[Notice]:
    out = []
    for e in errors:
        field = _form_field(e.field)
        out.append(Notice(f"{e.field}: {e.message}", field=field))
    return out


# ---- hf_id: a model by its Hugging Face id (issue 15, item 11) -------------------------------
# Kept apart from the form parsing above: the id is turned into the pasted-config fields, so
# everything after it treats a fetched config exactly like a pasted one.


def with_hub_config(raw: dict[str, str], settings: Settings) -> dict[str, str]:
    """The query with `hf_id`'s config.json from the Hub in place of a pasted config, when the
    model comes from a config (or nothing else names one); raises a DomainError on `hf_id`."""
    hf_id = raw.get("hf_id", "").strip()
    source = raw.get("model_source")
    if not hf_id or not (source == "config" or (source is None and "model" not in raw)):
        return raw
    if raw.get("config", "").strip():
        message = "give either a Hugging Face id or a pasted config.json, not both"
        raise InvalidInput(f"hf_id: {message}", errors=[FieldError("hf_id", message)])
    fetched = fetch_config(hf_id, settings=settings, field="hf_id")
    return {
        **raw,
        "model_source": "config",
        "config": json.dumps(fetched.config),
        "model_name": raw.get("model_name") or fetched.hf_id,
    }


def evaluate(
    session: Any, settings: Settings, raw: dict[str, str]
) -> tuple[dict[str, Any] | None, list[Notice], int]:
    """(answer or None, notices, status) for a calculator query."""
    try:
        raw = with_hub_config(raw, settings)
    except DomainError as error:
        return None, _form_notices(error.errors), error.status_code
    body, errors = request_from_form(raw)
    if body is None and not errors:
        return None, [], 200
    if errors:
        return None, _form_notices(errors), 422
    try:
        request = parse_estimate_request(body)
        answer = run_estimate(session, request=request, costs=cost_assumptions(settings))
    except DomainError as error:
        problems = error.errors or [FieldError("(request)", error.detail)]
        return None, _form_notices(problems), error.status_code
    return answer, [], 200


# ---- the "No" verdict's ways out and the parsed-config panel -------------------------------


def no_verdict_help(
    session: Any, settings: Settings, raw: dict[str, str], answer: dict[str, Any] | None
) -> dict[str, Any] | None:
    """For an inference "No": links to the catalog builds that run the model at this precision,
    the longest context that fits here, and the highest lower precision that fits here (each
    lower precision is one more engine run, stopped at the first that fits)."""
    if answer is None or answer["fits"] or answer["workload"]["mode"] != "inference":
        return None
    precision = answer["workload"]["precision"]
    slug = answer["model"]["slug"]
    builds_url = (
        with_query("/builds", {"fits_model": slug, "precision": precision,
                               "context_tokens": answer["workload"]["context_tokens"]})
        if slug
        else None
    )
    longest = answer["max_context_tokens_that_fit"]
    context_url = (
        with_query("/estimate", {**raw, "context_tokens": longest}) if longest else None
    )
    fitting_precision = None
    for lower in lower_precisions(precision):
        candidate = {**raw, "precision": lower}
        there, _notices, _status = evaluate(session, settings, candidate)
        if there is not None and there["fits"]:
            fitting_precision = {"precision": lower, "url": with_query("/estimate", candidate)}
            break
    return {
        "builds_url": builds_url,
        "longest_context": longest,
        "context_url": context_url,
        "fitting_precision": fitting_precision,
    }


def parsed_config(settings: Settings, raw: dict[str, str]) -> dict[str, Any] | None:
    """What the engine read from a pasted (or fetched) config.json, so users can check the
    parse; None unless the model came from a config that parses."""
    try:
        body, errors = request_from_form(with_hub_config(raw, settings))
        if body is None or errors:
            return None
        request = parse_estimate_request(body)
        if not isinstance(request.model, InlineModel):
            return None
        spec = inline_model_spec(request.model)
    except DomainError:
        return None  # the page already shows the error beside the form
    kv_precision = request.workload.kv_cache_precision or PRECISIONS[
        request.workload.precision
    ].kv_default
    return {
        "params_total": spec.params_total_published or spec.params_total,
        "params_active": spec.params_active_published or spec.params_active,
        "params_computed": spec.params_total,
        "routed_experts": spec.n_routed_experts,
        "experts_per_token": spec.num_experts_per_tok,
        "shared_experts": spec.n_shared_experts,
        "attention_kind": spec.attention_kind,
        "layers": spec.num_hidden_layers,
        "kv_precision": kv_precision,
        "kv_bytes_per_token": spec.kv_cache_bytes_per_token(kv_precision),
        "sliding_window": spec.sliding_window,
    }


@router.get("/estimate", response_class=HTMLResponse)
def estimate_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """The calculator: verdict, memory breakdown chart, plan, speed, cost, findings."""
    raw = raw_query(request)
    answer, notices, status = evaluate(session, settings, raw)
    options = filter_options(session)
    query = request.url.query
    return render(
        request,
        session,
        "estimate/page.html",
        {
            "raw": raw,
            "answer": answer,
            "notices": notices,
            "options": options,
            "precisions": precision_options(),
            "kv_precisions": [(k, k.upper()) for k in KV_BITS],
            "runtimes": RUNTIME_OPTIONS,
            "modes": MODES,
            "parallelism": PARALLELISM,
            "intra_kinds": [(k, link_name(k)) for k in INTRA_NODE_LINK_KINDS],
            "inter_kinds": [(k, link_name(k)) for k in INTER_NODE_LINK_KINDS],
            "memory_kinds": [(k, k) for k in MEMORY_KINDS],
            "build_source": raw.get("build_source", "catalog"),
            "model_source": raw.get("model_source", "catalog"),
            "chart_url": f"/estimate/memory.svg?{query}" if answer else None,
            "share_url": f"/estimate?{query}" if query else "/estimate",
            "defaults": cost_assumptions(settings),
            "no_help": no_verdict_help(session, settings, raw, answer),
            "parsed": parsed_config(settings, raw) if answer else None,
        },
        json_url=f"/estimate.json?{query}" if query else "/estimate.json",
        status_code=status,
    )


@router.get("/estimate.json")
def estimate_json(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The calculator's JSON twin: the POST /api/v1/estimate answer for the same query."""
    raw = raw_query(request)
    if not raw:
        # The empty calculator's twin describes the query it takes.
        return JSONResponse(
            {
                "description": "GET /estimate.json?<query> answers like POST /api/v1/estimate; "
                "each query field maps to a request field",
                "fields": {
                    **FORM_FIELDS,
                    "build_source": "catalog | custom",
                    "model_source": "catalog | config",
                    "b_accelerator": "build.accelerator (a slug, or custom)",
                },
                "example": EXAMPLE_QUERY,
            }
        )
    answer, notices, status = evaluate(session, settings, raw)
    if answer is None:
        errors = [FieldError(FORM_FIELDS.get(n.field or "", n.field or "(query)"),
                             n.message.split(": ", 1)[-1]) for n in notices]
        if not errors:
            errors = [FieldError("build", "choose one"), FieldError("model", "choose one")]
        error = InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors), errors=errors)
        if status != 422:
            error.status_code = status
        return JSONResponse(error.problem(instance=request.url.path), status_code=error.status_code,
                            media_type="application/problem+json")
    return JSONResponse(answer)


@router.get("/estimate/memory.svg")
def estimate_memory_chart(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The memory breakdown of the calculator's query as an SVG chart."""
    raw = raw_query(request)
    answer, notices, status = evaluate(session, settings, raw)
    if answer is None:
        # Name what was refused, as the page and its JSON twin do.
        reasons = "; ".join(n.message for n in notices)
        return Response(f"no estimate for this query{': ' + reasons if reasons else ''}",
                        status_code=status if status >= 400 else 422, media_type="text/plain")
    snap = snapshot(session)
    key = ("memory", with_query("", sorted(raw.items())))
    svg = cached_chart(
        snap,
        key,
        lambda: memory_breakdown_svg(answer["memory"],
                                     accelerators_used=answer["plan"]["accelerators_used"]),
    )
    return Response(svg, media_type="image/svg+xml",
                    headers=SVG_HEADERS)
