"""Test tiers: CPU tests run everywhere; tests marked `gpu` skip, with the reason, where no GPU is
usable. On a GPU machine set APSP_REQUIRE_GPU=1 so that a missing GPU fails instead of skipping,
and so does any other skip of a `gpu` test (a missing torch, CuPy or notebook runner), except
for hardware the machine may lack: a second GPU, or compute capability 9.0."""
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


# The only reasons a `gpu` test may skip under APSP_REQUIRE_GPU=1: hardware, not software.
HARDWARE_SKIPS = ("needs 2 GPUs", "needs compute capability 9.0")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and "gpu" in item.keywords and os.environ.get("APSP_REQUIRE_GPU") == "1"
            and not hasattr(report, "wasxfail")  # an xfail names a known failure: not a skip
            and not any(ok in str(report.longrepr) for ok in HARDWARE_SKIPS)):
        report.outcome = "failed"
        report.longrepr = f"APSP_REQUIRE_GPU=1 but this gpu test skipped: {report.longrepr}"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request: pytest.FixtureRequest) -> str:
    """The engine a test runs on: every engine-level test runs once per engine, and the "cuda"
    case carries the gpu marker, so it skips (with the reason) where no GPU is usable."""
    return request.param
