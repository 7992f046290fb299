"""/compare without a model says which model judged the engine rows, and lets the user pick."""

from fastapi.testclient import TestClient

from ._html import parse

BUILDS = "4x-rtx-4090-workstation,dgx-h200"


def test_without_a_model_page_and_json_name_the_default_model(web: TestClient) -> None:
    api = web.get("/api/v1/compare", params={"builds": BUILDS}).json()
    assert api["model"]["given"] is False
    assert api["model"]["name"] in api["model"]["judged_by"]
    assert "no model given" in api["model"]["judged_by"]
    note = parse(web.get("/compare", params={"builds": BUILDS}).text).one(class_="story-model")
    assert api["model"]["name"] in note.text() and "No model chosen" in note.text()
    assert note.one("a").attrs["href"] == "#f-model"


def test_the_model_select_picks_another_and_the_note_goes(web: TestClient) -> None:
    doc = parse(web.get("/compare", params={"builds": BUILDS}).text)
    select = doc.one("select", id="f-model")
    assert "llama-3-1-70b" in [o.attrs.get("value") for o in select.find_all("option")]
    params = {"builds": BUILDS, "model": "llama-3-1-70b"}
    api = web.get("/api/v1/compare", params=params).json()
    assert api["model"]["given"] is True and api["model"]["slug"] == "llama-3-1-70b"
    assert "no model given" not in api["model"]["judged_by"]
    picked = parse(web.get("/compare", params=params).text)
    assert picked.find(class_="story-model") is None
    # The empty choice still names the default it stands for, not the picked model.
    empty = picked.one("select", id="f-model").find_all("option")[0].text()
    assert "DeepSeek-V3" in empty and api["model"]["name"] not in empty
