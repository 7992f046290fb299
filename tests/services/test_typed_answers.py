"""The catalog services answer with the API's response models, built once per catalog version."""

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.schemas.accelerator import AcceleratorRead
from app.schemas.build import BuildListItem, BuildRead
from app.schemas.listing import AcceleratorListItem, AcceleratorQuery, BuildQuery, ModelQuery
from app.schemas.measurement import MeasurementListItem, MeasurementQuery, MeasurementRead
from app.schemas.model_profile import ModelListItem, ModelRead
from app.services.accelerators import get_accelerator, list_accelerators, matching_accelerators
from app.services.builds import build_parts, get_build, list_builds, matching_builds
from app.services.measurements import get_measurement, list_measurements, matching_measurements
from app.services.model_profiles import (
    get_model_profile,
    list_model_profiles,
    matching_model_profiles,
)

Lister = Callable[..., Any]

RESOURCES = [
    pytest.param(list_builds, matching_builds, get_build, BuildQuery, BuildListItem, BuildRead,
                 id="builds"),
    pytest.param(list_accelerators, matching_accelerators, get_accelerator, AcceleratorQuery,
                 AcceleratorListItem, AcceleratorRead, id="accelerators"),
    pytest.param(list_model_profiles, matching_model_profiles, get_model_profile, ModelQuery,
                 ModelListItem, ModelRead, id="model_profiles"),
    pytest.param(list_measurements, matching_measurements, get_measurement, MeasurementQuery,
                 MeasurementListItem, MeasurementRead, id="measurements"),
]  # fmt: skip


@pytest.mark.parametrize(("list_page", "matching", "get", "query", "item", "read"), RESOURCES)
def test_list_csv_and_detail_are_the_response_models(
    session: Session,
    list_page: Lister,
    matching: Lister,
    get: Lister,
    query: type[BaseModel],
    item: type[BaseModel],
    read: type[BaseModel],
) -> None:
    page = list_page(session, query=query())
    assert page.items and all(type(i) is item for i in page.items)
    assert all(type(i) is item for i in matching(session, query=query()))
    first = page.items[0]
    assert type(get(session, slug=first.slug)) is read


@pytest.mark.parametrize(("list_page", "matching", "get", "query", "item", "read"), RESOURCES)
def test_a_repeated_read_returns_the_same_object_not_a_new_validation(
    session: Session,
    list_page: Lister,
    matching: Lister,
    get: Lister,
    query: type[BaseModel],
    item: type[BaseModel],
    read: type[BaseModel],
) -> None:
    slug = list_page(session, query=query()).items[0].slug
    assert get(session, slug=slug) is get(session, slug=slug)
    assert list_page(session, query=query()).items[0] is list_page(session, query=query()).items[0]


def test_build_parts_read_the_typed_record(session: Session) -> None:
    build = get_build(session, slug="dgx-h200")
    parts = build_parts(session, slug="dgx-h200")
    assert [(p.accelerator, p.count) for p in parts] == [
        (g.accelerator, g.count) for g in build.accelerators or []
    ]
    assert parts[0].name == "H200 SXM 141GB"  # "NVIDIA " left out
