"""What accuracy is reported by, and the records it passes around: groups, cases, results."""

import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from app.engine import BuildSpec, ModelSpec, Workload
from app.engine.runtime import DEVICE_CLASSES as ENGINE_DEVICE_CLASSES

# Runs on mixed cards, and runs with weights in host RAM, form their own groups (issue 14); a
# mixed rig that also offloads counts as offload (its host RAM sets the pace).
MIXED_CLASS = "mixed cards"
OFFLOAD_CLASS = "CPU offload"
DEVICE_CLASSES = (*ENGINE_DEVICE_CLASSES, MIXED_CLASS, OFFLOAD_CLASS)
SPEED_METRICS = (
    "decode_tokens_per_s",
    "prefill_tokens_per_s",
    "ttft_s",
    "itl_ms",
    "e2e_latency_s",
    "output_tokens_per_s_total",
)
FIT_METRIC = "out_of_memory"
# Figures of a serving benchmark: one published without batch or concurrency is a run with an
# unbounded request rate (vllm bench serve --request-rate inf), i.e. at the largest batch.
SERVING_METRICS = ("ttft_s", "itl_ms", "e2e_latency_s", "output_tokens_per_s_total")
METRIC_LABELS = {
    "decode_tokens_per_s": "decode tokens/s",
    "prefill_tokens_per_s": "prefill tokens/s",
    "ttft_s": "time to first token",
    "itl_ms": "inter-token latency",
    "e2e_latency_s": "end-to-end latency",
    "output_tokens_per_s_total": "serving output tokens/s",
    "out_of_memory": "fits or not",
}
POOLED = "all"  # runtime and device class of the by-metric table

Predicted = float | bool | None

# A leading path segment naming a language (amd.com/en/…, /fr/, /ja/, /zh-cn/, /en-us/): the
# same page translated, one document. GitHub paths start with an owner instead (not a locale).
_LOCALE = re.compile(r"[a-z]{2}(?:-[a-z]{2,4})?")
_GITHUB_AT_REF = re.compile(r"/([^/]+)/([^/]+)/(?:blob|tree|raw)/[^/]+/(.+)")
# The same document under two addresses (the old and the current path of one post): mapped to
# one of them, so that a row imported under either address folds with the other. The rows once
# transcribed from the old address (d19-d25, f05) were the post's own table a second time and
# were removed as duplicates; the vllm-oci-* and fit-vllm-mi300xx8-* rows keep it.
SAME_DOCUMENT = {
    "blogs.oracle.com/cloud-infrastructure/serving-llama-31-405b-model-with-amd-mi300x-gpus":
    "blogs.oracle.com/cloud-infrastructure/post/serving-llama-31-405b-model-with-amd-mi300x-gpus",
}


@lru_cache(maxsize=4096)
def canonical_source(url: str) -> str:
    """One source = one document: the identity leave-one-source-out folds by. A page in any
    locale, a GitHub file at any commit (blob / tree / raw.githubusercontent.com), with or
    without `www.`, a trailing slash, a fragment or http vs https, is the same source. The
    query string stays (it can name a different document)."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    if host == "raw.githubusercontent.com":
        segments = path.split("/")  # "", owner, repo, ref, file path…
        if len(segments) > 4:
            host, path = "github.com", "/".join([*segments[:3], *segments[4:]])
    elif host == "github.com":
        found = _GITHUB_AT_REF.fullmatch(path)
        if found:
            path = f"/{found[1]}/{found[2]}/{found[3]}"
    else:
        segments = path.split("/")
        if len(segments) > 2 and _LOCALE.fullmatch(segments[1].lower()):
            path = "/".join(["", *segments[2:]])
    key = f"{host}{path}" + (f"?{parts.query}" if parts.query else "")
    return SAME_DOCUMENT.get(key, key)


@dataclass(frozen=True)
class Group:
    """What accuracy is reported by."""

    metric: str
    runtime: str
    device_class: str

    @property
    def label(self) -> str:
        """ "decode tokens/s, llama.cpp, Apple unified"."""
        if self.runtime == POOLED:
            return f"{METRIC_LABELS[self.metric]}, all runtimes and devices"
        return f"{METRIC_LABELS[self.metric]}, {self.runtime}, {self.device_class}"


@dataclass(frozen=True)
class Case:
    """One measurement with the engine inputs for the same run."""

    slug: str
    source_url: str
    source_title: str | None
    group: Group
    measured: float | bool
    build: BuildSpec
    model: ModelSpec
    workload: Workload
    output_tokens: int
    label: str
    # How a serving benchmark sent its requests (burst / steady / poisson) and how many in all.
    arrival: str | None = None
    requests: int | None = None
    concurrency: int | None = None  # the benchmark's cap on requests in flight, as published
    # The run states data-parallel attention (SGLang --enable-dp-attention; the note's
    # `dp_attention=on`): predicted with the engine's expert-parallel plan (predictors).
    data_parallel_attention: bool = False

    @property
    def source(self) -> str:
        """The document the row comes from (`canonical_source`): what cross-validation holds
        out together. `source_url` stays the row's own address."""
        return canonical_source(self.source_url)


@dataclass(frozen=True)
class Skipped:
    """A measurement no prediction is made for, and why."""

    slug: str
    reason: str


@dataclass(frozen=True)
class Cases:
    """Every catalog measurement, resolved or skipped."""

    cases: tuple[Case, ...]
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True)
class RowResult:
    """A predictor's figure for one case and its error (None for fit facts)."""

    case: Case
    predicted: Predicted
    error: float | None
    agrees: bool | None = None
    note: str = ""
