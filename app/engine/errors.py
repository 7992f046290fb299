"""The one error the engine raises for bad input."""

from __future__ import annotations


class EngineInputError(ValueError):
    """An input the engine cannot use; `field` names it so the API can answer 422."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
