"""Where POST /api/v1/estimate/batch spends its CPU, per item, without HTTP.

Times the stages of the endpoint for the 100-item body of benchmarks/http_bench.py (inline
builds + a pasted config each): JSON parsing and schema validation of the body (as FastAPI
does), the service (`run_batch`: engine runs, failover, the typed BatchOut answer) and JSON
encoding through the declared model. Process CPU time, best of 15 runs of the whole body, with
the garbage collector tuned as a `tierline serve` worker tunes it
(`app.middleware.tune_gc_for_serving`); pin to one core with `taskset -c 1`. A fresh SQLite
catalog is migrated and seeded in a temporary directory (the batch reads the catalog snapshot).

Run from the repository root:  python benchmarks/batch_service.py

`--through-app N` instead sends the body N times through the whole ASGI app in-process
(middleware with its logging, FastAPI's body parsing and validation, the endpoint in its thread,
the response), without sockets, and prints process CPU per request (all threads).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from http_bench import BATCH_SIZE, batch_body  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402
from seeded_catalog import seeded_catalog  # noqa: E402

from app.api._common import model_body  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db import make_engine, make_sessionmaker  # noqa: E402
from app.middleware import tune_gc_for_serving  # noqa: E402
from app.schemas.estimate import EstimateRequest  # noqa: E402
from app.schemas.estimate_answer import BatchOut  # noqa: E402
from app.services.estimates import cost_assumptions, run_batch  # noqa: E402


def _best_us_per_item(work: Callable[[], Any], runs: int = 15) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(runs):
        t0 = time.process_time()
        result = work()
        best = min(best, time.process_time() - t0)
    return best / BATCH_SIZE * 1e6, result


def through_app(requests: int) -> int:
    """Send the body `requests` times through the ASGI app in-process; print CPU a request."""
    from app.main import create_app  # the whole app (and its logging) only in this mode

    body = json.dumps(batch_body(BATCH_SIZE)).encode()
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/v1/estimate/batch", "raw_path": b"/api/v1/estimate/batch",
        "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1), "server": ("x", 80),
        "headers": [(b"host", b"x"), (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())],
    }  # fmt: skip

    async def one(app: Any) -> None:
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return messages.pop() if messages else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] != 200:
                raise SystemExit(f"status {message['status']}")

        await app({**scope, "state": {}}, receive, send)

    async def run(app: Any) -> float:
        async with app.router.lifespan_context(app):
            await one(app)  # load the catalog snapshot once, as a serving worker has
            tune_gc_for_serving()
            t0 = time.process_time()
            for _ in range(requests):
                await one(app)
            return time.process_time() - t0

    with tempfile.TemporaryDirectory(prefix="tierline-batch-") as tmp:
        app = create_app(Settings(database_url=seeded_catalog(tmp)))
        cpu = asyncio.run(run(app))
    print(f"{requests} requests of {BATCH_SIZE} items through the app: "
          f"{cpu / requests * 1e3:.2f} ms CPU a request ({cpu / requests / BATCH_SIZE * 1e6:.0f} "
          f"us an item, all threads)")
    return 0


def main() -> int:
    """Print microseconds per item for each stage and the estimates/s they add up to."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--through-app", type=int, metavar="N",
                        help="send the body N times through the ASGI app in-process instead")
    args = parser.parse_args()
    if args.through_app is not None:
        return through_app(args.through_app)
    with tempfile.TemporaryDirectory(prefix="tierline-batch-") as tmp:
        url = seeded_catalog(tmp)
        settings = Settings(database_url=url)
        engine = make_engine(url)
        sessions = make_sessionmaker(engine)
        raw = json.dumps(batch_body(BATCH_SIZE))
        adapter = TypeAdapter(list[EstimateRequest])
        costs = cost_assumptions(settings)

        def service() -> Any:
            with sessions() as session:
                return run_batch(session, requests=requests, costs=costs)

        requests = adapter.validate_python(json.loads(raw))
        service()  # load the catalog snapshot once, as a serving worker has
        tune_gc_for_serving()
        validate_us, requests = _best_us_per_item(lambda: adapter.validate_python(json.loads(raw)))
        service_us, answer = _best_us_per_item(service)
        encode_us, body = _best_us_per_item(lambda: model_body(BatchOut, answer))
        engine.dispose()
    total = validate_us + service_us + encode_us
    print(f"POST /api/v1/estimate/batch, {BATCH_SIZE} items, per item (CPU, best of 15):")
    print(f"  parse + validate {validate_us:.0f} us, run_batch {service_us:.0f} us, "
          f"JSON through BatchOut {encode_us:.0f} us ({len(body) / BATCH_SIZE:,.0f} bytes)")
    print(f"  total {total:.0f} us -> {1e6 / total:,.0f} estimates/s on one core without HTTP "
          f"(target over HTTP: 10,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
