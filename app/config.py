"""Settings read from the environment (prefix TIERLINE_); every field is listed in README."""

from functools import lru_cache
from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def data_dir(name: str) -> Path:
    """A top-level data folder (templates, static, seed_data, migrations, docs).

    A regular install carries them inside the package (setup.py bundles them); a checkout or an
    editable install reads them beside the package.
    """
    bundled = PACKAGE_DIR / "_bundled" / name
    return bundled if bundled.is_dir() else PROJECT_ROOT / name


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
PUBLISHED_SECRET_KEYS = frozenset({"change-me-in-production", "changeme", "secret"})


class Settings(BaseSettings):
    """Runtime configuration; defaults serve the seeded catalog from ./tierline.db."""

    model_config = SettingsConfigDict(env_prefix="TIERLINE_", env_file=".env", extra="ignore")

    database_url: str = "sqlite:///./tierline.db"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    workers: int = Field(default=1, ge=1, le=64)
    seed_on_start: bool = True
    # Each `serve` worker computes the catalog-wide caches in the background as it starts
    # (app/web/warm_up.py), so its first visitors do not wait seconds for them.
    warm_caches: bool = True
    templates_dir: Path = data_dir("templates")
    static_dir: Path = data_dir("static")
    seed_dir: Path = data_dir("seed_data")
    docs_dir: Path = data_dir("docs")
    # Signs the admin session cookie. Unset (the default), a random key is generated on first
    # start and kept in the database, shared by every worker and host (docs/deploy.md).
    secret_key: str | None = None
    db_connect_timeout_s: float = Field(default=3.0, gt=0)
    max_body_bytes: int = Field(default=1_048_576, gt=0)
    max_import_bytes: int = Field(default=10_485_760, gt=0)
    # A request body still incomplete after this long is answered 408 (bodies are read before a
    # request is admitted, so a slow client only ever holds its own connection).
    body_timeout_s: float = Field(default=60.0, gt=0)
    # Strict-Transport-Security max-age on responses served over HTTPS; 0 sends no HSTS header.
    hsts_max_age_s: int = Field(default=31_536_000, ge=0)
    login_attempts_per_minute: int = Field(default=10, ge=1)
    admin_session_max_age_s: int = Field(default=28_800, ge=60, le=2_592_000)
    # Requests each worker process works on at once; the rest wait in arrival order
    # (app/middleware/admission.py, docs/deploy.md).
    max_concurrent_requests: int = Field(default=4, ge=1, le=1000)
    forwarded_allow_ips: str = "127.0.0.1"
    # Host names the service answers to (comma-separated; "*.example.org" wildcards). Absolute
    # URLs (Link, next_url, canonical) are built from the Host header, so any other Host is
    # refused with 400. Empty: any Host, which `serve` accepts only on a loopback interface.
    allowed_hosts: str = ""
    log_level: str = "info"
    # Cost assumptions the engine quotes by default.
    amortization_years: float = Field(default=3.0, gt=0)
    electricity_usd_per_kwh: float = Field(default=0.15, ge=0)
    pue: float = Field(default=1.3, ge=1)
    # Where a model's config.json is fetched by its Hugging Face id (app/services/hf_hub.py):
    # the Hub itself or a mirror; a token (read access) for gated models; a timeout per fetch.
    hf_endpoint: str = "https://huggingface.co"
    hf_token: str | None = Field(default=None, repr=False)
    hf_timeout_s: float = Field(default=10.0, gt=0, le=120)

    @field_validator("database_url")
    @classmethod
    def _a_database_url(cls, value: str) -> str:
        # Checked here, where every command and `serve` read it, so a typo is one message
        # naming the setting instead of a traceback from the first connection.
        try:
            url = make_url(value)
            url.get_dialect()
        except NoSuchModuleError:  # an ArgumentError too, so caught first
            reason = f"names an unknown database kind {url.drivername!r}"
        except ArgumentError:
            # Not echoed: a mistyped URL may still hold a password.
            reason = "is empty" if not value.strip() else "is not a SQLAlchemy database URL"
        else:
            return value
        raise ValueError(
            f"{reason}; e.g. sqlite:///./tierline.db or postgresql+psycopg://user@host:5432/db"
        )

    @field_validator("secret_key")
    @classmethod
    def _not_a_published_key(cls, value: str | None) -> str | None:
        # The key earlier releases shipped as the default: public, so it signs nothing here.
        if value is not None and value.strip().lower() in PUBLISHED_SECRET_KEYS:
            raise ValueError(
                "is a published placeholder anyone can sign cookies with; unset "
                "TIERLINE_SECRET_KEY to use a key generated and kept in the database"
            )
        return value

    @property
    def allowed_host_list(self) -> list[str]:
        """`allowed_hosts` as a list (empty: every Host is accepted)."""
        return [h.strip() for h in self.allowed_hosts.split(",") if h.strip()]

    def exposure_problem(self, bind_host: str) -> str | None:
        """Why serving on `bind_host` with these settings would be unsafe, or None."""
        if bind_host in LOOPBACK_HOSTS or self.allowed_host_list:
            return None
        return (
            f"serving on {bind_host} (beyond loopback) needs TIERLINE_ALLOWED_HOSTS, the host "
            "names clients use: absolute URLs in cacheable answers are built from the Host "
            "header, so any other Host must be refused (docs/deploy.md)"
        )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


@lru_cache
def get_settings() -> Settings:
    """Process-wide settings, read once from the environment."""
    return Settings()
