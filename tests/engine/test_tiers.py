"""Tier of a build from its shape and links (tiers.py)."""

from __future__ import annotations

import pytest

from app.engine import BuildSpec, IntraNodeLink, derive_tier

from .shapes import CLUSTER, DESKTOP, H200, M2_ULTRA


@pytest.mark.parametrize(
    ("build", "tier"),
    [
        (DESKTOP, "desktop"),
        (BuildSpec("Mac Studio", M2_ULTRA, intra_node_link=IntraNodeLink("unified", None)),
         "desktop"),
        (BuildSpec("DGX", H200, 1, 8, IntraNodeLink("nvswitch", 450)), "dgx"),
        (CLUSTER, "cluster"),
        # Rack-scale NVLink (GB200 NVL72 style) is a cluster even when described as one domain.
        (BuildSpec("NVL72", H200, 18, 4, IntraNodeLink("nvswitch", 900),
                   scale_up_domain_accelerators=72), "cluster"),
    ],
)
def test_tier_follows_the_build_shape(build, tier):
    assert derive_tier(build) == tier
