"""``python -m funcgrad.demo`` keeps its promises: it trains, checks, converges and draws.

The demo runs once, as a user runs it (a subprocess, with ``--plot``); the
tests read what it printed and the PNG it saved.  Where a printed number is
funcgrad's own, the test checks it independently (closed forms in NumPy, the
picture's pixels) or in a way that a wrong derivative would fail.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import re
import struct
import subprocess
import sys
import time
import zlib

import numpy
import pytest

from funcgrad import demo

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_demo(*args: str, prelude: str | None = None) -> tuple[subprocess.CompletedProcess, float]:
    """Run the demo in a fresh interpreter, warnings from funcgrad as errors."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if "PYTHONPATH" in env else "")
    if prelude is None:
        command = ["-m", "funcgrad.demo", *args]
    else:  # run the module after `prelude`, as `-m` would
        code = (f"{prelude}\nimport runpy, sys\nsys.argv = ['funcgrad.demo', *{list(args)!r}]\n"
                "runpy.run_module('funcgrad.demo', run_name='__main__', alter_sys=True)")
        command = ["-c", code]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:funcgrad", *command],
        check=False, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
    )
    return done, time.perf_counter() - start


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    png = tmp_path_factory.mktemp("demo") / "demo.png"
    done, seconds = run_demo("--plot", str(png))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, done.stderr, png, seconds


@pytest.fixture(scope="module")
def output(ran):
    return ran[0]


def floats(text: str) -> list[float]:
    return [float(s) for s in re.findall(r"[-+]?\d+\.?\d*(?:e[-+]?\d+)?", text)]


def line(output: str, start: str) -> str:
    found = [ln for ln in output.splitlines() if ln.startswith(start)]
    assert found, f"no line starting with {start!r} in:\n{output}"
    return found[0]


def test_runs_quickly_without_warnings_and_shows_a_progress_bar(ran):
    _, stderr, _, seconds = ran
    assert seconds < 60, f"the demo took {seconds:.0f} s; it promises under a minute"
    assert "Warning" not in stderr and "Traceback" not in stderr, stderr
    # tqdm's bar (on stderr), finished, with the loss in its postfix
    assert re.search(r"training: 100%.*\| 500/500 \[.*loss=0\.\d{4}\]", stderr), stderr[-500:]


def test_accuracy_meets_the_promise(output):
    train, test, promised = floats(line(output, "train accuracy"))
    assert promised == 100 * demo.PROMISED_ACCURACY >= 95.0
    assert test >= promised and train >= promised


def test_training_reduces_the_loss(output):
    first, last, _ = floats(line(output, "loss "))
    assert first > 1.0  # about log(3) at the start: the network knows nothing
    assert last < first / 100


def test_gradient_check_of_the_model(output):
    assert "fg.check_grads(loss, params, order=2), reverse and forward mode: passed" in output
    first = line(output, "1st order")
    assert floats(first)[-1] < 1e-6
    # funcgrad's directional derivative and the finite difference agree to 6 digits
    grad_v, numeric = floats(first.split("relative error")[0])[-2:]
    assert grad_v == pytest.approx(numeric, rel=1e-6) and abs(numeric) > 1e-3
    assert floats(line(output, "2nd order"))[-1] < 1e-6


def test_newton_reaches_the_optimum(output):
    norms = [float(m) for m in re.findall(r"^step \d+ .*\|grad\| (\S+)$", output, re.MULTILINE)]
    assert 3 <= len(norms) <= 13
    assert all(b < a for a, b in itertools.pairwise(norms))
    before, after, steps = floats(line(output, "|grad|"))
    assert (before, after, steps) == (norms[0], norms[-1], len(norms) - 1)
    assert after < 1e-10 * before
    # superlinear convergence: each of the last steps shrinks |grad| by a larger factor
    ratios = [b / a for a, b in itertools.pairwise(norms)][-3:]
    assert ratios[0] > ratios[1] > ratios[2] and ratios[2] < 1e-3
    cg_vs_dense = floats(line(output, "  (CG on fg.hvp"))[-1]
    assert cg_vs_dense < 1e-10


