"""HTTP throughput of the JSON API next to a bare FastAPI endpoint, measured in the same run.

Serves tierline (seeded SQLite catalog, one uvicorn worker) and a bare FastAPI app returning a
constant (one uvicorn worker) on 127.0.0.1, drives both with wrk (installed with apt-get when
missing; a Python asyncio+httpx generator otherwise), and prints requests/s, p50 and p99 for
GET /api/v1/builds, GET /api/v1/compare and POST /api/v1/estimate with their ratios to the bare
endpoint. Targets: list >= 50 % of bare, compare and estimate >= 30 %.

    python benchmarks/http_bench.py [--duration 10] [--connections 16] [--port 8101]
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from fastapi import FastAPI

ROOT = Path(__file__).resolve().parent.parent

bare_app = FastAPI()


@bare_app.get("/bare")
def bare() -> dict[str, bool]:
    """The baseline: a sync FastAPI route returning a constant."""
    return {"ok": True}


def tierline_app() -> FastAPI:
    """tierline as served (settings from the environment) plus the same constant route twice, so
    the cost of the app's middleware stack is measured apart from the endpoints' own cost: once
    as the first route the router tries (middleware only) and once as the last (middleware plus
    matching the path against every route of the app, as an unknown or late path does)."""
    from app.main import create_app

    app = create_app()

    @app.get("/bench/constant", include_in_schema=False)
    def constant() -> dict[str, bool]:
        return {"ok": True}

    @app.get("/bench/constant-first", include_in_schema=False)
    def constant_first() -> dict[str, bool]:
        return {"ok": True}

    app.router.routes.insert(0, app.router.routes.pop())
    return app


ESTIMATE_BODY = {
    "build": "2x-dgx-h200-cluster",
    "model": "deepseek-v3",
    "workload": {"precision": "fp8", "context_tokens": 8192, "batch": 8},
}
TARGETS = [
    # (name, method, path, body, target ratio of bare requests/s)
    ("bare FastAPI constant", "GET", "/bare", None, None),
    ("tierline app constant", "GET", "/bench/constant-first", None, None),
    ("  same, as the last route", "GET", "/bench/constant", None, None),
    ("GET /api/v1/builds", "GET", "/api/v1/builds", None, 0.50),
    (
        "GET /api/v1/compare",
        "GET",
        "/api/v1/compare?builds=4x-rtx-4090-workstation,2x-dgx-h200-cluster&model=deepseek-v3",
        None,
        0.30,
    ),
    ("POST /api/v1/estimate", "POST", "/api/v1/estimate", ESTIMATE_BODY, 0.30),
]


def seeded_database(directory: Path) -> str:
    """A migrated SQLite database holding the seed catalog."""
    sys.path.insert(0, str(ROOT))
    from app.config import PROJECT_ROOT
    from app.db import make_engine, make_sessionmaker
    from app.migrate import upgrade_to_head
    from app.services.catalog import import_document, load_seed_directory

    url = f"sqlite:///{directory / 'bench.db'}"
    upgrade_to_head(url)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        result = import_document(
            session, load_seed_directory(PROJECT_ROOT / "seed_data"), actor="bench"
        )
    engine.dispose()
    if not result.ok:
        raise SystemExit(f"seeding failed: {[e.as_dict() for e in result.errors][:3]}")
    return url


def serve(args: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    """Start uvicorn and wait until it answers."""
    cmd = [sys.executable, "-m", "uvicorn", *args, "--host", "127.0.0.1", "--port", str(port),
           "--workers", "1", "--log-level", "warning", "--no-access-log"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:  # e.g. the port is taken: never measure someone else's server
            raise SystemExit(f"server on port {port} exited: {' '.join(cmd)}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"server on port {port} did not start: {' '.join(cmd)}")


def ensure_wrk() -> str | None:
    """wrk's path, installing it with apt-get when missing (None when that is impossible)."""
    found = shutil.which("wrk")
    if found:
        return found
    if shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "wrk"],
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    return shutil.which("wrk")


def _seconds(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]


