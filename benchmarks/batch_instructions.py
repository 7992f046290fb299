"""Instructions per item of POST /api/v1/estimate/batch, stage by stage (callgrind).

Repeatable where CPU time is not (other processes loading the machine change cache behaviour,
not instruction counts): the 100-item body of benchmarks/http_bench.py, the stages of
benchmarks/batch_service.py (parse + validate, run_batch, JSON through BatchOut) and, one at a
time as run_batch runs them over every entry, its steps (inputs, engine, failover, answer).
Runs itself twice under `valgrind --tool=callgrind` (1 and 6 repetitions of each stage,
PYTHONHASHSEED=0, a dump after each stage) and prints the difference over 5 x 100 items, so
start-up and first-call costs cancel. Needs valgrind; ~3 minutes.

    python benchmarks/batch_instructions.py            # this tree
    PYTHONPATH=<tree> python <tree>/benchmarks/batch_instructions.py   # another tree, same way
"""

from __future__ import annotations

import glob
import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

STAGES = ("validate", "run_batch", "json")
STEPS = ("inputs", "engine", "failover", "answer")


def _child(url: str, repeats: int) -> None:
    """The measured process: each stage `repeats` times, os.getppid() (the dump trigger) after
    each stage and after each step of each repetition."""
    from http_bench import BATCH_SIZE, batch_body
    from pydantic import TypeAdapter

    from app.api._common import model_body
    from app.caching import snapshot
    from app.config import Settings
    from app.db import make_engine, make_sessionmaker
    from app.middleware import tune_gc_for_serving
    from app.schemas.estimate import EstimateRequest
    from app.schemas.estimate_answer import BatchOut
    from app.services import estimates as E

    sessions = make_sessionmaker(make_engine(url))
    raw = json.dumps(batch_body(BATCH_SIZE))
    adapter = TypeAdapter(list[EstimateRequest])
    costs = E.cost_assumptions(Settings(database_url=url))
    requests = adapter.validate_python(json.loads(raw))

    def service() -> BatchOut:
        with sessions() as session:
            return E.run_batch(session, requests=requests, costs=costs)

    for _ in range(3):  # warm: the catalog snapshot, the engine's memos, lazy imports
        answer = service()
        model_body(BatchOut, answer)
    tune_gc_for_serving()
    os.getppid()
    for stage in (
        lambda: adapter.validate_python(json.loads(raw)),
        service,
        lambda: model_body(BatchOut, answer),
    ):
        for _ in range(repeats):
            stage()
        os.getppid()
    # The steps as run_batch calls them in the tree measured (older trees lack the arguments).
    engine_args = (False,) if "counted" in inspect.signature(E._engine).parameters else ()
    share_models = "models" in inspect.signature(E._answer).parameters
    with sessions() as session:
        snap = snapshot(session)
        for _ in range(repeats):
            pasted: dict = {}
            entries = [E._inputs(snap, r, E._request_costs(costs, r), pasted) for r in requests]
            os.getppid()
            for entry in entries:
                E._engine(entry, snap, *engine_args)
            if engine_args:
                E.count_engine_evaluations(len(entries))
            os.getppid()
            for entry in entries:
                E._failover(entry)
            os.getppid()
            models: dict = {}
            results = [
                {"index": i, "ok": True, "error": None,
                 "result": E._answer(entry, models) if share_models else E._answer(entry)}
                for i, entry in enumerate(entries)
            ]  # fmt: skip
            E._BATCH.validate_python({"results": results})
            os.getppid()


def _totals(prefix: str) -> dict[str, int]:
    files = sorted(glob.glob(f"{prefix}.*.*"), key=lambda f: int(f.rsplit(".", 1)[1]))
    counts = []
    for name in files:
        with open(name) as f:
            counts.append(next(int(line.split()[1]) for line in f if line.startswith("summary:")))
    out = dict(zip(STAGES, counts[1:4], strict=True))
    for i, count in enumerate(counts[4:]):
        out[STEPS[i % 4]] = out.get(STEPS[i % 4], 0) + count
    return out


def main() -> int:
    """Print instructions per item of each stage and step, and of a whole item."""
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]))
        return 0
    from seeded_catalog import seeded_catalog

    with tempfile.TemporaryDirectory(prefix="tierline-instr-") as tmp:
        url = seeded_catalog(tmp)
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        runs = {}
        for repeats in (1, 6):
            out = f"{tmp}/cg.{repeats}"
            subprocess.run(
                ["valgrind", "--tool=callgrind", "--dump-before=os_getppid",
                 f"--callgrind-out-file={out}.%p", sys.executable, __file__, "--child", url,
                 str(repeats)],
                env=env, check=True, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            runs[repeats] = _totals(out)
    per_item = {k: (runs[6][k] - runs[1][k]) / 5 / 100 for k in runs[1]}
    print("POST /api/v1/estimate/batch, instructions per item (callgrind):")
    for name in (*STAGES, *STEPS):
        step = "  run_batch step" if name in STEPS else "stage"
        print(f"  {step:16s} {name:10s} {per_item[name] / 1e3:8.1f} K")
    item = sum(per_item[k] for k in STAGES)
    print(f"  item (validate + run_batch + JSON) {item / 1e3:8.1f} K")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
