"""rank_at_slo: every catalog build at its SLO operating point, cheapest per token first."""

from sqlalchemy.orm import Session

from app.caching import snapshot
from app.engine import CostAssumptions, Workload
from app.engine.serving import ServiceLevel, ServingWorkload
from app.services.model_profiles import find_model_profile
from app.services.serving import rank_at_slo


def test_ranked_builds_meet_the_slo_cheapest_per_million_output_tokens_first(
    session: Session,
) -> None:
    snap = snapshot(session)
    model = find_model_profile(snap, "llama-3-1-70b").spec
    slo = ServiceLevel(ttft_s_max=2.0, tokens_per_s_per_user_min=20, concurrent_users=1000)
    ranked = rank_at_slo(
        snap,
        model=model,
        workload=Workload(precision="fp8"),
        serving=ServingWorkload(1024, 1024),
        slo=slo,
        costs=CostAssumptions(),
    )
    assert len(ranked) >= 5
    priced = [
        r.at.point.usd_per_million_output_tokens
        for r in ranked
        if r.at.point.usd_per_million_output_tokens is not None
    ]
    assert priced == sorted(priced)
    for item in ranked:
        point = item.at.point
        assert point.ttft_s <= 2.0 and point.tokens_per_s_per_user >= 20
        assert item.at.copies_needed is not None
        assert item.at.copies_needed * point.concurrency >= 1000
    slugs = {r.build.slug for r in ranked}
    assert "1x-rtx-4090-desktop" not in slugs  # 70B at FP8 does not fit in 24 GB
