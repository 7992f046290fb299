"""A model's config.json by its Hugging Face id ("org/name"), fetched from the Hub.

Contract (callers: the admin "new model" form and API, the calculator form):
- `fetch_config(hf_id, *, settings, field="hf_id") -> HubConfig`: GET
  `<TIERLINE_HF_ENDPOINT>/<org>/<name>/resolve/main/config.json` with httpx, sending
  `Authorization: Bearer <TIERLINE_HF_TOKEN>` when a token is set (gated models), giving up after
  TIERLINE_HF_TIMEOUT_S. Every failure is a domain error naming `field`, in words a person can
  act on:
  - a malformed id: 422 ("use the form org/name");
  - no such model (404): 404;
  - gated or private (401/403): 422, saying whether a token was sent;
  - not a model config (not JSON, not an object, no model_type/architectures, too large): 422;
  - the Hub unreachable, timing out or failing (5xx): 503 with Retry-After, suggesting to
    paste the config.json instead.
Successful fetches are kept for CACHE_TTL_S per endpoint, id and token, so a calculator page
and its chart (two requests for one query) ask the Hub once. Nothing here touches the
database; the caller decides what to do with the config.
"""

import json
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import httpx

from app import __version__
from app.config import Settings
from app.errors import FieldError, InvalidInput, NotFound, ServiceUnavailable

# The Hub's repository names: an owner and a name of letters, digits, "-", "_" and ".".
_HF_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
HF_ID_PATTERN = re.compile(rf"^{_HF_PART}/{_HF_PART}$")
# A config.json is a few kB; anything this large is not one (and is not read into memory).
MAX_CONFIG_BYTES = 1_048_576
# Keys every transformers config.json carries at least one of.
CONFIG_MARKERS = ("model_type", "architectures")
CACHE_TTL_S = 600.0
CACHE_ENTRIES = 64


@dataclass(frozen=True)
class HubConfig:
    """A fetched config.json and where it came from."""

    hf_id: str
    config: dict[str, Any]
    url: str  # the config.json that was read
    page_url: str  # the model's page on the Hub (a record's source_url)


def parse_hf_id(value: str, *, field: str = "hf_id") -> str:
    """The id trimmed ("org/name"), or a 422 naming the field and the expected form."""
    hf_id = value.strip().strip("/")
    if hf_id.startswith(("https://", "http://")):
        # People paste the model page's address; its path is the id.
        hf_id = "/".join(hf_id.split("/")[3:5])
    if ".." in hf_id or not HF_ID_PATTERN.match(hf_id):
        shown = value.strip()[:100]
        message = f"'{shown}' is not a Hugging Face model id; use the form org/name"
        raise InvalidInput(f"{field}: {message}", errors=[FieldError(field, message)])
    return hf_id


def config_url(hf_id: str, endpoint: str) -> str:
    """Where the Hub serves a model's config.json (main branch)."""
    return f"{endpoint.rstrip('/')}/{hf_id}/resolve/main/config.json"


class _RecentConfigs:
    """Successful fetches for a few minutes (least recently used dropped first)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str, str], tuple[float, HubConfig]] = OrderedDict()

    def get(self, key: tuple[str, str, str]) -> HubConfig | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or time.monotonic() - entry[0] > CACHE_TTL_S:
                self._entries.pop(key, None)
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def clear(self) -> None:
        """Forget every fetch (tests; an operator changing the token)."""
        with self._lock:
            self._entries.clear()

    def put(self, key: tuple[str, str, str], value: HubConfig) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic(), value)
            self._entries.move_to_end(key)
            while len(self._entries) > CACHE_ENTRIES:
                self._entries.popitem(last=False)


RECENT = _RecentConfigs()


def fetch_config(hf_id: str, *, settings: Settings, field: str = "hf_id") -> HubConfig:
    """The model's config.json from the Hub (see the module docstring for every error)."""
    hf_id = parse_hf_id(hf_id, field=field)
    endpoint = settings.hf_endpoint.rstrip("/")
    key = (endpoint, hf_id, settings.hf_token or "")
    cached = RECENT.get(key)
    if cached is not None:
        return cached
    fetched = _fetch(hf_id, endpoint, settings=settings, field=field)
    RECENT.put(key, fetched)
    return fetched


def _fetch(hf_id: str, endpoint: str, *, settings: Settings, field: str) -> HubConfig:
    url = config_url(hf_id, endpoint)
    headers = {"Accept": "application/json", "User-Agent": f"tierline/{__version__}"}
    if settings.hf_token:
        headers["Authorization"] = f"Bearer {settings.hf_token}"
    try:
        # httpx drops the Authorization header when a redirect leaves the endpoint's origin.
        with (
            httpx.Client(timeout=settings.hf_timeout_s, follow_redirects=True) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            status = response.status_code
            body = _read_bounded(response) if status == 200 else b""
    except httpx.TimeoutException:
        raise _unreachable(field, hf_id, endpoint,
                           f"no answer within {settings.hf_timeout_s:g} s") from None
    except (httpx.TransportError, httpx.TooManyRedirects) as exc:
        raise _unreachable(field, hf_id, endpoint, _transport_reason(exc)) from None
    except _TooLarge:
        raise _not_a_config(field, hf_id, f"larger than {MAX_CONFIG_BYTES:,} bytes") from None
    if status == 404:
        message = f"no model '{hf_id}' with a config.json on the Hub at {endpoint}"
        raise NotFound(f"{field}: {message}", errors=[FieldError(field, message)])
    if status in (401, 403):
        if settings.hf_token:
            message = (f"'{hf_id}' is gated or private and TIERLINE_HF_TOKEN has no access to "
                       "it: accept the model's terms on the Hub with that account")
        else:
            message = (f"'{hf_id}' is gated or private: set TIERLINE_HF_TOKEN to a Hugging Face "
                       "token with access, or paste its config.json")
        raise InvalidInput(f"{field}: {message}", errors=[FieldError(field, message)])
    if status != 200:
        raise _unreachable(field, hf_id, endpoint, f"the Hub answered HTTP {status}")
    return HubConfig(hf_id, _config_from(body, field=field, hf_id=hf_id), url,
                     f"{endpoint}/{hf_id}")


class _TooLarge(Exception):
    pass


def _read_bounded(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_CONFIG_BYTES:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _config_from(body: bytes, *, field: str, hf_id: str) -> dict[str, Any]:
    try:
        config = json.loads(body)
    except (ValueError, RecursionError):
        raise _not_a_config(field, hf_id, "its config.json is not valid JSON") from None
    if not isinstance(config, dict):
        raise _not_a_config(field, hf_id, "its config.json is not a JSON object")
    if not any(key in config for key in CONFIG_MARKERS):
        raise _not_a_config(field, hf_id, "it has neither model_type nor architectures")
    return config


def _not_a_config(field: str, hf_id: str, reason: str) -> InvalidInput:
    message = f"'{hf_id}' is not a model config on the Hub: {reason}"
    return InvalidInput(f"{field}: {message}", errors=[FieldError(field, message)])


def _unreachable(field: str, hf_id: str, endpoint: str, reason: str) -> ServiceUnavailable:
    message = (f"could not fetch '{hf_id}' from the Hub at {endpoint} ({reason}); try again, "
               "or paste the model's config.json")
    return ServiceUnavailable(f"{field}: {message}", errors=[FieldError(field, message)],
                              headers={"Retry-After": "30"})


def _transport_reason(exc: Exception) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect: offline, or the endpoint is wrong"
    if isinstance(exc, httpx.TooManyRedirects):
        return "too many redirects"
    return type(exc).__name__
