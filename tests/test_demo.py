"""``python -m funcgrad.demo`` runs and prints the right numbers."""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def output():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if "PYTHONPATH" in env else "")
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:funcgrad", "-m", "funcgrad.demo"],
        check=False, capture_output=True, text=True, timeout=60, env=env, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def floats(text: str) -> list[float]:
    return [float(s) for s in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", text)]


def line(output: str, start: str) -> str:
    found = [ln for ln in output.splitlines() if ln.startswith(start)]
    assert found, f"no line starting with {start!r} in:\n{output}"
    return found[0]


def test_gradient_matches_closed_form(output):
    assert floats(line(output, "fg.grad")) == floats(line(output, "closed"))[:5]
    assert floats(line(output, "fg.grad")) == [2.223244, 0.698821, 0.0, 0.698821, 2.223244]
    assert floats(line(output, "max |difference|"))[0] < 1e-12


def test_third_derivative(output):
    fg_value, closed = floats(line(output, "d3/dx3 tanh"))[-2:]
    assert fg_value == closed == -0.565209


def test_jvp_matches_jacobian(output):
    assert floats(line(output, "jvp")) == floats(line(output, "J @ v"))
    assert floats(line(output, "jvp")) == [1.0, 2.718282, 0.416147]


def test_hessian(output):
    section = output.split("== Hessian")[1].split("==")[1].split("\n", 2)[2]
    assert floats(section) == [802.0, -400.0, -400.0, 200.0]


def test_multiple_graphs(output):
    assert "dz/dx on bp_x = 7.0" in output
    assert "gx still on bp_y: True, on bp_x: False" in output
    assert "d(x * dz/dx)/dy on bp_y = 2.0" in output


def test_training_loss_decreases(output):
    losses = [float(m) for m in re.findall(r"^step +\d+ +loss (\d+\.\d+)$", output, re.MULTILINE)]
    assert len(losses) >= 5
    assert all(b < a for a, b in itertools.pairwise(losses))
    assert losses[-1] < losses[0] / 4
    assert re.search(r"training accuracy (9\d|100)%", output)


def test_trace_is_printed(output):
    section = output.split("fg.trace ==")[1]
    assert "Graph: 2 inputs, 1 output, 6 nodes" in section
    for name in ("input", "matmul", "tanh", "power", "sum"):
        assert name in section
