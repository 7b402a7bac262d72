"""Test tiers: CPU tests run everywhere; tests marked `gpu` skip, with the reason, where no GPU is
usable. On a GPU machine set APSP_REQUIRE_GPU=1 so that a missing GPU fails instead of skipping."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import apsp

# Property tests: a fixed, bounded example set in CI (CI=true), a wider random search elsewhere.
settings.register_profile("ci", max_examples=40, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def gpu_status() -> tuple[bool, str]:
    facts = apsp.info()
    if facts["devices"]:
        return True, ""
    return False, f"no usable GPU: {facts['why_no_devices']}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    usable, why = gpu_status()
    if usable:
        return
    if os.environ.get("APSP_REQUIRE_GPU") == "1":
        raise pytest.UsageError(f"APSP_REQUIRE_GPU=1 but {why}")
    skip = pytest.mark.skip(reason=why)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request: pytest.FixtureRequest) -> str:
    """The engine a test runs on: every engine-level test runs once per engine, and the "cuda"
    case carries the gpu marker, so it skips (with the reason) where no GPU is usable."""
    return request.param
