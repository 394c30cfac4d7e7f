"""The vendored calibration data and FORMAT.md match the team's shared copies, when they are
beside us."""

from pathlib import Path

import pytest
from conftest import CALIBRATION, REPO

SHARED = REPO.parent / "shared" / "calibration"


@pytest.mark.parametrize(
    "name", ["README.md", "field-data.yaml", "lab-galera.yaml", "rtt-by-distance.csv"]
)
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
        "lab-runs.yaml",  # this project's own lab runs, not a copy
        "lab-bootstrap.yaml",  # this project's runs of a bootstrap after a site's loss
    }


def test_vendored_format_contract_is_current():
    shared = REPO.parent / "shared" / "FORMAT.md"
    if not shared.is_file():
        pytest.skip("no ../shared/FORMAT.md beside this checkout")
    # Extend, never break: the shared contract word for word, then this repository's additions.
    ours = (REPO / "FORMAT.md").read_text(encoding="utf-8")
    assert ours.startswith(shared.read_text(encoding="utf-8")), f"copy {shared} into FORMAT.md"
    assert "## Extensions in this repository" in ours[len(shared.read_text(encoding="utf-8")) :]