def test_newton_optimum_by_the_closed_form_gradient(capsys):
    """The w Newton returns zeroes the logistic gradient, computed here in plain NumPy."""
    w, norms = demo.newton_logistic(seed=0)
    capsys.readouterr()
    x, labels, penalty = demo.logistic_problem(0)
    p = 1 / (1 + numpy.exp(-(x @ w)))
    gradient = x.T @ (p - labels) / len(x) + penalty * w
    assert numpy.linalg.norm(gradient) < 1e-10
    assert norms[-1] < 1e-10 * norms[0]
    assert numpy.linalg.norm(w) > 1.0  # a real optimum, away from the start w = 0


def test_the_rest_of_the_library(output):
    d3, closed = floats(line(output, "d3/dx3 tanh"))[-2:]
    t = numpy.tanh(0.5)
    assert d3 == closed == round((1 - t**2) * (6 * t**2 - 2), 6)
    assert "dz/dx = 7.0 on bp_x, and its d(x dz/dx)/dy = 2.0 on bp_y" in output


def _png_chunks(data: bytes):
    """(type, payload) of each chunk of a PNG, each CRC checked."""
    pos = 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + payload) == crc, f"bad CRC in the {kind!r} chunk"
        yield kind, payload
        pos += 12 + length


def test_plot_is_a_valid_png_of_the_model(ran):
    _, _, png, _ = ran
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks = list(_png_chunks(data))
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert 800 <= width <= 3000 and 400 <= height <= 2000
    assert len(data) > 20_000

    # Its pixels: the three class colours of the points and their lighter regions.
    import matplotlib.image  # the test extra has it: the demo needed it to draw

    image = matplotlib.image.imread(str(png))[..., :3]
    assert image.shape[:2] == (height, width)
    pixels = (image.reshape(-1, 3) * 255).round()
    for colour in ("1f77b4", "ff7f0e", "2ca02c"):
        rgb = numpy.array([int(colour[i:i + 2], 16) for i in (0, 2, 4)])
        strong = numpy.all(numpy.abs(pixels - rgb) <= 8, axis=1).mean()
        light = numpy.all(numpy.abs(pixels - (0.25 * rgb + 0.75 * 255)) <= 8, axis=1).mean()
        assert strong > 1e-3, f"few points of colour #{colour}"
        assert light > 0.02, f"no decision region of colour #{colour}"


def test_plot_without_matplotlib_names_the_extra(tmp_path):
    png = tmp_path / "never.png"
    done, _ = run_demo("--plot", str(png), prelude="import sys; sys.modules['matplotlib'] = None")
    assert done.returncode == 2
    assert "matplotlib" in done.stderr and "'.[viz]'" in done.stderr
    assert done.stdout == ""  # it said so before training, not after
    assert not png.exists()


def test_exits_nonzero_below_the_promised_accuracy():
    """Too few steps to learn the spirals: the demo runs through, then says so and fails."""
    done, _ = run_demo("--steps", "20")
    assert done.returncode == 1
    _, test, promised = floats(line(done.stdout, "train accuracy"))
    assert test < promised
    assert f"FAILED: test accuracy {test:.1f}% is below the promised {promised:.1f}%" in done.stderr


def test_spirals_are_deterministic_and_interleaved():
    points, labels = demo.spirals(600, seed=0)
    again, _ = demo.spirals(600, seed=0)
    other, _ = demo.spirals(600, seed=1)
    assert numpy.array_equal(points, again) and not numpy.allclose(points, other)
    assert numpy.bincount(labels).tolist() == [200, 200, 200]
    # Interleaved: along a ray from the centre, the arms alternate (0, 1, 2 repeat in
    # some order), which no straight cut of the plane could separate.
    ray = numpy.abs(numpy.arctan2(points[:, 1], points[:, 0])) < 0.15
    order = labels[ray][numpy.argsort(numpy.hypot(*points[ray].T))]
    changes = numpy.count_nonzero(numpy.diff(order))
    assert changes >= 3
