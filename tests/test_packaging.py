"""The package says true things about itself: lower bounds, license, typing marker."""

from __future__ import annotations

import pathlib
import re

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MINIMUM = ROOT / ".ci" / "minimum-versions.txt"


def _lower_bounds(requirements: list[str]) -> dict[str, str]:
    bounds = {}
    for req in requirements:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)\s*", req)
        assert m, f"requirement {req!r} should be 'name>=version' (a tested lower bound)"
        bounds[m.group(1).lower()] = m.group(2)
    return bounds


def _pins() -> dict[str, str]:
    pins = {}
    for line in MINIMUM.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def _same_version(a: str, b: str) -> bool:
    pad = lambda v: [int(p) for p in v.split(".")] + [0] * (3 - len(v.split(".")))
    return pad(a) == pad(b)


def test_every_required_dependency_is_pinned_at_its_lower_bound_for_ci():
    bounds, pins = _lower_bounds(PYPROJECT["project"]["dependencies"]), _pins()
    assert set(bounds) == set(pins), (bounds, pins)
    for name, version in bounds.items():
        assert _same_version(version, pins[name]), (name, version, pins[name])


def test_ci_runs_the_suite_at_the_minimum_versions():
    script = (ROOT / ".ci" / "run").read_text()
    assert "minimum-versions.txt" in script and "pytest" in script


def test_license_is_an_spdx_string_with_its_file():
    assert PYPROJECT["project"]["license"] == "MIT"
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]


def test_the_package_is_marked_typed():
    assert (ROOT / "funcgrad" / "py.typed").exists()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["funcgrad"]


@pytest.mark.parametrize("line", [ln for ln in (ROOT / "README.md").read_text().splitlines()
                                  if "pip install" in ln])
def test_readme_install_lines_work_from_a_checkout(line):
    # funcgrad is not on an index: every install of it is an editable install of '.'
    for m in re.finditer(r"pip install ([^`#&;]*)", line):
        args = m.group(1).split()
        if any("funcgrad" in a or not (a.startswith(("-", ".", "'.")) or "==" in a)
               for a in args):
            raise AssertionError(f"README installs funcgrad from an index: {line!r}")
