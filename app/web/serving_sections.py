"""The serving curve on the build page and on compare: the serving page's own evaluation for one
build (or several, one line each on one chart), with the page's SLO and load limits.

The build page's section links the /serving page and its /serving.json twin for the same query;
compare's section has its own chart (/compare/serving.svg) and JSON twin (/compare/serving.json),
routed in app.web.compare.
"""

from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.caching import snapshot
from app.config import Settings
from app.schemas.serving import ServingOut
from app.services.estimates import cost_assumptions
from app.web.charts import cached_chart, serving_curve_svg
from app.web.common import Notice
from app.web.page_inputs import build_digest, by_inputs, models_digest
from app.web.pages import BuildModelFits
from app.web.serving import curve_series, evaluate, field_notices, min_user_speed

# The serving fields a section's form takes (the rest of /serving's form is the page's own).
LIMIT_FIELDS = (
    "input_tokens",
    "output_tokens",
    "ttft_s_max",
    "itl_ms_max",
    "tokens_per_s_per_user_min",
    "concurrent_users",
    "requests_per_s",
)


def serving_query(
    raw: dict[str, str], *, build: str, model: str, precision: str
) -> dict[str, str]:
    """The /serving query for one catalog build and model with the limits given in `raw`."""
    return {"build": build, "model": model, "precision": precision, **limits_of(raw)}


def limits_of(raw: dict[str, str]) -> dict[str, str]:
    """The limits given in a page's query (for links and hidden form fields)."""
    return {k: raw[k] for k in LIMIT_FIELDS if k in raw}


@dataclass(frozen=True)
class ServingSection:
    """One build's curve for a page: the answer (None when refused), the /serving query, notices."""

    query: dict[str, str]
    answer: ServingOut | None
    notices: list[Notice]
    status: int


def serving_section(
    session: Session, settings: Settings, raw: dict[str, str], *, build: str, model: str,
    precision: str,
) -> ServingSection:
    """The serving curve of `build` running `model` under the limits in `raw`."""
    query = serving_query(raw, build=build, model=model, precision=precision)
    answer, errors, status = evaluate(session, settings, query)
    return ServingSection(query, answer, field_notices(errors), status)


def build_page_section(
    session: Session, settings: Settings, raw: dict[str, str], *, slug: str, fits: BuildModelFits
) -> ServingSection | None:
    """The build's serving curve for ?model= under the limits in the query; by default the
    largest catalog model with a serving curve here (at the precision it runs at). None when
    the build runs no catalog model.

    Memoised by its inputs (app.web.page_inputs): finding the default can take a curve per
    catalog model (~40 ms a build after an edit), and an edit to another build keeps it."""
    runs = {f.model.slug: f.precision for f in fits.runs}
    if not runs:
        return None
    snap = snapshot(session)
    key = ("build_serving", build_digest(snap, slug), models_digest(snap), tuple(runs.items()),
           raw.get("model", ""), raw.get("precision", ""), tuple(sorted(limits_of(raw).items())),
           cost_assumptions(settings))

    def compute() -> ServingSection | None:
        asked = raw.get("model", "")
        section = None
        for model in [asked] if asked in runs else list(runs):
            precision = raw.get("precision") or runs[model]
            section = serving_section(
                session, settings, raw, build=slug, model=model, precision=precision
            )
            if section.answer is None or section.answer.curve:
                break  # refused input (the page says why) or a curve to show
        return section

    return by_inputs(key, compute)


def compare_chart_svg(sections: list[ServingSection], snap_key: str, session: Session) -> str:
    """One chart with a line per build that has a curve, cached per catalog version and query."""
    answers = [s.answer for s in sections if s.answer is not None and s.answer.curve]
    limit = max((min_user_speed(a) or 0.0 for a in answers), default=0.0) or None
    return cached_chart(
        snapshot(session),
        ("compare-serving", snap_key),
        lambda: serving_curve_svg(
            [curve_series(a) for a in answers], min_tokens_per_s_per_user=limit
        ),
    )
