"""Helpers for the API tests: the catalog read straight from the database, problem fields."""

from typing import Any

from sqlalchemy.orm import Session

from app.engine import CostAssumptions, Estimate, Workload, estimate
from app.services.records import BUILD, MODEL, all_records
from app.services.specs import build_spec, model_spec


class Catalog:
    """The seeded catalog read straight from the database, for computing expectations."""

    def __init__(self, session: Session) -> None:
        self.builds = {b.slug: b for b in all_records(session, BUILD)}
        self.models = {m.slug: m for m in all_records(session, MODEL)}
        self.build_specs = {slug: build_spec(b) for slug, b in self.builds.items()}
        self.model_specs = {slug: model_spec(m) for slug, m in self.models.items()}

    def estimate(self, build: str, model: str, **workload: Any) -> Estimate:
        costs = CostAssumptions()
        workload.setdefault("precision", "fp8")
        return estimate(
            self.build_specs[build], self.model_specs[model], Workload(**workload), costs
        )


def problem_fields(response: Any) -> list[str]:
    """The field names a problem+json answer names."""
    assert response.headers["content-type"].startswith("application/problem+json"), response.text
    return [e["field"] for e in response.json().get("errors", [])]
