"""What a regular install (`pip install .`) carries: every code folder is a package."""

from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"


@pytest.mark.parametrize(
    "folder",
    sorted(
        str(d.relative_to(APP.parent))
        for d in APP.rglob("*")
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))
    ),
)
def test_every_code_folder_is_a_package(folder: str) -> None:
    # setup.py lists packages with find_packages, which skips folders without __init__.py: their
    # modules would be missing from the wheel although an editable install imports them.
    assert (APP.parent / folder / "__init__.py").is_file()
