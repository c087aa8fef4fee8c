"""Every notebook under notebooks/ runs top to bottom, and is stored without outputs.

They run with Graphviz's ``dot`` hidden from ``PATH`` (as on a fresh pip install),
and every graph, gradient flow or replay plan they display must then be a drawing
(an SVG with boxes in it); no cell may print more than 50 lines.  Where ``dot`` is
installed, the notebooks that draw run again with it.  Last, one executed notebook
is rendered to HTML by nbconvert and opened in headless Chromium (skipped when
Chromium is absent): its drawings must be there, and on the screen.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("**/*.ipynb"))
NOTEBOOKS = [p for p in NOTEBOOKS if ".ipynb_checkpoints" not in p.parts]
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOKS]
KERNEL = "funcgrad-test"
MAX_LINES = 50  # a cell printing more is a wall of text, not a story
DRAWN = ("<Graph", "<GradientFlow", "<Plan")  # reprs of what must display as a drawing
# How many drawings each notebook shows at least (without dot).
DRAWINGS = {"graphs_and_the_fold.ipynb": 4, "tour.ipynb": 2}
EXECUTED: dict = {}  # path -> the executed notebook, for the browser test


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A kernel spec running ipykernel on this interpreter, found before any other.

    The user's own ``python3`` spec may point at another Python; this one
    cannot.  Runtime files and IPython's profile go to ``tmp_path``.
    """
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    # The package under test, whether or not it is installed.
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))
    return KERNEL


def test_there_are_notebooks():
    assert NOTEBOOKS


def _without_dot() -> str:
    """``PATH`` less every folder holding a ``dot`` program."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not os.path.exists(os.path.join(d, "dot")))


def _execute(path: pathlib.Path, kernel: str):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    # A notebook that needs an optional package says so in its metadata.
    for package in nb.metadata.get("funcgrad", {}).get("requires", []):
        pytest.importorskip(package, reason=f"{path.name} needs {package}")
    client = nbclient.NotebookClient(
        nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on failure
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    return nb


def _drawings(nb, path: pathlib.Path) -> int:
    """Check that every displayed graph is a drawing, and count them."""
    count = 0
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if not str(data.get("text/plain", "")).startswith(DRAWN):
                continue
            picture = data.get("image/svg+xml") or data.get("text/html", "")
            boxes = len(re.findall(r"""class=["']node["']""", picture))
            assert "<svg" in picture and boxes > 0, (
                f"{path.name}: cell {i} displays {data['text/plain']} without a drawing")
            count += 1
    return count


def _printed_lines(cell) -> int:
    lines = 0
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            lines += len(out.text.splitlines())
        elif out.output_type in ("execute_result", "display_data"):
            data = out.get("data", {})
            if not any(k.startswith("image/") or k == "text/html" for k in data):
                lines += len(str(data.get("text/plain", "")).splitlines())
    return lines


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs_without_dot_and_draws_every_graph(path, kernel, monkeypatch):
    monkeypatch.setenv("PATH", _without_dot())
    nb = _execute(path, kernel)
    EXECUTED[path.name] = nb
    assert _drawings(nb, path) >= DRAWINGS.get(path.name, 0)
    for i, cell in enumerate(nb.cells):
        assert _printed_lines(cell) <= MAX_LINES, (
            f"{path.name}: cell {i} prints {_printed_lines(cell)} lines (at most {MAX_LINES})")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_drawing_notebooks_run_with_dot(name, kernel):
    path = ROOT / "notebooks" / name
    nb = _execute(path, kernel)
    assert _drawings(nb, path) >= DRAWINGS[name]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed")
def test_a_notebooks_drawings_show_in_a_browser(kernel, monkeypatch, tmp_path):
    nbconvert = pytest.importorskip("nbconvert")
    image = pytest.importorskip("matplotlib.image")
    path = ROOT / "notebooks" / "graphs_and_the_fold.ipynb"
    nb = EXECUTED.get(path.name)
    if nb is None:
        monkeypatch.setenv("PATH", _without_dot())
        nb = _execute(path, kernel)
    page, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    html = tmp_path / "notebook.html"
    html.write_text(page)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2600"]
    shot = tmp_path / "notebook.png"
    subprocess.run([_chromium(), *flags, f"--screenshot={shot}", html.as_uri()],
                   check=True, capture_output=True, timeout=120)
    dom = subprocess.run([_chromium(), *flags, "--dump-dom", html.as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    # The drawings are in the page the browser built, each with its boxes and arrows.
    drawings = re.findall(r'<svg[^>]*class="funcgrad-drawing".*?</svg>', dom, flags=re.DOTALL)
    assert len(drawings) >= DRAWINGS[path.name]
    assert all("<rect" in d and "<text" in d for d in drawings)
    # And on the screen: the first graph's input boxes (their blue) are in the picture.
    pixels = (image.imread(str(shot))[..., :3] * 255).round().reshape(-1, 3)
    blue = (pixels == (0xdb, 0xe8, 0xf6)).all(axis=1).sum()
    assert pixels.shape[0] > 1_000_000 and blue > 500, blue


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_stored_without_outputs(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, (
                f"{path.name}: cell {i} has outputs; clear them before committing"
            )
