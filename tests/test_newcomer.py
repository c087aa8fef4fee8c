"""The papercuts a newcomer meets in the first hour (issue 21), each kept fixed."""

from __future__ import annotations

import inspect
import pathlib
import re
import subprocess

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors, node, primitive

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_error_class_is_importable_from_funcgrad():
    classes = [c for m in (errors, node, primitive) for _, c in inspect.getmembers(m, inspect.isclass)
               if issubclass(c, fg.FuncgradError) and c.__module__ == m.__name__]
    assert len(classes) >= 11
    for c in classes:
        assert getattr(fg, c.__name__) is c, c.__name__
    for name in ("FuncgradValueError", "FuncgradTypeError", "FuncgradIndexError",
                 "FuncgradStateError"):
        assert issubclass(getattr(fg, name), fg.FuncgradError)


def test_every_error_class_the_docs_name_exists():
    text = (ROOT / "docs" / "errors.md").read_text()
    for name in set(re.findall(r"`fg\.(\w+Error)`", text)):
        assert issubclass(getattr(fg, name), fg.FuncgradError), name


def test_no_markdown_table_is_broken_by_a_blank_line():
    for page in sorted((ROOT / "docs").glob("**/*.md")):
        lines = page.read_text().splitlines()
        for i in range(1, len(lines) - 1):
            if not lines[i].strip() and lines[i - 1].startswith("|") and \
                    lines[i + 1].startswith("|"):
                raise AssertionError(f"{page.name}:{i + 1}: a blank line inside a table")


def test_no_numpy_scalar_reprs_in_examples():
    # np.True_ in an example is noise to a reader: examples print plain True/False.
    files = [*(ROOT / "docs").glob("**/*.md"), *(ROOT / "funcgrad").glob("**/*.py"),
             ROOT / "README.md"]
    bad = [f.name for f in files if re.search(r"np\.(True|False)_", f.read_text())]
    assert not bad, bad


def test_at_works_on_arrays_as_on_nodes():
    idx = np.array([0, 2, 0])
    np.testing.assert_array_equal(fnp.at(fnp.zeros(3))[idx].add(1.0), [2.0, 0.0, 1.0])
    with pytest.raises(AttributeError):  # NumPy's own array has no .at: fnp.at is the way
        fnp.zeros(3).at  # noqa: B018

    def f(x, v):  # the same code on a Node and on a constant array
        return fnp.sum(fnp.at(x)[idx].add(v) ** 2) + fnp.sum(fnp.at(fnp.zeros(3))[1].set(v))

    x = np.array([1.0, 2.0, 3.0])
    gx, gv = fg.grad(f, argnums=(0, 1))(x, 0.5)
    y = x.copy()
    np.add.at(y, idx, 0.5)
    np.testing.assert_allclose(gx, 2 * y)
    np.testing.assert_allclose(gv, 2 * (y[0] * 2 + y[2]) + 1.0)
    np.testing.assert_array_equal(fnp.at(x)[1:].get(), [2.0, 3.0])


def test_index_add_says_what_it_takes():
    with pytest.raises(fg.FuncgradTypeError, match=r"shape must be a tuple of ints.*fnp.at"):
        fnp.index_add(np.zeros(3), 1, 5.0)  # the shape of index_update, mistaken
    np.testing.assert_array_equal(fnp.index_add(np.array([1.0, 2.0]), np.array([0, 0]), [2]),
                                  [3.0, 0.0])


def test_scipy_special_on_a_node_is_named_and_points_to_fg_nn():
    special = pytest.importorskip("scipy.special")
    with pytest.raises(fg.NodeConversionError) as info:
        fg.grad(lambda x: special.expit(x))(1.0)
    assert str(info.value).startswith("scipy.special.expit was called")
    assert "fg.nn.sigmoid" in str(info.value) and "funcgrad.scipy.special" in str(info.value)
    with pytest.raises(fg.NodeConversionError, match=r"scipy\.special\.erf .*"
                       r"funcgrad\.scipy\.special\.erf"):
        fg.grad(lambda x: special.erf(x))(1.0)
    with pytest.raises(fg.NodeConversionError, match=r"^numpy\.sin .*fnp\.sin"):
        fg.grad(lambda x: np.sin(x))(1.0)


def test_the_demo_picture_stays_out_of_git():
    done = subprocess.run(["git", "check-ignore", "-q", "demo.png"], cwd=ROOT, check=False)
    if done.returncode == 128:
        pytest.skip("not a git checkout")
    assert done.returncode == 0, "demo.png (the README's first command writes it) is not ignored"
    assert "--plot demo.png" in (ROOT / "README.md").read_text()


def test_the_decision_regions_panel_is_labelled(monkeypatch, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from funcgrad import demo

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    x, y = demo.spirals(60, seed=0)
    demo.plot(plt, str(tmp_path / "d.png"), demo.init_params(0), [1.0, 0.5], (x, y), (x, y), 0.5)
    left = figures[0].axes[0]
    assert left.get_xlabel() and left.get_ylabel()
    handles, labels = left.get_legend_handles_labels()
    held = handles[labels.index("held out (hollow)")]
    class0 = handles[labels.index("class 0")]
    assert held.get_facecolor().size == 0 or held.get_facecolor()[0][3] == 0  # hollow
    assert not np.allclose(held.get_edgecolor()[0][:3], class0.get_facecolor()[0][:3])
    monkeypatch.undo()
    plt.close(figures[0])
