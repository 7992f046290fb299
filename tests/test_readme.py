"""README keeps its promises: the two quick-start commands and every setting."""

from app.config import PROJECT_ROOT, Settings

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_has_the_two_quick_start_commands() -> None:
    assert "pip install -e . && tierline serve" in README
    assert 'pip install -e ".[test]" && pytest' in README


def test_readme_lists_every_setting() -> None:
    missing = [name for name in Settings.model_fields if f"`TIERLINE_{name.upper()}`" not in README]
    assert not missing
