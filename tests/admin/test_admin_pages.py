"""Admin pages: sign-in, CSRF, edit forms with field errors, import preview, audit, restore."""

import html
import json
import re
from collections.abc import Iterator

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.config import Settings
from app.main import create_app
from app.services.catalog import export_document
from app.services.tokens import revoke_token
from tests.admin.conftest import BUILDS

BUILD = "adm-4x-4090"
CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(client: TestClient, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    match = CSRF_RE.search(response.text)
    assert match, f"no CSRF field on {url}"
    return match.group(1)


def sign_in(client: TestClient, token: str) -> None:
    response = client.post(
        "/admin/login",
        data={"token": token, "csrf_token": csrf_of(client, "/admin/login"), "next": "/admin"},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text[:500]


@pytest.fixture
def browser(client: TestClient, admin_token: str) -> Iterator[TestClient]:
    sign_in(client, admin_token)
    yield client


def field_block(html: str, input_id: str) -> str:
    """The HTML of the form field holding an input (its label, input, hint and errors)."""
    start = html.index(f'id="{input_id}"')
    begin = html.rindex('<div class="field', 0, start)
    return html[begin:html.index("</div>", start)]


def fresh_export(session: Session) -> dict:  # type: ignore[type-arg]
    session.rollback()
    return export_document(session)


# ---- sign-in and the session cookie ----------------------------------------------------------


def test_admin_pages_redirect_to_sign_in(client: TestClient) -> None:
    response = client.get("/admin/builds", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/admin/login?next=/admin/builds"


def test_sign_in_sets_an_httponly_samesite_cookie_scoped_to_admin(
    client: TestClient, admin_token: str
) -> None:
    csrf = csrf_of(client, "/admin/login")
    response = client.post("/admin/login", data={"token": admin_token, "csrf_token": csrf},
                           follow_redirects=False)
    assert response.status_code == 303
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/admin" in cookie
    assert "secure" not in cookie  # plain HTTP in this test
    assert client.get("/admin/builds").status_code == 200


def test_session_cookie_is_secure_over_https(app, admin_token: str) -> None:  # type: ignore[no-untyped-def]
    with TestClient(app, base_url="https://testserver") as client:
        response = client.get("/admin/login")
        assert "secure" in response.headers["set-cookie"].lower()


def test_wrong_token_shows_the_form_again_with_401(client: TestClient) -> None:
    csrf = csrf_of(client, "/admin/login")
    response = client.post("/admin/login", data={"token": "nope", "csrf_token": csrf})
    assert response.status_code == 401
    assert 'id="f-token-error"' in response.text
    assert client.get("/admin", follow_redirects=False).status_code == 303


def test_sign_in_is_rate_limited_per_client(database_url: str, admin_token: str) -> None:
    settings = Settings(database_url=database_url, seed_on_start=False,
                        login_attempts_per_minute=3)
    with TestClient(create_app(settings)) as client:
        csrf = csrf_of(client, "/admin/login")
        statuses = [client.post("/admin/login", data={"token": "bad", "csrf_token": csrf})
                    .status_code for _ in range(3)]
        assert statuses == [401, 401, 401]
        # Over the limit even the right token is refused, so guessing cannot continue.
        limited = client.post("/admin/login", data={"token": admin_token, "csrf_token": csrf},
                              follow_redirects=False)
        assert limited.status_code == 429
        assert "retry-after" in limited.headers


def test_sign_in_redirects_only_inside_admin(client: TestClient, admin_token: str) -> None:
    csrf = csrf_of(client, "/admin/login")
    response = client.post(
        "/admin/login",
        data={"token": admin_token, "csrf_token": csrf, "next": "//evil.example/admin"},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/admin"


def test_sign_out_ends_the_session(browser: TestClient) -> None:
    csrf = csrf_of(browser, "/admin")
    response = browser.post("/admin/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert response.status_code == 303
    assert browser.get("/admin", follow_redirects=False).status_code == 303


def test_revoking_the_token_ends_its_page_sessions(
    browser: TestClient, session: Session
) -> None:
    assert browser.get("/admin").status_code == 200
    revoke_token(session, name="alice")
    assert browser.get("/admin", follow_redirects=False).status_code == 303


def test_the_page_session_does_not_authenticate_the_json_api(browser: TestClient) -> None:
    cookie = browser.cookies.get("tierline_admin")
    assert cookie
    response = browser.get(f"/api/v1/admin/builds/{BUILD}",
                           headers={"Cookie": f"tierline_admin={cookie}"})
    assert response.status_code == 401


# ---- CSRF ------------------------------------------------------------------------------------


def test_forged_login_without_the_sites_token_is_403(client: TestClient, admin_token: str) -> None:
    # A cross-site form: no session cookie (SameSite) and no token it could have read.
    response = client.post("/admin/login", data={"token": admin_token}, follow_redirects=False)
    assert response.status_code == 403
    response = client.post("/admin/login", data={"token": admin_token, "csrf_token": "guess"},
                           follow_redirects=False)
    assert response.status_code == 403
    assert client.get("/admin", follow_redirects=False).status_code == 303


def test_forged_edit_is_403_and_changes_nothing(
    browser: TestClient, session: Session
) -> None:
    before = fresh_export(session)
    for data in ({"name": "pwned", "version": "1"},
                 {"name": "pwned", "version": "1", "csrf_token": "x" * 43}):
        response = browser.post(f"/admin/builds/{BUILD}", data=data)
        assert response.status_code == 403
    response = browser.post(f"/admin/builds/{BUILD}/delete", data={"version": "1"})
    assert response.status_code == 403
    assert fresh_export(session) == before


def test_a_token_from_another_session_is_refused(
    browser: TestClient, app, admin_token: str  # type: ignore[no-untyped-def]
) -> None:
    with TestClient(app) as other:
        foreign = csrf_of(other, "/admin/login")
    response = browser.post(f"/admin/builds/{BUILD}",
                            data={"name": "x", "version": "1", "csrf_token": foreign})
    assert response.status_code == 403


# ---- edit forms ------------------------------------------------------------------------------


def edit_data(browser: TestClient, **changes: str) -> dict[str, str]:
    """The edit form's current values (as a browser would submit them) with changes."""
    html = browser.get(f"/admin/builds/{BUILD}").text
    data = {}
    for name, value in re.findall(r'<input id="[^"]+" name="([^"]+)" value="([^"]*)"', html):
        data[name] = value.replace("&#34;", '"').replace("&amp;", "&")
    for name, body in re.findall(r'<select id="[^"]+" name="([^"]+)"[^>]*>(.*?)</select>', html,
                                 re.S):
        selected = re.search(r'<option value="([^"]*)" selected>', body)
        data[name] = selected.group(1) if selected else ""
    data["version"] = re.search(r'name="version" value="(\d+)"', html).group(1)  # type: ignore[union-attr]
    data["csrf_token"] = CSRF_RE.search(html).group(1)  # type: ignore[union-attr]
    data.update(changes)
    return data


def test_edit_form_shows_the_record(browser: TestClient) -> None:
    html = browser.get(f"/admin/builds/{BUILD}").text
    assert 'value="Test 4x RTX 4090 workstation"' in html
    assert '<option value="pcie" selected>' in html
    assert 'name="version" value="1"' in html


def test_saving_the_form_changes_the_record_everywhere(
    browser: TestClient, session: Session
) -> None:
    response = browser.post(f"/admin/builds/{BUILD}", data=edit_data(browser, power_w="2222"),
                            follow_redirects=False)
    assert response.status_code == 303, response.text[:2000]
    page = browser.get(response.headers["location"]).text
    assert "This is version 2" in page
    stored = {b["slug"]: b for b in fresh_export(session)["builds"]}[BUILD]
    assert stored["power_w"] == 2222
    assert stored["name"] == BUILDS[0]["name"]  # untouched fields kept


def test_unchanged_form_keeps_the_version(browser: TestClient, session: Session) -> None:
    before = fresh_export(session)
    response = browser.post(f"/admin/builds/{BUILD}", data=edit_data(browser),
                            follow_redirects=False)
    assert response.status_code == 303
    assert fresh_export(session) == before


@pytest.mark.parametrize(
    ("name", "value", "input_id"),
    [
        ("power_w", "-5", "f-power-w"),
        ("power_w", "lots", "f-power-w"),
        ("accelerators_per_node", "2.5", "f-accelerators-per-node"),
        ("accelerator", "no-such-gpu", "f-accelerator"),
        ("intra_node_link.kind", "smoke-signals", "f-intra-node-link-kind"),
        ("name", "", "f-name"),
        ("as_of", "1800-01-01", "f-as-of"),
        ("source_url", "javascript:alert(1)", "f-source-url"),
        ("estimated", "no_such_field", None),
    ],
)
def test_field_errors_appear_next_to_the_field_and_nothing_changes(
    browser: TestClient, session: Session, name: str, value: str, input_id: str | None
) -> None:
    before = fresh_export(session)
    response = browser.post(f"/admin/builds/{BUILD}", data=edit_data(browser, **{name: value}))
    assert response.status_code == 422
    html = response.text
    if input_id is None:  # a whole-record rule: shown above the form
        assert "Not saved:" in html and "estimated" in html
    else:
        block = field_block(html, input_id)
        assert f'id="{input_id}-error"' in block, block
        assert 'aria-invalid="true"' in block
    # The submitted value is kept in the form for correction (escaped).
    assert fresh_export(session) == before


def test_model_config_json_errors_are_shown_by_the_config_field(browser: TestClient) -> None:
    html = browser.get("/admin/models/adm-llama-8b").text
    csrf = CSRF_RE.search(html).group(1)  # type: ignore[union-attr]
    data = {"csrf_token": csrf, "version": "1", "name": "x", "params_total": "8030261248",
            "params_active": "8030261248", "source_url": "https://example.com/x",
            "as_of": "2024-07-23", "config": "{not json"}
    response = browser.post("/admin/models/adm-llama-8b", data=data)
    assert response.status_code == 422
    assert 'id="f-config-error"' in field_block(response.text, "f-config")
    data["config"] = '{"model_type": "llama"}'
    response = browser.post("/admin/models/adm-llama-8b", data=data)
    assert response.status_code == 422
    assert "num_hidden_layers" in field_block(response.text, "f-config")


def test_stale_form_is_412_and_keeps_the_entries(browser: TestClient, auth: dict[str, str]) -> None:
    data = edit_data(browser, notes="mine")
    # Someone else saves first (through the API).
    other = browser.patch(f"/api/v1/admin/builds/{BUILD}", json={"notes": "theirs"},
                          headers={**auth, "If-Match": '"1"'})
    assert other.status_code == 200
    response = browser.post(f"/admin/builds/{BUILD}", data=data)
    assert response.status_code == 412
    assert "Someone changed this build" in response.text
    assert ">mine</textarea>" in response.text
    assert browser.get(f"/api/v1/admin/builds/{BUILD}", headers=auth).json()["notes"] == "theirs"


def test_create_page_makes_a_new_record(browser: TestClient) -> None:
    html = browser.get("/admin/create/accelerators").text
    data = {"csrf_token": CSRF_RE.search(html).group(1),  # type: ignore[union-attr]
            "slug": "adm-page-gpu", "name": "Page GPU", "vendor": "Acme", "memory_gb": "48",
            "memory_bandwidth_gbs": "900", "fp16_tflops": "200",
            "source_url": "https://example.com/gpu", "as_of": "2025-01-01",
            "estimated": "fp16_tflops"}
    response = browser.post("/admin/create/accelerators", data=data, follow_redirects=False)
    assert response.status_code == 303, response.text[:1000]
    assert response.headers["location"].startswith("/admin/accelerators/adm-page-gpu")
    # Creating it again names the slug as the problem.
    again = browser.post("/admin/create/accelerators", data=data)
    assert again.status_code == 409
    assert 'id="f-slug-error"' in field_block(again.text, "f-slug")


# ---- delete, audit, restore ------------------------------------------------------------------


def test_delete_then_restore_from_the_audit_page(browser: TestClient, session: Session) -> None:
    original = {b["slug"]: b for b in fresh_export(session)["builds"]}[BUILD]
    data = edit_data(browser)
    response = browser.post(f"/admin/builds/{BUILD}/delete",
                            data={"csrf_token": data["csrf_token"], "version": data["version"]},
                            follow_redirects=False)
    assert response.status_code == 303
    audit = browser.get(response.headers["location"]).text
    assert BUILD not in {b["slug"] for b in fresh_export(session)["builds"]}
    event_id = re.search(r'href="/admin/audit/(\d+)">event', audit).group(1)  # type: ignore[union-attr]
    event_page = browser.get(f"/admin/audit/{event_id}").text
    assert "Restore adm-4x-4090" in event_page
    restore = browser.post(f"/admin/audit/{event_id}/restore",
                           data={"csrf_token": CSRF_RE.search(event_page).group(1)},  # type: ignore[union-attr]
                           follow_redirects=False)
    assert restore.status_code == 303
    restored = {b["slug"]: b for b in fresh_export(session)["builds"]}[BUILD]
    assert restored == original


def test_audit_page_filters_by_slug(browser: TestClient) -> None:
    browser.post(f"/admin/builds/{BUILD}", data=edit_data(browser, notes="audited"))
    html = browser.get("/admin/audit", params={"slug": BUILD, "action": "update"}).text
    rows = re.findall(r"<td>(create|update|delete|restore)</td>", html)
    assert rows == ["update"]
    assert "<td>alice</td>" in html


# ---- import ----------------------------------------------------------------------------------


def import_document_text(notes: str) -> str:
    edited = {**BUILDS[0], "notes": notes}
    new = {**BUILDS[1], "slug": "adm-page-import", "name": "Imported on a page"}
    return yaml.safe_dump({"builds": [edited, new]})


def test_import_preview_shows_the_diff_and_writes_nothing_until_applied(
    browser: TestClient, session: Session
) -> None:
    before = fresh_export(session)
    csrf = csrf_of(browser, "/admin/import")
    preview = browser.post(
        "/admin/import",
        data={"csrf_token": csrf, "action": "preview"},
        files={"file": ("catalog.yaml", import_document_text("from a file"), "application/yaml")},
    )
    assert preview.status_code == 200, preview.text[:2000]
    html = preview.text
    assert "would create 1, update 1" in html
    assert "<code>notes</code>" in html and "from a file" in html
    assert "adm-page-import" in html
    assert fresh_export(session) == before

    version = re.search(r'name="catalog_version" value="(\d+)"', html).group(1)  # type: ignore[union-attr]
    text = re.search(r'<textarea name="text" hidden aria-hidden="true">(.*?)</textarea>', html,
                     re.S).group(1)  # type: ignore[union-attr]
    import html as html_lib

    applied = browser.post("/admin/import", data={
        "csrf_token": CSRF_RE.search(html).group(1),  # type: ignore[union-attr]
        "action": "apply", "catalog_version": version, "text": html_lib.unescape(text)})
    assert applied.status_code == 200
    assert "Imported:" in applied.text
    assert "<code>notes</code>" in applied.text  # the applied changes, field by field
    after = {b["slug"]: b for b in fresh_export(session)["builds"]}
    assert after[BUILD]["notes"] == "from a file"
    assert "adm-page-import" in after


def test_apply_after_the_catalog_changed_shows_a_new_preview(
    browser: TestClient, session: Session, auth: dict[str, str]
) -> None:
    csrf = csrf_of(browser, "/admin/import")
    text = import_document_text("late")
    # previewed at an older catalog version
    browser.patch(f"/api/v1/admin/builds/{BUILD}", json={"notes": "meanwhile"},
                  headers={**auth, "If-Match": '"1"'})
    before = fresh_export(session)
    response = browser.post("/admin/import", data={
        "csrf_token": csrf, "action": "apply", "catalog_version": "0", "text": text})
    assert response.status_code == 409
    assert "changed since your preview" in response.text
    assert fresh_export(session) == before


def test_import_page_lists_errors_and_writes_nothing(
    browser: TestClient, session: Session
) -> None:
    before = fresh_export(session)
    bad = yaml.safe_dump({"builds": [{**BUILDS[0], "power_w": -1}]})
    response = browser.post("/admin/import", data={
        "csrf_token": csrf_of(browser, "/admin/import"), "action": "apply",
        "catalog_version": "1", "text": bad})
    assert response.status_code == 422
    assert "<code>power_w</code>" in response.text
    assert fresh_export(session) == before


def test_import_page_reports_unreadable_documents(browser: TestClient) -> None:
    response = browser.post("/admin/import", data={
        "csrf_token": csrf_of(browser, "/admin/import"), "action": "preview",
        "text": "a: [unclosed"})
    assert response.status_code == 422
    assert "not valid YAML" in response.text


def test_admin_pages_escape_what_admins_typed(browser: TestClient, auth: dict[str, str]) -> None:
    payload = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    body = {**BUILDS[0], "slug": "adm-xss", "name": payload, "notes": payload,
            "failover": payload[:150]}
    assert browser.put("/api/v1/admin/builds/adm-xss", json=body, headers=auth).status_code == 201
    event = browser.get("/api/v1/admin/audit", params={"slug": "adm-xss"},
                        headers=auth).json()["items"][0]
    for url in ("/admin", "/admin/builds", "/admin/builds/adm-xss", f"/admin/audit/{event['id']}",
                "/admin/audit?slug=" + payload):
        html = browser.get(url).text
        assert "<script>alert(1)" not in html, url
        assert "<img src=x" not in html, url


def test_import_page_previews_a_seed_file_with_unquoted_dates(browser: TestClient) -> None:
    from app.config import PROJECT_ROOT

    # The seed file is the list of builds; under `builds:` it is an import document.
    seed = b"builds:\n" + (PROJECT_ROOT / "seed_data" / "builds.yaml").read_bytes()
    assert b"as_of: 20" in seed  # unquoted: YAML reads it as a date, not a string
    preview = browser.post(
        "/admin/import",
        data={"csrf_token": csrf_of(browser, "/admin/import"), "action": "preview"},
        files={"file": ("builds.yaml", seed, "application/yaml")},
    )
    assert preview.status_code == 200, preview.text[:1000]
    assert "Preview (nothing written yet)" in preview.text


def test_import_page_says_where_a_bare_list_of_records_belongs(browser: TestClient) -> None:
    from app.config import PROJECT_ROOT

    seed = (PROJECT_ROOT / "seed_data" / "builds.yaml").read_bytes()  # a bare list
    response = browser.post(
        "/admin/import",
        data={"csrf_token": csrf_of(browser, "/admin/import"), "action": "preview"},
        files={"file": ("builds.yaml", seed, "application/yaml")},
    )
    assert response.status_code == 422
    assert "builds:" in response.text


def test_mixed_build_edit_form_round_trips_and_changes_a_group(
    browser: TestClient, session: Session
) -> None:
    slug = "2x-rtx-3090-1x-rtx-4090-desktop"
    data = _mixed_form(browser, slug)
    assert '"rtx-4090"' in data["accelerators"]
    before = fresh_export(session)
    unchanged = browser.post(f"/admin/builds/{slug}", data=data, follow_redirects=False)
    assert unchanged.status_code == 303, unchanged.text[:1500]
    assert fresh_export(session) == before
    groups = json.loads(data["accelerators"])
    groups[1]["count"] = 2
    changed = browser.post(
        f"/admin/builds/{slug}",
        data={**data, "accelerators": json.dumps(groups), "accelerators_per_node": "4"},
        follow_redirects=False,
    )
    assert changed.status_code == 303, changed.text[:1500]
    stored = {b["slug"]: b for b in fresh_export(session)["builds"]}[slug]
    assert [g["count"] for g in stored["accelerators"]] == [2, 2]


def _mixed_form(browser: TestClient, slug: str) -> dict[str, str]:
    html_text = browser.get(f"/admin/builds/{slug}").text
    data = {}
    for name, value in re.findall(r'<input id="[^"]+" name="([^"]+)" value="([^"]*)"', html_text):
        data[name] = html.unescape(value)
    for name, body in re.findall(r'<select id="[^"]+" name="([^"]+)"[^>]*>(.*?)</select>',
                                 html_text, re.S):
        selected = re.search(r'<option value="([^"]*)" selected>', body)
        data[name] = selected.group(1) if selected else ""
    for name, body in re.findall(r'<textarea id="[^"]+" name="([^"]+)"[^>]*>(.*?)</textarea>',
                                 html_text, re.S):
        data[name] = html.unescape(body)
    data["csrf_token"] = CSRF_RE.search(html_text).group(1)  # type: ignore[union-attr]
    data["version"] = re.search(r'name="version" value="(\d+)"', html_text).group(1)  # type: ignore[union-attr]
    return data


def test_editing_only_the_groups_lets_the_single_card_fields_follow(
    browser: TestClient, session: Session
) -> None:
    # The form shows both forms of the cards; an admin who edits the groups (here: the 4090
    # first, two of it) must not also have to retype "accelerator" and "accelerators_per_node".
    slug = "2x-rtx-3090-1x-rtx-4090-desktop"
    data = _mixed_form(browser, slug)
    groups = json.loads(data["accelerators"])
    groups = [{**groups[1], "count": 2}, groups[0]]
    response = browser.post(f"/admin/builds/{slug}",
                            data={**data, "accelerators": json.dumps(groups)},
                            follow_redirects=False)
    assert response.status_code == 303, response.text[:1500]
    stored = {b["slug"]: b for b in fresh_export(session)["builds"]}[slug]
    assert [(g["accelerator"], g["count"]) for g in stored["accelerators"]] == [
        ("rtx-4090", 2), ("rtx-3090", 2)]


def test_editing_only_the_card_count_of_a_one_group_build_keeps_its_pcie(
    browser: TestClient, session: Session
) -> None:
    slug = "1x-rtx-4090-128gb-ddr5"
    data = _mixed_form(browser, slug)
    before = json.loads(data["accelerators"])
    assert len(before) == 1
    response = browser.post(f"/admin/builds/{slug}", data={**data, "accelerators_per_node": "2"},
                            follow_redirects=False)
    assert response.status_code == 303, response.text[:1500]
    stored = {b["slug"]: b for b in fresh_export(session)["builds"]}[slug]
    assert stored["accelerators"] == [{**before[0], "count": 2}]
