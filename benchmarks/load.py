"""Load test: 2 uvicorn workers on PostgreSQL, 64 connections for 30 s over a mix of catalog pages,
compare, estimate and API calls, with one admin writer editing builds at the same time.

Prints requests/s, p50/p99 latency and the error count, and checks that every accepted admin edit
is in the final export; then the tier-line home page alone at the same connections. The server
runs as shipped (`tierline serve --workers 2`, default logging). Targets on a 2-core machine: 0
errors, p99 < 250 ms for the mix and for the home page, no lost edits.

Load generator: wrk (C, event-driven; installed with apt-get when missing). A Python generator
would compete with the two workers for the same two cores and measure itself as much as the app.

The floor: after the mix, the same wrk settings against GET /healthz (one small query, a tiny JSON
body, the whole middleware stack) on the same server. It is what this machine, with wrk and
PostgreSQL on the same cores, gives for the cheapest request the app can answer; the mix cannot
do better. The load average is printed with the figures: other work on the machine moves them.

Before the mix every distinct request is sent a few times (warm-up), and each phase starts once
the server has drained the previous one's requests. Beside wrk's figures, the server's own view
(p50/p99 of the durations in its JSON log lines, admission queue included) tells the app's time
from the machine's: wrk, PostgreSQL and any other work share the same cores.

    python benchmarks/load.py [--duration 30] [--connections 64] [--port 8401]
    TIERLINE_LOAD_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:5432/postgres (default)
"""

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.db import make_engine, make_sessionmaker  # noqa: E402
from app.migrate import upgrade_to_head  # noqa: E402
from app.services.catalog import export_document, import_document, load_seed_directory  # noqa: E402

TARGET_P99_MS = 250.0


def free_port(preferred: int | None) -> int:
    """`preferred` when given, else a port the OS picks (never a fixed range shared with others)."""
    import socket

    if preferred:
        return preferred
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_wrk() -> str:
    path = shutil.which("wrk")
    if path:
        return path
    print("installing wrk with apt-get ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    path = shutil.which("wrk")
    if not path:
        raise SystemExit("wrk is not available")
    return path


def create_database(base_url: str) -> tuple[str, str]:
    """A fresh database migrated to head and seeded (dropped at the end)."""
    name = f"rel_load_{os.getpid()}"
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        conn.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    url = make_url(base_url).set(database=name).render_as_string(hide_password=False)
    upgrade_to_head(url)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        result = import_document(session, load_seed_directory(ROOT / "seed_data"), actor="load")
    engine.dispose()
    if not result.ok:
        raise SystemExit(f"seeding failed: {[e.as_dict() for e in result.errors][:3]}")
    return name, url


def drop_database(base_url: str, name: str) -> None:
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    admin.dispose()


def create_token(env: dict[str, str]) -> str | None:
    result = subprocess.run(
        [sys.executable, "-c", "from app.cli import main; main()", "admin", "create-token",
         "load-writer"], env=env, capture_output=True, text=True, cwd=ROOT,
    )
    if result.returncode != 0:
        print(f"no admin writer: `tierline admin create-token` failed: {result.stderr[-300:]}")
        return None
    return result.stdout.strip().splitlines()[-1]


def catalog(url: str) -> dict[str, list[dict[str, Any]]]:
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        document = export_document(session)
    engine.dispose()
    return document


def mix_requests(document: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str, str]]:
    """The request mix as (method, path, JSON body or ""), weights by repetition, shuffled."""
    builds = [b["slug"] for b in document["builds"]]
    models = [m["slug"] for m in document["models"]]
    rng = random.Random(7)
    requests: list[tuple[str, str, str]] = []

    def add(method: str, path: str, body: str = "", weight: int = 1) -> None:
        requests.extend([(method, path, body)] * weight)

    add("GET", "/", weight=2)
    add("GET", "/builds", weight=3)
    add("GET", "/models", weight=2)
    add("GET", "/api/v1/builds?per_page=50", weight=3)
    add("GET", "/api/v1/models", weight=2)
    add("GET", "/api/v1/tiers")
    for _ in range(12):
        build, model = rng.choice(builds), rng.choice(models)
        pair = ",".join(rng.sample(builds, 3))
        add("GET", f"/builds/{build}")
        add("GET", f"/models/{model}")
        add("GET", f"/api/v1/builds/{build}")
        add("GET", f"/compare?builds={pair}&model={model}")
        add("GET", f"/api/v1/compare?builds={pair}&model={model}")
        add("GET", f"/estimate?build={build}&model={model}")
        body = json.dumps({"build": build, "model": model,
                           "workload": {"precision": "fp8", "context_tokens": 8192}})
        add("POST", "/api/v1/estimate", body, weight=2)
        add("GET", f"/api/v1/recommend?model={model}&precision=int4")
    rng.shuffle(requests)
    return requests


