"""Test tiers: CPU tests run everywhere; tests marked `gpu` skip, with the reason, where no GPU is
usable. On a GPU machine set APSP_REQUIRE_GPU=1 so that a missing GPU fails instead of skipping."""
from __future__ import annotations

import os

import numpy as np
import pytest

import apsp


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
