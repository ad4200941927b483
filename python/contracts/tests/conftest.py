from __future__ import annotations

import os
from pathlib import Path

import pytest


def locate_testdata() -> Path:
    """proto/testdata: from DEX_TESTDATA_DIR (Bazel), else found from this file."""
    configured = os.environ.get("DEX_TESTDATA_DIR")
    if configured:
        return Path(configured).resolve()
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "proto" / "testdata"
        if candidate.is_dir():
            return candidate
    raise RuntimeError("proto/testdata not found; set DEX_TESTDATA_DIR")


@pytest.fixture(scope="session")
def testdata() -> Path:
    return locate_testdata()
