"""The vendored calibration data matches the team's shared copy, when it is beside us."""

from pathlib import Path

import pytest
from conftest import CALIBRATION, REPO

SHARED = REPO.parent / "shared" / "calibration"


@pytest.mark.parametrize("name", ["field-data.yaml", "lab-galera.yaml"])
def test_vendored_calibration_is_current(name):
    if not SHARED.is_dir():
        pytest.skip("no ../shared/calibration beside this checkout")
    assert (CALIBRATION / name).read_bytes() == (SHARED / name).read_bytes(), (
        f"copy {SHARED / name} to {CALIBRATION / name}"
    )


def test_vendored_calibration_exists():
    assert {p.name for p in Path(CALIBRATION).glob("*.yaml")} == {
        "field-data.yaml",
        "lab-galera.yaml",
    }
