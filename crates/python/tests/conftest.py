"""Shared helpers of the Python package's tests (run by scripts/test.sh)."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def shared_dir():
    """`../shared` next to the repository; from a git worktree elsewhere,
    the main checkout's `/work/shared` (the fallback core's tests use)."""
    for candidate in (REPO.parent / "shared", Path("/work/shared")):
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture
def shared():
    d = shared_dir()
    if d is None:
        pytest.skip("../shared not found next to the repository")
    return d