def lua_script(requests: list[tuple[str, str, str]]) -> str:
    """A wrk script cycling through the request mix."""
    entries = ",\n".join(
        f'  {{"{m}", "{p}", {"[==[" + b + "]==]" if b else "nil"}}}'
        for m, p, b in requests
    )
    return f"""
local requests = {{
{entries}
}}
local i = 0
function setup(thread) thread:set("id", math.random(1, #requests)) end
function init(args) i = id end
function request()
  i = (i % #requests) + 1
  local r = requests[i]
  local headers = {{}}
  if r[3] ~= nil then headers["Content-Type"] = "application/json" end
  return wrk.format(r[1], r[2], headers, r[3])
end
"""


class Writer(threading.Thread):
    """One admin editing build notes through the admin API while the load runs."""

    def __init__(self, base: str, token: str, slugs: list[str], stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base, self.slugs, self.stop = base, slugs, stop
        self.headers = {"Authorization": f"Bearer {token}"}
        self.accepted: dict[str, str] = {}
        self.counts = {"accepted": 0, "refused": 0, "errors": 0}

    def run(self) -> None:
        n = 0
        with httpx.Client(base_url=self.base, headers=self.headers, timeout=10) as client:
            while not self.stop.is_set() and n < 10_000:
                n += 1
                slug = self.slugs[n % len(self.slugs)]
                try:
                    current = client.get(f"/api/v1/admin/builds/{slug}")
                    if current.status_code != 200:
                        self.counts["errors"] += 1
                        continue
                    record = current.json()
                    notes = f"load edit {n} at {time.time():.3f}"
                    record["notes"] = notes
                    response = client.put(f"/api/v1/admin/builds/{slug}", json=record,
                                          headers={"If-Match": current.headers.get("etag", "")})
                except httpx.HTTPError:
                    self.counts["errors"] += 1
                    continue
                if response.status_code in (200, 201):
                    self.accepted[slug] = notes
                    self.counts["accepted"] += 1
                elif response.status_code in (409, 412):
                    self.counts["refused"] += 1
                else:
                    self.counts["errors"] += 1
                time.sleep(0.05)


def parse_wrk(output: str) -> dict[str, float]:
    def latency_ms(label: str) -> float:
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        if not m:
            return float("nan")
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in", output)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                     output)
    return {
        "rps": float(rps.group(1)) if rps else float("nan"),
        "requests": float(total.group(1)) if total else 0,
        "p50_ms": latency_ms("50%"),
        "p99_ms": latency_ms("99%"),
        "non_2xx": float(non2xx.group(1)) if non2xx else 0,
        "socket_errors": float(sum(int(x) for x in sock.groups())) if sock else 0,
    }


def warm_up(base: str, mix: list[tuple[str, str, str]], *, rounds: int = 4) -> None:
    """Every distinct request of the mix `rounds` times, 8 at a time, so that both workers have
    their templates, pools and caches warm: the figures are the steady state with the writer's
    edits, not each worker's first visit to each page (a 15 s run would be mostly that)."""
    from concurrent.futures import ThreadPoolExecutor

    distinct = sorted(set(mix)) * rounds

    def fetch(request: tuple[str, str, str]) -> None:
        method, path, body = request
        headers = {"Content-Type": "application/json"} if body else {}
        with contextlib.suppress(httpx.HTTPError):
            httpx.request(method, base + path, content=body or None, headers=headers, timeout=60)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(fetch, distinct))


