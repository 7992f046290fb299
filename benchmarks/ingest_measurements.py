"""Ingest collected measurement files into seed_data/, through the catalog's own import path.

Run from the repository root:
    python benchmarks/ingest_measurements.py /work/data            # report only
    python benchmarks/ingest_measurements.py /work/data --write    # also append to seed_data/
    python benchmarks/ingest_measurements.py --amend benchmarks/data/serving_amendments.yaml

`--amend FILE` corrects records already in seed_data/measurements.yaml in place: each entry
names `slugs`, the fields to `set` (a `hardware.` prefix for a hardware field) and a `note`
appended to their notes (quoting the source). Only the lines of those fields change, so the
rest of the file stays byte-identical; every amended record is validated as a MeasurementIn,
and a second run changes nothing.

Reads DIR/measurements_*.yaml (the shape of DIR/SCHEMA.md, which is the seed format) and
DIR/models_extra_*.yaml, DIR/accelerators_extra_*.yaml (catalog record shapes). Three
documented differences are converted: an accelerator's `memory_kind` `gddr` / `hbm` is the
catalog's `discrete` (the memory type stays in `memory_type`), a model's `hf_id` moves into its
notes, and a measurement slug longer than the catalog's 80 characters is shortened to its start
plus a hash of the whole (the collected slug is kept in its notes). Records whose slug
seed_data already holds are left out (the catalog's record wins). Everything else goes,
together with the current seed catalog, through a dry-run `import_document` on a scratch
database: rejected records are dropped (and whatever referred to them re-checked) until the
document imports cleanly. Each rejected record is printed with its
file and the reasons. Values are never changed.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.db import make_engine, make_sessionmaker  # noqa: E402
from app.migrate import upgrade_to_head  # noqa: E402
from app.schemas.measurement import MeasurementIn  # noqa: E402
from app.services.catalog import import_document, load_seed_directory  # noqa: E402
from app.services.records import KIND_BY_NAME  # noqa: E402

EXTRA_FILES = {
    "accelerators": "accelerators_extra_*.yaml",
    "models": "models_extra_*.yaml",
    "measurements": "measurements_*.yaml",
}
CATALOG_MEMORY_KINDS = {"gddr": "discrete", "hbm": "discrete"}
SLUG_LENGTH = 80


def short_slug(slug: str) -> str:
    """A slug within SLUG_LENGTH: long ones keep their start plus a hash of the whole (stable,
    unique); the collected slug is kept in the notes."""
    if len(slug) <= SLUG_LENGTH:
        return slug
    digest = hashlib.sha1(slug.encode()).hexdigest()[:8]
    return f"{slug[: SLUG_LENGTH - 9].rstrip('-')}-{digest}"


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _normalise(key: str, record: dict[str, Any]) -> dict[str, Any]:
    record = dict(record)
    if key == "accelerators" and record.get("memory_kind") in CATALOG_MEMORY_KINDS:
        record["memory_kind"] = CATALOG_MEMORY_KINDS[record["memory_kind"]]
    slug = record.get("slug")
    if key == "measurements" and isinstance(slug, str) and len(slug) > SLUG_LENGTH:
        record["slug"] = short_slug(slug)
        notes = str(record.get("notes") or "")
        record["notes"] = f"{notes} (collected as '{slug}')".strip()
    if key == "models" and "hf_id" in record:
        hf_id = record.pop("hf_id")
        notes = str(record.get("notes") or "")
        record["notes"] = f"{notes} Hugging Face id: {hf_id}.".strip()
    return record


def _collected(
    directory: Path, seed: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]], list[str]]:
    """New records by document key, the file each came from, and the slugs left out."""
    known = {key: {r["slug"] for r in seed.get(key, [])} for key in EXTRA_FILES}
    records: dict[str, list[dict[str, Any]]] = {key: [] for key in EXTRA_FILES}
    origins: dict[str, list[str]] = {key: [] for key in EXTRA_FILES}
    already: list[str] = []
    for key, pattern in EXTRA_FILES.items():
        for path in sorted(directory.glob(pattern)):
            for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                record = _normalise(key, raw) if isinstance(raw, dict) else raw
                slug = record.get("slug") if isinstance(record, dict) else None
                if slug in known[key]:
                    already.append(f"{path.name}: {key[:-1]} '{slug}' (already in seed_data)")
                    continue
                records[key].append(record)
                origins[key].append(path.name)
    return records, origins, already


def _dry_run(url: str, document: dict[str, Any]) -> list[Any]:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return import_document(session, document, actor="ingest", dry_run=True).errors
    finally:
        engine.dispose()


def _append(path: Path, records: Iterable[dict[str, Any]]) -> int:
    items = list(records)
    if items:
        text = yaml.dump(items, Dumper=_NoAliases, sort_keys=False, width=110, allow_unicode=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)
    return len(items)


RECORD_START = "- slug: "
FIELD_ORDER = list(MeasurementIn.model_fields)


def _dump_field(key: str, value: Any, indent: str) -> list[str]:
    text = yaml.dump(
        {key: value}, Dumper=_NoAliases, sort_keys=False, width=110, allow_unicode=True
    )
    return [indent + line for line in text.rstrip("\n").split("\n")]


def _field_extent(block: list[str], key: str, indent: str) -> tuple[int, int] | None:
    """Lines [start, end) of `key` at this indent: its line and the deeper lines under it."""
    head = f"{indent}{key}:"
    for start, line in enumerate(block):
        if line == head or line.startswith(head + " "):
            end = start + 1
            while end < len(block) and block[end].startswith(indent + " "):
                end += 1
            return start, end
    return None


def _set_field(block: list[str], key: str, value: Any) -> list[str]:
    if key.startswith("hardware."):
        sub = key.removeprefix("hardware.")
        outer = _field_extent(block, "hardware", "  ")
        if outer is None:
            raise ValueError("record without hardware")
        inner = block[outer[0] + 1 : outer[1]]
        return block[: outer[0] + 1] + _set_field_at(inner, sub, value, "    ") + block[outer[1] :]
    return _set_field_at(block, key, value, "  ")


def _set_field_at(block: list[str], key: str, value: Any, indent: str) -> list[str]:
    extent = _field_extent(block, key, indent)
    lines = _dump_field(key, value, indent)
    if extent is not None:
        if any("&id" in line or "*id" in line for line in block[extent[0] : extent[1]]):
            raise ValueError(f"{key}: holds a YAML anchor or alias; edit it by hand")
        return block[: extent[0]] + lines + block[extent[1] :]
    # A field the record does not spell out: insert it after the nearest earlier field.
    order = FIELD_ORDER if indent == "  " else []
    earlier = order[: order.index(key)] if key in order else []
    for previous in reversed(earlier):
        found = _field_extent(block, previous, indent)
        if found is not None:
            return block[: found[1]] + lines + block[found[1] :]
    return block + lines


def amend(path: Path, amendments: list[dict[str, Any]]) -> int:
    """Apply `amendments` to the measurement file at `path`; returns the records changed."""
    lines = path.read_text(encoding="utf-8").split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(RECORD_START)]
    order = [lines[a].removeprefix(RECORD_START).strip() for a in starts]
    blocks = {
        slug: lines[a:b]
        for slug, a, b in zip(order, starts, [*starts[1:], len(lines)], strict=True)
    }
    if len(blocks) != len(order):
        raise ValueError(f"{path} repeats a slug")
    changed: set[str] = set()
    for entry in amendments:
        for slug in entry["slugs"]:
            if slug not in blocks:
                raise KeyError(f"no measurement '{slug}' in {path}")
            block = blocks[slug]
            for key, value in (entry.get("set") or {}).items():
                block = _set_field(block, key, value)
            note = entry.get("note")
            if note:
                record = yaml.safe_load("\n".join(block))[0]
                notes = str(record.get("notes") or "")
                if note not in notes:
                    block = _set_field(block, "notes", f"{notes} {note}".strip())
            if block != blocks[slug]:
                MeasurementIn.model_validate(yaml.safe_load("\n".join(block))[0])
                blocks[slug] = block
                changed.add(slug)
    out: list[str] = lines[: starts[0]] if starts else lines
    for slug in order:
        out.extend(blocks[slug])
    path.write_text("\n".join(out), encoding="utf-8")
    return len(changed)


def main() -> int:
    """Validate the collected files; print what is accepted and what is rejected and why."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--seed-dir", type=Path, default=ROOT / "seed_data")
    parser.add_argument("--write", action="store_true", help="append accepted records")
    parser.add_argument("--amend", type=Path, help="apply corrections to seed measurements")
    args = parser.parse_args()
    if args.amend is not None:
        amendments = yaml.safe_load(args.amend.read_text(encoding="utf-8")) or []
        count = amend(args.seed_dir / "measurements.yaml", amendments)
        print(f"amended {count} measurement records")
        return 0
    if args.directory is None:
        parser.error("give the directory of collected files, or --amend FILE")
    seed = load_seed_directory(args.seed_dir)
    new, origins, already = _collected(args.directory, seed)
    rejected: dict[tuple[str, int], list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'ingest.db'}"
        upgrade_to_head(url)
        for _round in range(10):
            keep = {
                key: [r for i, r in enumerate(rows) if (key, i) not in rejected]
                for key, rows in new.items()
            }
            positions = {
                key: [i for i in range(len(rows)) if (key, i) not in rejected]
                for key, rows in new.items()
            }
            document = {key: list(seed.get(key, [])) + keep[key] for key in EXTRA_FILES}
            document["builds"] = seed.get("builds", [])
            errors = _dry_run(url, document)
            if not errors:
                break
            for error in errors:
                kind = KIND_BY_NAME.get(error.kind)
                if kind is None or error.index is None:
                    print(f"document-level problem: {error.as_dict()}", file=sys.stderr)
                    return 1
                offset = len(seed.get(kind.key, []))
                if error.index < offset:
                    print(f"seed_data itself is invalid: {error.as_dict()}", file=sys.stderr)
                    return 1
                original = positions[kind.key][error.index - offset]
                rejected.setdefault((kind.key, original), []).append(
                    f"{error.field}: {error.message}"
                )
        else:
            print("still invalid after 10 rounds", file=sys.stderr)
            return 1
    accepted = {
        key: [r for i, r in enumerate(rows) if (key, i) not in rejected]
        for key, rows in new.items()
    }
    sources = {r["source_url"] for r in seed.get("measurements", []) + accepted["measurements"]}
    for key in EXTRA_FILES:
        print(
            f"{key}: {len(new[key])} new, {len(accepted[key])} accepted, "
            f"{len(new[key]) - len(accepted[key])} rejected"
        )
    total = len(seed.get("measurements", [])) + len(accepted["measurements"])
    print(f"measurements after ingest: {total} from {len(sources)} distinct source_url values")
    if already:
        print(f"\nleft out ({len(already)}):")
        for line in already:
            print(f"  {line}")
    if rejected:
        print(f"\nrejected ({len(rejected)}):")
        for (key, index), reasons in sorted(rejected.items()):
            raw = new[key][index]
            slug = raw.get("slug") if isinstance(raw, dict) else None
            print(f"  {origins[key][index]}: {key[:-1]} '{slug}': {'; '.join(reasons)}")
    if args.write:
        for key in EXTRA_FILES:
            count = _append(args.seed_dir / f"{key}.yaml", accepted[key])
            print(f"appended {count} to {args.seed_dir / f'{key}.yaml'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
