"""Screenshots for people to look at: the page from the top, bounded in height and time."""

from pathlib import Path
from typing import Any

# Long documents (the engine notes run to tens of thousands of pixels) are captured from the top
# down to this height; a full capture of them takes longer than a loaded CI machine allows.
MAX_SHOT_HEIGHT_PX = 6000
SHOT_TIMEOUT_MS = 90_000


def screenshot(tab: Any, path: Path, *, full_page: bool = True) -> None:
    """Save `tab` as a PNG: the whole page up to MAX_SHOT_HEIGHT_PX, or just the viewport."""
    if not full_page:
        tab.screenshot(path=str(path), timeout=SHOT_TIMEOUT_MS)
        return
    width, height = tab.evaluate(
        "() => [document.documentElement.clientWidth, document.documentElement.scrollHeight]"
    )
    clip = {"x": 0, "y": 0, "width": width, "height": min(height, MAX_SHOT_HEIGHT_PX)}
    tab.screenshot(path=str(path), full_page=True, clip=clip, timeout=SHOT_TIMEOUT_MS)
