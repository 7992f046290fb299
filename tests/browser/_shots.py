"""Screenshots for people to look at: the page from the top, bounded in height and time."""

from pathlib import Path
from typing import Any

# Pages taller than this (the engine notes run to tens of thousands of pixels) are captured as
# their first screen only: a full capture of them takes longer than a loaded CI machine allows.
MAX_SHOT_HEIGHT_PX = 6000
SHOT_TIMEOUT_MS = 90_000


def screenshot(tab: Any, path: Path, *, full_page: bool = True) -> None:
    """Save `tab` as a PNG: the whole page when it is not too tall, else its first screen."""
    height = tab.evaluate("() => document.documentElement.scrollHeight")
    if full_page and height <= MAX_SHOT_HEIGHT_PX:
        tab.screenshot(path=str(path), full_page=True, timeout=SHOT_TIMEOUT_MS)
        return
    if full_page:
        tab.evaluate("() => window.scrollTo(0, 0)")
    tab.screenshot(path=str(path), timeout=SHOT_TIMEOUT_MS)
