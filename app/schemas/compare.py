"""GET /api/v1/compare: query and answer."""

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.schemas.build import BuildListItem
from app.schemas.estimate import (
    OFFLOAD_DESCRIPTION,
    RUNTIME_DESCRIPTION,
    Offload,
    Parallelism,
    RuntimeName,
)
from app.schemas.listing import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_PRECISION,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    PrecisionName,
    SlugRef,
    no_nul,
)

MIN_COMPARE = 2
MAX_COMPARE = 6
SLUG_PATTERN = r"[a-z0-9][a-z0-9-]{0,79}"
_SLUG = rf" *{SLUG_PATTERN} *"
# 2 to 6 slugs (spaces around each are tolerated); duplicates are refused by the validator.
BUILDS_PATTERN = rf"^{_SLUG}(,{_SLUG}){{{MIN_COMPARE - 1},{MAX_COMPARE - 1}}}$"
# With no model given, the "Run a N GB model?" row uses the tier-line story's model.
STORY_MODEL = "deepseek-v3"


class CompareQuery(BaseModel):
    """Builds side by side, optionally with the engine's figures for one model."""

    model_config = ConfigDict(extra="ignore")

    builds: str = Field(
        max_length=1000,
        # Documented, and enforced by the validator below with clearer messages.
        json_schema_extra={"pattern": BUILDS_PATTERN},
        description=f"{MIN_COMPARE} to {MAX_COMPARE} build slugs, comma-separated",
        examples=["4x-rtx-4090-workstation,2x-dgx-h200-cluster"],
    )
    model: SlugRef | None = Field(
        default=None,
        description=f"model slug; without it the 'Run a N GB model?' row uses {STORY_MODEL}",
    )
    precision: PrecisionName = DEFAULT_PRECISION
    context_tokens: int = Field(default=DEFAULT_CONTEXT_TOKENS, ge=1, le=MAX_CONTEXT_TOKENS)
    batch: int = Field(default=1, ge=1, le=MAX_BATCH)
    runtime: RuntimeName | None = Field(default=None, description=RUNTIME_DESCRIPTION)
    parallelism: Parallelism = "auto"
    offload: Offload = Field(default="auto", description=OFFLOAD_DESCRIPTION)

    @field_validator("builds")
    @classmethod
    def _two_to_six(cls, value: str) -> str:
        no_nul(value)
        slugs = [s.strip(" ") for s in value.split(",")]
        if any(not s for s in slugs):
            raise ValueError("empty build slug in the list")
        for slug in slugs:
            if not re.fullmatch(SLUG_PATTERN, slug):
                raise ValueError(
                    f"'{slug[:80]}' is not a build slug (lowercase letters, digits, hyphens)"
                )
        if len(set(slugs)) != len(slugs):
            raise ValueError("a build appears twice")
        if not MIN_COMPARE <= len(slugs) <= MAX_COMPARE:
            raise ValueError(f"give {MIN_COMPARE} to {MAX_COMPARE} builds, got {len(slugs)}")
        return ",".join(slugs)

    @property
    def slugs(self) -> list[str]:
        """The build slugs in order."""
        return self.builds.split(",")


class CompareRow(BaseModel):
    """One row of the table: a value per build (same order as `builds`) and its display text."""

    key: str
    label: str
    unit: str | None = Field(description="unit of the numeric values, if any")
    values: list[Any]
    display: list[str] = Field(description="the values as a person reads them")
    same: bool = Field(description="true when every build has the same value")


class CompareModel(BaseModel):
    """The model the engine rows are about."""

    slug: str
    name: str
    params_total: int
    precision: str
    rule_of_thumb_gb: float
    given: bool = Field(description="false when it is the default story model")
    judged_by: str = Field(
        description="which model judged the 'Run a N GB model?' and failover rows, and why"
    )


class CompareOut(BaseModel):
    """Builds side by side."""

    builds: list[BuildListItem]
    model: CompareModel | None
    workload: dict[str, Any]
    rows: list[CompareRow]
