"""The GPU check script (benchmarks/gpu/) on the CPU, so that it cannot rot between GPU runs.

``--cpu-dry-run`` walks the same code as the run on a GPU, the strict stand-in device
(tests/standin.py) in place of CuPy and PyTorch on its CPU (its rows say "not installed"
where PyTorch is missing). The table's verdicts are checked on rows made to agree,
disagree, raise, leave the device or go wrong only at second order.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `benchmarks` is not installed: the checkout's

from table import Row  # tests/table.py, on the path by conftest

from benchmarks.gpu import backend, table

ROWS = ["sin", "concatenate", "linalg.slogdet", "split"]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """One dry run of every stage, on a few rows and small sizes."""
    out = tmp_path_factory.mktemp("gpu-check")
    cmd = [sys.executable, "-m", "benchmarks.gpu.check", "--cpu-dry-run", "--out", str(out),
           "--rows", ",".join(ROWS), "--shards", "2", "--reps", "2",
           "--pytest-args", "tests/test_devices.py -k cpu"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


def test_dry_run_writes_every_file(dry_run):
    out, stdout = dry_run
    names = {p.name for p in out.iterdir()}
    assert {"RESULTS-gpu.md", "results.json", "mlp.log", "table.log", "pytest.log"} <= names
    assert len(names) <= 7  # the device tool brings back 8 files at most, check.log too
    fragment = (out / "RESULTS-gpu.md").read_text()
    assert fragment in stdout  # the report reaches the tool's output tail as well
    for heading in ("### Test suite", "### Primitive table", "### MLP value_and_grad"):
        assert heading in fragment


def test_dry_run_table_checks_every_case_of_the_chosen_rows(dry_run):
    data = json.loads((dry_run[0] / "results.json").read_text())
    expected = table.cases(table.load_rows(), ROWS)
    summary = data["table"]["summary"]
    assert data["table"]["expected_cases"] == len(expected) == summary["cases"] > len(ROWS)
    assert summary["case_counts"] == {"agree": len(expected)}
    assert f"{len(expected)} of {len(expected)} cases agree" in (
        dry_run[0] / "RESULTS-gpu.md").read_text()


def test_dry_run_times_the_mlp_and_runs_pytest(dry_run):
    data = json.loads((dry_run[0] / "results.json").read_text())
    assert list(data["mlp"]) == ["batch 8", "batch 64"]
    for entry in data["mlp"].values():
        systems = entry["systems"]
        for name in ("hand", "funcgrad"):
            assert systems[name]["status"] == "ok", entry["failures"]
            assert systems[name]["median_s"] > 0 and len(systems[name]["samples_s"]) == 2
        assert systems["hand"]["ratio_to_hand"] == 1.0
        torch_ok = systems["torch"]["status"] == "ok"
        assert torch_ok or systems["torch"]["status"] == "not installed"
    counts = data["pytest"]["counts"]
    assert counts["passed"] > 0 and counts["failures"] == counts["errors"] == 0
    assert all("test_devices" in d["test"] for d in data["pytest"]["devices"])
    assert all(stage == "done" for stage in data["stages"].values()), data["stages"]


class Marked(np.ndarray):
    """NumPy data that a row can tell apart from the CPU's: "the device" of these tests."""


def _marked_backend(**changes):
    base = backend.numpy_backend()
    return replace(base, _to_device=lambda a: np.array(a).view(Marked), **changes)


def _on_device(x):
    return isinstance(fg.value_of(x), Marked)


def test_a_row_that_raises_on_the_device_is_reported_not_raised():
    def fun(x):
        if _on_device(x):
            raise TypeError("Unsupported type on the device")
        return fnp.sin(x)

    result = table.check_case(Row("sin", fun), ((3,),), "float64", _marked_backend())
    assert result["status"] == "raise" and result["check"] == "value"
    assert "TypeError: Unsupported type on the device" in result["error"]


def test_a_row_that_differs_on_the_device_disagrees_naming_the_error():
    def fun(x):
        return fnp.sin(x) * (1.001 if _on_device(x) else 1.0)

    result = table.check_case(Row("sin", fun), ((2, 3),), "float64", _marked_backend())
    assert result["status"] == "disagree" and result["check"] == "value"
    assert "max error" in result["error"]


def test_a_result_that_leaves_the_device_disagrees():
    device = _marked_backend(array_types=(Marked,))
    # np.asarray drops the mark: the value comes back as plain NumPy, off "the device".
    to_host_sin = fg.primitive(lambda x: np.sin(np.asarray(x)))
    fg.defvjp(to_host_sin, lambda g, ans, x: g * fnp.cos(x))
    result = table.check_case(Row("sin", to_host_sin), ((3,),), "float64", device)
    assert result["status"] == "disagree" and result["check"] == "value"
    assert "numpy.ndarray, not on the device" in result["error"]


def test_a_row_wrong_only_in_second_derivatives_fails_there():
    prim = fg.primitive(lambda x: np.sin(x))
    # On "the device", the VJP rule adds 0.01 g (x - stop_gradient(x)): zero in value, so
    # the VJP is right, but its derivative is off by 0.01 g.
    fg.defvjp(prim, lambda g, ans, x: g * fnp.cos(x)
              + 0.01 * _on_device(x) * g * (x - fg.stop_gradient(x)))
    fg.defjvp(prim, lambda t, ans, x: t * fnp.cos(x))
    result = table.check_case(Row("sin", prim), ((3,),), "float64", _marked_backend())
    checks = result["checks"]
    assert checks["value"] == checks["vjp"] == checks["jvp"] == "agree", result
    assert checks["rev-rev"] == checks["fwd-rev"] == "disagree", result
    assert result["status"] == "disagree" and result["check"] == "rev-rev"


def test_summary_counts_rows_by_their_worst_case():
    results = [
        {"row": "a", "status": "agree", "check": "", "error": "", "id": "a-1"},
        {"row": "a", "status": "raise", "check": "vjp", "error": "E", "id": "a-2"},
        {"row": "b", "status": "agree", "check": "", "error": "", "id": "b-1"},
        {"row": "c", "status": "disagree", "check": "jvp", "error": "D", "id": "c-1"},
    ]
    summary = table.summarise(results)
    assert summary["row_counts"] == {"raise": 1, "agree": 1, "disagree": 1}
    assert summary["case_counts"] == {"agree": 2, "raise": 1, "disagree": 1}
    failing = {f["row"]: f for f in summary["failing_rows"]}
    assert failing["a"]["cases"] == 1 and failing["a"]["of"] == 2
    assert failing["a"]["error"] == "E" and failing["c"]["check"] == "jvp"


@pytest.mark.parametrize("script", ["check.sh", "fetch_wheels.sh"])
def test_shell_scripts_parse(script):
    path = ROOT / "benchmarks" / "gpu" / script
    done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
