"""Logs: one JSON object per line on stderr, for the access log and the error log."""

import json
import logging
import sys
import traceback
from datetime import UTC, datetime
from typing import Any

access_log = logging.getLogger("tierline.access")
error_log = logging.getLogger("tierline.error")

# One encoder for every line: `json.dumps(..., default=str)` builds a new one per call.
_ENCODER = json.JSONEncoder(default=str)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            # Server-side only: the traceback goes to the log, never into a response.
            entry["traceback"] = "".join(traceback.format_exception(*record.exc_info))
        return _ENCODER.encode(entry)


def configure_logging(level: str) -> None:
    """Send the `tierline` loggers to stderr as JSON lines (once per process)."""
    logger = logging.getLogger("tierline")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_tierline_json", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        handler._tierline_json = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def log_request(fields: dict[str, Any]) -> None:
    """Write one request's access line (when INFO is enabled for the access log).

    The record is made directly (`Logger.makeRecord` + `Logger.handle`, both public) because
    `Logger.info` first walks the stack to find the caller's file and line, which the JSON line
    never shows: wasted work on every request.
    """
    if access_log.isEnabledFor(logging.INFO):
        record = access_log.makeRecord(
            access_log.name, logging.INFO, __file__, 0, "request", (), None,
            extra={"fields": fields},
        )
        access_log.handle(record)