def wait_until_idle(base: str, *, timeout_s: float = 20.0) -> float:
    """Seconds until a cheap gated request answers in < 50 ms twice running: wrk stops with up to
    --connections requests still inside the server, and the next phase must not measure them."""
    start = time.perf_counter()
    quick = 0
    with httpx.Client(base_url=base, timeout=10) as client:
        while quick < 2 and time.perf_counter() - start < timeout_s:
            t0 = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                client.get("/api/v1/builds?per_page=1")
            quick = quick + 1 if time.perf_counter() - t0 < 0.05 else 0
            time.sleep(0.2)
    return time.perf_counter() - start


def server_side(log_path: str, offset: int, route: str | None = None) -> dict[str, float]:
    """p50/p99 of the durations the server logged (JSON lines from `offset`), optionally for one
    route template: the app's own time, admission queue included, without wrk's or the kernel's."""
    durations: list[float] = []
    with open(log_path, "rb") as fh:
        fh.seek(offset)
        for line in fh:
            if not line.startswith(b"{"):
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if "duration_ms" in record and (route is None or record.get("route") == route):
                durations.append(float(record["duration_ms"]))
    durations.sort()
    if not durations:
        return {"p50_ms": float("nan"), "p99_ms": float("nan"), "n": 0}
    n = len(durations)
    return {"p50_ms": durations[n // 2], "p99_ms": durations[min(n - 1, int(n * 0.99))], "n": n}


def worker_restarts(log_path: str) -> int:
    """Workers uvicorn's supervisor found dead (or unresponsive to its ping) and replaced."""
    with open(log_path, "rb") as fh:
        return sum(1 for line in fh if b"Child process" in line and b"died" in line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=30)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--no-writer", action="store_true",
                        help="read-only load (to compare against the run with the admin writer)")
    parser.add_argument("--home-duration", type=int, default=20,
                        help="seconds of GET / (the tier-line page) alone (0: skip)")
    parser.add_argument("--floor-duration", type=int, default=10,
                        help="seconds of GET /healthz at the same connections (0: skip)")
    args = parser.parse_args()
    base_url = os.environ.get("TIERLINE_LOAD_POSTGRES_URL",
                              "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    wrk = ensure_wrk()
    port = free_port(args.port)
    name, url = create_database(base_url)
    # As shipped: default settings (logging at info, one JSON line per request) but the database.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERLINE_")}
    env.update({"TIERLINE_DATABASE_URL": url, "TIERLINE_SEED_ON_START": "false"})
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = None
    try:
        token = None if args.no_writer else create_token(env)
        document = catalog(url)
        server_log = tempfile.NamedTemporaryFile("wb", suffix=".log", delete=False)  # noqa: SIM115 (lives as long as the server)
        server = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import main; main()", "serve", "--no-migrate",
             "--workers", "2", "--port", str(port)],
            env=env, cwd=ROOT, stdout=server_log, stderr=server_log,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(150):
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            raise SystemExit("server did not start")
        mix = mix_requests(document)
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
            fh.write(lua_script(mix))
            script = fh.name
        warm_up(base, mix)

        wait_until_idle(base)
        offsets = {"mix": os.path.getsize(server_log.name)}
        stop = threading.Event()
        writer = None
        if token:
            writer = Writer(base, token, [b["slug"] for b in document["builds"][:10]], stop)
            writer.start()
        else:
            print("admin writer skipped (no token)")
        result = subprocess.run(
            [wrk, "-t2", f"-c{args.connections}", f"-d{args.duration}s", "--latency",
             "--timeout", "5s", "-s", script, base],
            capture_output=True, text=True,
        )
        stop.set()
        if writer:
            writer.join(timeout=15)
        load_after = os.getloadavg()
        os.unlink(script)
        figures = parse_wrk(result.stdout)
        floor = None
        idle_s = wait_until_idle(base)
        offsets["floor"] = os.path.getsize(server_log.name)
        if args.floor_duration > 0:
            floor_run = subprocess.run(
                [wrk, "-t2", f"-c{args.connections}", f"-d{args.floor_duration}s", "--latency",
                 "--timeout", "5s", f"{base}/healthz"],
                capture_output=True, text=True,
            )
            floor = parse_wrk(floor_run.stdout)
        home = None
        wait_until_idle(base)
        offsets["home"] = os.path.getsize(server_log.name)
        if args.home_duration > 0:
            home_run = subprocess.run(
                [wrk, "-t2", f"-c{args.connections}", f"-d{args.home_duration}s", "--latency",
                 "--timeout", "5s", f"{base}/"],
                capture_output=True, text=True,
            )
            home = parse_wrk(home_run.stdout)
        server_log.flush()
        mix_server = server_side(server_log.name, offsets["mix"])
        floor_server = server_side(server_log.name, offsets["floor"], "/healthz")
        home_server = server_side(server_log.name, offsets["home"], "/")
        restarts = worker_restarts(server_log.name)
        errors = int(figures["non_2xx"] + figures["socket_errors"])

        lost: list[str] = []
        if writer:
            final = {b["slug"]: b.get("notes") for b in catalog(url)["builds"]}
            lost = [slug for slug, notes in writer.accepted.items() if final.get(slug) != notes]

        print(f"\nload: {args.connections} connections, {args.duration} s, 2 workers, PostgreSQL")
        print(f"  requests        {int(figures['requests'])}")
        print(f"  requests/s      {figures['rps']:.1f}")
        print(f"  latency p50     {figures['p50_ms']:.1f} ms")
        print(f"  latency p99     {figures['p99_ms']:.1f} ms   (target < {TARGET_P99_MS:.0f} ms)")
        print(f"  server side     p50 {mix_server['p50_ms']:.1f} ms, "
              f"p99 {mix_server['p99_ms']:.1f} ms (logged durations: the rest of wrk's "
              f"figure is spent outside the app)")
        print(f"  drained in      {idle_s:.1f} s after the mix stopped")
        print(f"  errors          {errors}   (non-2xx/3xx {int(figures['non_2xx'])}, "
              f"socket {int(figures['socket_errors'])}; target 0)")
        if writer:
            print(f"  admin edits     accepted {writer.counts['accepted']}, refused (409/412) "
                  f"{writer.counts['refused']}, failed {writer.counts['errors']}; "
                  f"lost {len(lost)} (target 0)")
        home_ok = True
        if home is not None:
            home_errors = int(home["non_2xx"] + home["socket_errors"])
            home_ok = home_errors == 0 and home["p99_ms"] < TARGET_P99_MS
            print(f"  home page       GET / alone at the same load: {home['rps']:.1f} req/s, "
                  f"p50 {home['p50_ms']:.1f} ms, p99 {home['p99_ms']:.1f} ms "
                  f"(target < {TARGET_P99_MS:.0f} ms), errors {home_errors}; server side "
                  f"p50 {home_server['p50_ms']:.1f} ms, p99 {home_server['p99_ms']:.1f} ms")
        if floor is not None:
            print(f"  floor           GET /healthz at the same load: {floor['rps']:.1f} req/s, "
                  f"p50 {floor['p50_ms']:.1f} ms, p99 {floor['p99_ms']:.1f} ms; server side "
                  f"p50 {floor_server['p50_ms']:.1f} ms, p99 {floor_server['p99_ms']:.1f} ms")
        print(f"  worker restarts {restarts}   (uvicorn replaced a dead or unresponsive worker; "
              f"target 0)")
        print(f"  load average    {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} "
              f"(1/5/15 min, {os.cpu_count()} cores; includes this run)")
        ok = (errors == 0 and figures["p99_ms"] < TARGET_P99_MS and not lost and home_ok
              and restarts == 0)
        if writer:
            ok = ok and writer.counts["errors"] == 0
        print(f"  verdict         {'meets the targets' if ok else 'MISSES a target'}")
        if result.returncode != 0:
            print(result.stderr[-1000:])
        return 0 if ok else 1
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        drop_database(base_url, name)
        if "server_log" in locals():
            server_log.close()
            os.unlink(server_log.name)


if __name__ == "__main__":
    raise SystemExit(main())
