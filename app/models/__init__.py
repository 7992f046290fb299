"""ORM models; importing this package registers every table on Base.metadata."""

from app.models.accelerator import MEMORY_KINDS, Accelerator
from app.models.admin import (
    AdminSession,
    ApiToken,
    AppSecret,
    AuditEvent,
    CatalogState,
    LoginAttempt,
)
from app.models.build import (
    INTER_NODE_LINK_KINDS,
    INTRA_NODE_LINK_KINDS,
    TIERS,
    Build,
    BuildAcceleratorGroup,
)
from app.models.measurement import MEASUREMENT_RUNTIMES, METRIC_UNITS, METRICS, Measurement
from app.models.model_profile import ModelProfile

__all__ = [
    "INTER_NODE_LINK_KINDS",
    "INTRA_NODE_LINK_KINDS",
    "MEASUREMENT_RUNTIMES",
    "MEMORY_KINDS",
    "METRICS",
    "METRIC_UNITS",
    "TIERS",
    "Accelerator",
    "AdminSession",
    "ApiToken",
    "AppSecret",
    "AuditEvent",
    "Build",
    "BuildAcceleratorGroup",
    "CatalogState",
    "LoginAttempt",
    "Measurement",
    "ModelProfile",
]