def run_wrk(
    wrk: str, url: str, method: str, body: dict | None, duration: int, connections: int,
    scratch: Path,
) -> tuple[float, float, float, int]:
    """(requests/s, p50 s, p99 s, non-2xx count) from one wrk run."""
    cmd = [wrk, "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url]
    if method == "POST":
        script = scratch / "post.lua"
        script.write_text(
            'wrk.method = "POST"\n'
            'wrk.headers["Content-Type"] = "application/json"\n'
            f"wrk.body = {json.dumps(json.dumps(body))}\n"
        )
        cmd[1:1] = ["-s", str(script)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _seconds(re.search(r"50%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    p99 = _seconds(re.search(r"99%\s+([\d.]+\w+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, p50, p99, int(bad.group(1)) if bad else 0


async def _python_load(
    url: str, method: str, body: dict | None, duration: int, connections: int
) -> tuple[float, float, float, int]:
    latencies: list[float] = []
    bad = 0
    deadline = time.perf_counter() + duration

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal bad
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            response = await client.request(method, url, json=body)
            latencies.append(time.perf_counter() - start)
            bad += response.status_code >= 400

    limits = httpx.Limits(max_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(connections)))
        elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=100)
    return len(latencies) / elapsed, cuts[49], cuts[98], bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per endpoint")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--port", type=int, default=8101, help="tierline; bare app on port+1")
    parser.add_argument("--python-load", action="store_true", help="skip wrk")
    args = parser.parse_args()
    if not 1 <= args.duration <= 300 or not 1 <= args.connections <= 1000:
        raise SystemExit("duration must be 1..300 s and connections 1..1000")

    wrk = None if args.python_load else ensure_wrk()
    with tempfile.TemporaryDirectory(prefix="tierline-bench-") as tmp:
        scratch = Path(tmp)
        url = seeded_database(scratch)
        env = {
            **os.environ,
            "TIERLINE_DATABASE_URL": url,
            "TIERLINE_SEED_ON_START": "false",
            "TIERLINE_LOG_LEVEL": "warning",
        }
        app_port, bare_port = args.port, args.port + 1
        servers = [
            serve(["--app-dir", str(ROOT / "benchmarks"), "http_bench:tierline_app", "--factory"],
                  env, app_port),
            serve(["--app-dir", str(ROOT / "benchmarks"), "http_bench:bare_app"], env, bare_port),
        ]
        try:
            results = []
            for name, method, path, body, target in TARGETS:
                port = bare_port if path == "/bare" else app_port
                full = f"http://127.0.0.1:{port}{path}"
                warm = httpx.request(method, full, json=body, timeout=30)
                warm.raise_for_status()
                if wrk:
                    figures = run_wrk(
                        wrk, full, method, body, args.duration, args.connections, scratch
                    )
                else:
                    figures = asyncio.run(
                        _python_load(full, method, body, args.duration, args.connections)
                    )
                results.append((name, target, *figures))
        finally:
            for proc in servers:
                proc.terminate()
                proc.wait(timeout=10)

    generator = "wrk" if wrk else "python asyncio+httpx"
    print(f"load generator: {generator}; {args.connections} connections, {args.duration} s each;"
          f" one uvicorn worker per server; cores: {os.cpu_count()}")
    print(f"{'endpoint':28} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8} "
          f"{'vs app':>7} {'target':>7}  verdict (vs bare)")
    bare_rps, app_rps = results[0][2], results[1][2]
    failed = False
    for name, target, rps, p50, p99, bad in results:
        ratio = rps / bare_rps
        verdict = "" if target is None else ("meets" if ratio >= target else "MISSES")
        failed |= verdict == "MISSES" or bad > 0
        note = f"  ({bad} error responses)" if bad else ""
        print(
            f"{name:28} {rps:9.0f} {p50 * 1e3:8.2f} {p99 * 1e3:8.2f} {ratio:8.0%} "
            f"{rps / app_rps:7.0%} {'' if target is None else f'{target:.0%}':>7}  {verdict}{note}"
        )
    print("vs bare = a separate FastAPI app with one constant route (the targets' baseline);"
          " vs app = the same constant route inside tierline, behind its middleware (first route)")
    print(f"load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15 min)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
