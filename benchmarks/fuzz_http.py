"""Longer schemathesis run over real HTTP against 2 workers on PostgreSQL (the test suite runs a
shorter in-process pass): every operation, positive and negative data, stateful phase included.

    python benchmarks/fuzz_http.py [--max-examples 500] [--max-time 900]

Exits with schemathesis' status (0 when it found nothing). Uses its own database (rel_load_*,
dropped afterwards) and a port in 8401-8419.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

import httpx
from load import ROOT, create_database, create_token, drop_database, free_port


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=500)
    parser.add_argument("--max-time", type=int, default=900, help="seconds for the whole run")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()
    base_url = os.environ.get("TIERLINE_LOAD_POSTGRES_URL",
                              "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    port = free_port(args.port)
    name, url = create_database(base_url)
    env = {**os.environ, "TIERLINE_DATABASE_URL": url, "TIERLINE_SEED_ON_START": "false",
           "TIERLINE_LOG_LEVEL": "warning"}
    server = None
    try:
        token = create_token(env)
        server = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import main; main()", "serve", "--no-migrate",
             "--workers", "2", "--port", str(port)],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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
        command = [
            "schemathesis", "run", f"{base}/openapi.json",
            "--mode", "all", "--max-examples", str(args.max_examples),
            "--max-time", str(args.max_time), "--workers", "2",
            # Schema-valid input may be refused for cross-field reasons OpenAPI cannot express.
            "--exclude-checks", "positive_data_acceptance",
            "--generation-deterministic",
        ]
        if token:
            command += ["--header", f"Authorization: Bearer {token}"]
        started = time.monotonic()
        result = subprocess.run(command, cwd=ROOT)
        print(f"\nfuzz_http: {time.monotonic() - started:.0f} s, exit status {result.returncode}")
        return result.returncode
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        drop_database(base_url, name)


if __name__ == "__main__":
    raise SystemExit(main())
