"""The audit log shows what changed, field by field, not two whole documents."""

import re

from fastapi.testclient import TestClient

from app.services.audit import FieldChange, field_changes
from tests.admin.test_admin_pages import BUILD, browser, edit_data  # noqa: F401  (fixture)


def test_field_changes_lists_only_changed_fields_by_dotted_path() -> None:
    before = {"price_usd": 10000, "notes": "a", "link": {"kind": "pcie", "gbs": 32}, "version": 1}
    after = {"price_usd": 9800, "notes": "a", "link": {"kind": "pcie", "gbs": 64}, "version": 2,
             "power_w": 700}
    assert field_changes(before, after) == [
        FieldChange("price_usd", "10000", "9800"),
        FieldChange("link.gbs", "32", "64"),
        FieldChange("power_w", None, "700"),
    ]
    assert str(field_changes(before, after)[0]) == "price_usd 10000 → 9800"


def test_field_changes_of_identical_records_is_empty() -> None:
    assert field_changes({"a": [1, 2]}, {"a": [1, 2]}) == []


def test_update_event_page_and_log_show_the_changed_field(browser: TestClient) -> None:  # noqa: F811
    browser.post(f"/admin/builds/{BUILD}", data=edit_data(browser, price_usd="9800"))
    log = browser.get("/admin/audit", params={"slug": BUILD, "action": "update"}).text
    assert "price_usd 10000 → 9800" in log
    event_id = re.search(r'href="/admin/audit/(\d+)">event', log).group(1)  # type: ignore[union-attr]
    page = browser.get(f"/admin/audit/{event_id}").text
    table = page[page.index('class="spec-table audit-changes"'):page.index("</table>")]
    assert "<code>price_usd</code>" in table and "<code>10000</code>" in table
    assert "<code>9800</code>" in table
    assert "<code>notes</code>" not in table
    assert "edit it</a>. As JSON" in page


def test_admin_home_says_new_accelerator_not_a_accelerator(browser: TestClient) -> None:  # noqa: F811
    html = browser.get("/admin").text
    assert "add a accelerator" not in html
    assert "new accelerator" in html
