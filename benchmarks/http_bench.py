"""HTTP throughput of `tierline serve` as shipped, next to a bare FastAPI endpoint, in one run.

Starts `tierline serve` exactly as a user does (its default logging, one worker, a fresh SQLite
catalog that serve migrates and seeds), and a bare FastAPI app returning a constant under the same
uvicorn options (`app.cli.uvicorn_options`), both on 127.0.0.1. Drives both with wrk (installed
with apt-get when missing) and prints requests/s, p50 and p99 and the ratio to the bare endpoint:

- GET /api/v1/builds                    target >= 50 % of bare
- GET /api/v1/compare (2 builds, model) target >= 30 %
- POST /api/v1/estimate                 target >= 30 %
- POST /api/v1/estimate/batch           100 inline builds + pasted configs a request;
                                        target >= 10,000 estimates/s

It also checks that each request writes exactly one log line. Exit status 1 when a target is
missed or a response was an error.

    python benchmarks/http_bench.py [--duration 10] [--connections 32] [--rounds 3] [--only batch]
                                    [--workers 2]

`--workers N` runs both servers with N worker processes (`tierline serve --workers N`, as
docs/deploy.md deploys one per core); the issue's ratio targets are read at one worker.
"""

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.cli import uvicorn_options  # noqa: E402
from app.config import Settings  # noqa: E402

bare_app = FastAPI()


@bare_app.get("/bare")
def bare() -> dict[str, bool]:
    """The baseline: a sync FastAPI route returning a constant."""
    return {"ok": True}


LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def batch_body(size: int) -> list[dict[str, Any]]:
    """`size` distinct inline builds with a pasted config each (no two items share a cache key)."""
    items = []
    for i in range(size):
        items.append(
            {
                "build": {
                    "name": f"bench rig {i}",
                    "nodes": 1,
                    "accelerator": {
                        "name": f"bench card {i}",
                        "memory_gb": 24 + i % 8 * 8,
                        "memory_bandwidth_gbs": 900 + i,
                        "fp16_tflops": 160,
                        "tdp_w": 350,
                    },
                    "accelerators_per_node": 1 + i % 4,
                    "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 32},
                },
                "model": {"name": "bench-8b", "config": LLAMA_8B_CONFIG},
                "workload": {"precision": "q4_k_m", "context_tokens": 4096 + i, "batch": 1},
            }
        )
    return items


BATCH_SIZE = 100
ESTIMATE_BODY = {
    "build": "2x-dgx-h200-cluster",
    "model": "deepseek-v3",
    "workload": {"precision": "fp8", "context_tokens": 8192, "batch": 8},
}
TARGETS: list[tuple[str, str, str, Any, float | None]] = [
    # (name, method, path, body, target ratio of bare requests/s)
    ("bare FastAPI constant", "GET", "/bare", None, None),
    ("GET /healthz", "GET", "/healthz", None, None),
    ("GET /api/v1/builds", "GET", "/api/v1/builds", None, 0.50),
    (
        "GET /api/v1/compare",
        "GET",
        "/api/v1/compare?builds=4x-rtx-4090-workstation,2x-dgx-h200-cluster&model=deepseek-v3",
        None,
        0.30,
    ),
    ("POST /api/v1/estimate", "POST", "/api/v1/estimate", ESTIMATE_BODY, 0.30),
    ("POST /api/v1/estimate/batch", "POST", "/api/v1/estimate/batch", batch_body(BATCH_SIZE), None),
]
BATCH_TARGET_ESTIMATES_PER_S = 10_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(proc: subprocess.Popen[bytes], url: str, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited before answering")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"{what} did not start")


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if not found and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "wrk"],
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is needed (apt-get install wrk)")
    return found


def _seconds(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]


