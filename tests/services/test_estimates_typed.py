"""The estimate use cases answer with the API's response models (issue 16)."""

from sqlalchemy.orm import Session

from app.engine import CostAssumptions
from app.schemas.estimate import EstimateRequest
from app.schemas.estimate_answer import BatchOut, EstimateOut
from app.schemas.model_profile import ModelListItem
from app.schemas.recommend import ModelFitOut
from app.services.estimates import model_fits_for_build, run_batch, run_estimate

COSTS = CostAssumptions()
CATALOG = {"build": "4x-rtx-4090-workstation", "model": "llama-3-1-70b"}
INLINE = {
    "build": {
        "name": "2x 24 GB",
        "accelerators_per_node": 2,
        "accelerator": {
            "name": "card",
            "memory_gb": 24,
            "memory_bandwidth_gbs": 936,
            "fp16_tflops": 71,
        },
    },
    "model": "llama-3-1-8b",
}


def test_a_catalog_estimate_is_an_estimate_out_memoised_per_catalog_version(
    session: Session,
) -> None:
    request = EstimateRequest.model_validate(CATALOG)
    answer = run_estimate(session, request=request, costs=COSTS)
    assert type(answer) is EstimateOut
    assert answer.build.slug == "4x-rtx-4090-workstation" and answer.build.tier == "desktop"
    assert run_estimate(session, request=request, costs=COSTS) is answer


def test_an_inline_estimate_is_an_estimate_out_with_a_null_slug(session: Session) -> None:
    answer = run_estimate(session, request=EstimateRequest.model_validate(INLINE), costs=COSTS)
    assert type(answer) is EstimateOut
    assert answer.build.slug is None and answer.build.accelerator_count == 2
    assert answer.model.slug == "llama-3-1-8b"
    # 2 cards: losing one leaves one (the failover case is typed too).
    assert [case.accelerators_left for case in answer.failover] == [1]


def test_a_batch_is_a_batch_out_with_answers_and_problems_in_order(session: Session) -> None:
    requests = [
        EstimateRequest.model_validate(CATALOG),
        EstimateRequest.model_validate({**CATALOG, "build": "no-such-build"}),
        EstimateRequest.model_validate(INLINE),
    ]
    batch = run_batch(session, requests=requests, costs=COSTS)
    assert type(batch) is BatchOut
    assert [(r.index, r.ok) for r in batch.results] == [(0, True), (1, False), (2, True)]
    assert type(batch.results[0].result) is EstimateOut
    problem = batch.results[1].error
    assert batch.results[1].result is None and problem is not None
    assert problem["status"] == 404
    assert [e["field"] for e in problem["errors"]] == ["1.build"]


def test_model_fits_for_build_are_typed_largest_model_first(session: Session) -> None:
    fits = model_fits_for_build(
        session, slug="2x-dgx-h200-cluster", precision="fp8", context_tokens=4096, costs=COSTS
    )
    assert fits and all(type(f) is ModelFitOut for f in fits)
    assert all(type(f.model) is ModelListItem for f in fits)
    totals = [f.model.params_total for f in fits]
    assert totals == sorted(totals, reverse=True)
