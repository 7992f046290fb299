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
from app.models.model_profile import ModelProfile

__all__ = [
    "INTER_NODE_LINK_KINDS",
    "INTRA_NODE_LINK_KINDS",
    "MEMORY_KINDS",
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
    "ModelProfile",
]