def run_wrk(
    wrk: str, url: str, method: str, body: Any, duration: int, connections: int, scratch: Path
) -> tuple[float, float, float, int]:
    """(requests/s, p50 s, p99 s, non-2xx count) from one wrk run."""
    cmd = [wrk, "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url]
    if method == "POST":
        payload = scratch / "body.json"
        payload.write_text(json.dumps(body))
        script = scratch / "post.lua"
        script.write_text(
            'wrk.method = "POST"\n'
            'wrk.headers["Content-Type"] = "application/json"\n'
            f'local f = io.open("{payload}", "r"); wrk.body = f:read("*a"); f:close()\n'
        )
        cmd[1:1] = ["-s", str(script)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _seconds(re.search(r"50%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    p99 = _seconds(re.search(r"99%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, p50, p99, int(bad.group(1)) if bad else 0


def median_figures(
    runs: list[tuple[float, float, float, int]],
) -> tuple[float, float, float, int]:
    """Median requests/s, p50 and p99 over the rounds of one endpoint, and all its errors."""
    return (
        statistics.median(r[0] for r in runs),
        statistics.median(r[1] for r in runs),
        statistics.median(r[2] for r in runs),
        sum(r[3] for r in runs),
    )


def log_lines_per_request(base: str, log: Path, requests: int = 50) -> float:
    """Lines `tierline serve` writes per request, counted over `requests` sequential GETs."""
    before = len(log.read_bytes().splitlines())
    with httpx.Client(timeout=10) as client:
        for _ in range(requests):
            client.get(f"{base}/api/v1/tiers").raise_for_status()
    time.sleep(0.5)  # let the worker flush its log
    return (len(log.read_bytes().splitlines()) - before) / requests


def serve_bare(port: int, workers: int) -> None:
    """Run the baseline app under the very uvicorn options `tierline serve` uses."""
    options = uvicorn_options(Settings(), port=port, workers=workers)
    if workers > 1:  # uvicorn starts several workers only from an import string
        uvicorn.run("benchmarks.http_bench:bare_app", **options)
    else:
        uvicorn.run(bare_app, **options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per endpoint")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3,
                        help="runs of every endpoint, interleaved; the median is reported")
    parser.add_argument("--only", action="append", default=[],
                        help="run only the endpoints whose name contains this (repeatable); "
                        "the bare baseline always runs")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes of both servers (default 1)")
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare, args.workers)
        return
    if not 1 <= args.duration <= 300 or not 1 <= args.connections <= 1000:
        raise SystemExit("duration must be 1..300 s and connections 1..1000")
    if not 1 <= args.workers <= 64:
        raise SystemExit("workers must be 1..64")
    if not 1 <= args.rounds <= 20:
        raise SystemExit("rounds must be 1..20")
    targets = [
        t for t in TARGETS if t[2] == "/bare" or not args.only or any(o in t[0] for o in args.only)
    ]
    wrk = ensure_wrk()
    tierline = shutil.which("tierline")
    if tierline is None:
        raise SystemExit("`tierline` is not on PATH: pip install -e . first")

    with tempfile.TemporaryDirectory(prefix="tierline-bench-") as tmp:
        scratch = Path(tmp)
        app_port, bare_port = free_port(), free_port()
        env = {
            key: value for key, value in os.environ.items() if not key.startswith("TIERLINE_")
        }
        env["TIERLINE_DATABASE_URL"] = f"sqlite:///{scratch / 'tierline.db'}"
        log = scratch / "serve.log"
        serve_cmd = [tierline, "serve", "--port", str(app_port), "--workers", str(args.workers)]
        with log.open("wb") as log_file:
            servers = [
                subprocess.Popen(serve_cmd, cwd=scratch, env=env, stdout=log_file, stderr=log_file),
                subprocess.Popen(
                    [sys.executable, __file__, "--serve-bare", str(bare_port),
                     "--workers", str(args.workers)],
                    cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                ),
            ]
            try:
                base = f"http://127.0.0.1:{app_port}"
                wait_until_up(servers[0], f"{base}/healthz", "tierline serve")
                wait_until_up(servers[1], f"http://127.0.0.1:{bare_port}/bare", "bare app")
                lines = log_lines_per_request(base, log)
                # Rounds interleave the bare app with the others and the median is kept, so
                # load that other work puts on the machine in the meantime moves the baseline
                # and the endpoints alike instead of skewing their ratio.
                runs: list[list[tuple[float, float, float, int]]] = [[] for _ in targets]
                for _ in range(args.rounds):
                    for index, (_name, method, path, body, _target) in enumerate(targets):
                        port = bare_port if path == "/bare" else app_port
                        url = f"http://127.0.0.1:{port}{path}"
                        httpx.request(method, url, json=body, timeout=60).raise_for_status()
                        runs[index].append(
                            run_wrk(wrk, url, method, body, args.duration, args.connections,
                                    scratch)
                        )
                results = [
                    (name, target, *median_figures(runs[index]))
                    for index, (name, _method, _path, _body, target) in enumerate(targets)
                ]
            finally:
                for proc in servers:
                    proc.terminate()
                    proc.wait(timeout=30)

    print(f"command: tierline serve --port N --workers {args.workers} (default logging, SQLite)"
          f" vs bare FastAPI under app.cli.uvicorn_options, {args.workers} worker(s)")
    print(f"wrk -t2 -c{args.connections} -d{args.duration}s, median of {args.rounds} interleaved"
          f" rounds; cores: {os.cpu_count()};"
          f" log lines per request: {lines:.2f}")
    print(f"{'endpoint':30} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8} "
          f"{'target':>8}  verdict")
    bare_rps = results[0][2]
    failed = abs(lines - 1.0) > 0.05
    for name, target, rps, p50, p99, bad in results:
        ratio = rps / bare_rps
        if name.endswith("/batch"):
            estimates = rps * BATCH_SIZE
            verdict = "meets" if estimates >= BATCH_TARGET_ESTIMATES_PER_S else "MISSES"
            shown = f"{estimates:,.0f} estimates/s (target {BATCH_TARGET_ESTIMATES_PER_S:,})"
        else:
            verdict = "" if target is None else ("meets" if ratio >= target else "MISSES")
            shown = "" if target is None else f"{target:.0%}"
        failed |= verdict == "MISSES" or bad > 0
        note = f"  ({bad} error responses)" if bad else ""
        print(f"{name:30} {rps:9.0f} {p50 * 1e3:8.2f} {p99 * 1e3:8.2f} {ratio:8.0%} "
              f"{shown:>8}  {verdict}{note}")
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15 min)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
