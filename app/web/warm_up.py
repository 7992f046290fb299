"""Fill the catalog-wide caches a worker's first visitors would otherwise wait for.

The accuracy report behind every build and model page predicts each measurement in the catalog
(~2 s of CPU on a quiet core) and the home page judges every build; both are memoised per
catalog version (app/caching.py), so only the first request after a worker starts pays. A
worker computes them once in a background thread right after it starts instead; a request that
arrives meanwhile waits for the same computation (the memo's single flight), never a second one.
"""

import logging
import threading

from sqlalchemy.orm import Session, sessionmaker

from app.caching import snapshot
from app.config import Settings
from app.schemas.tiers import TiersQuery
from app.services.accuracy import accuracy_report
from app.services.tiers import tier_line
from app.web.pages import tier_story

log = logging.getLogger("tierline.warm_up")


def warm_caches(sessions: sessionmaker[Session], settings: Settings) -> None:
    """Compute what the home page and the measured-vs-predicted sections show, at the default
    query; a failure is logged and left to the first request (which reports it properly)."""
    try:
        with sessions() as session:
            accuracy_report(snapshot(session))
            defaults = TiersQuery()
            tier_line(session, precision=defaults.precision, context_tokens=defaults.context_tokens)
            tier_story(session, settings=settings)
    except Exception:  # a warm-up never takes the worker down
        log.warning("cache warm-up failed; the first requests compute instead", exc_info=True)


def start_warm_up(sessions: sessionmaker[Session], settings: Settings) -> threading.Thread:
    """Run warm_caches in a daemon thread (it must not hold up the worker's start or exit)."""
    thread = threading.Thread(
        target=warm_caches, args=(sessions, settings), name="tierline-warm-up", daemon=True
    )
    thread.start()
    return thread
