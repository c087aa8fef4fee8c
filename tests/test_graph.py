"""fg.trace and fg.Graph: the graph a computation builds, listed and drawn."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import graph as graph_module


def mlp(w, x):
    return fnp.sum(fnp.tanh(x @ w) * x[:, :1] + fnp.exp(-x @ w))


def name(node):
    return "input" if node.primitive is None else node.primitive.name


@pytest.fixture
def g():
    return fg.trace(mlp, np.ones((3, 2)), np.arange(12.0).reshape(4, 3) / 10)


def test_inputs_outputs_and_nodes(g):
    assert isinstance(g, fg.Graph)
    assert len(g.inputs) == 2 and len(g.outputs) == 1
    assert all(type(n) is fg.Node for n in g.inputs + g.outputs + g.nodes)
    assert isinstance(g.nodes, tuple) and isinstance(g.inputs, tuple)
    assert g.outputs[0] is g.nodes[0]  # the output has the highest rank
    assert set(g.inputs) <= set(g.nodes)
    assert g.inputs[0].shape == (3, 2) and g.outputs[0].shape == ()
    assert sorted(name(n) for n in g) == sorted(
        ["input", "input", "matmul", "tanh", "getitem", "multiply", "negative", "matmul",
         "exp", "add", "sum"]
    )


def test_nodes_are_in_the_folds_order(g):
    ranks = [n.rank for n in g.nodes]
    assert ranks == sorted(ranks, reverse=True)
    for a, b in zip(g.nodes, g.nodes[1:]):
        if a.rank == b.rank:
            assert a.serial < b.serial  # ties in creation order
    position = {n: i for i, n in enumerate(g.nodes)}
    for n in g.nodes:  # a node is folded before the nodes it was computed from
        assert all(position[p] > position[n] for p in n.inputs if p in position)


def test_len_and_iter(g):
    assert len(g) == len(g.nodes) == 11
    assert list(g) == list(g.nodes)
    assert list(iter(g)) == list(g)


def test_graph_is_immutable(g):
    for attr in ("inputs", "outputs", "nodes", "backprop_id"):
        with pytest.raises(AttributeError):
            setattr(g, attr, ())
    with pytest.raises(AttributeError):
        g.extra = 1
    with pytest.raises(TypeError):
        g.nodes[0] = None


def test_str_has_one_line_per_node(g):
    text = str(g)
    rows = [line for line in text.splitlines() if re.match(r"\s+%\d+\s", line)]
    assert len(rows) == len(g)
    assert [r.split()[0] for r in rows] == [f"%{k}" for k in range(len(g))]
    for n in g:
        assert name(n) in text
    assert "(3, 2)" in text and "float64" in text
    assert text.splitlines()[0] == "Graph: 2 inputs, 1 output, 11 nodes"
    assert text.splitlines()[-1].split() == ["outputs:", f"%{len(g) - 1}"]


def test_str_lists_inputs_by_id_in_program_order():
    g = fg.trace(lambda x, y: fnp.sin(x * y), np.ones(2), np.ones(2))
    assert str(g).splitlines()[1:] == [
        "  id  primitive  shape  dtype    inputs",
        "  %0  input      (2,)   float64",
        "  %1  input      (2,)   float64",
        "  %2  multiply   (2,)   float64  %0, %1",
        "  %3  sin        (2,)   float64  %2",
        "  outputs: %3",
    ]


def test_constants_and_options_are_shown():
    g = fg.trace(lambda x: fnp.sum(x * 2.0, axis=0, keepdims=True) + np.ones(3), np.ones((2, 3)))
    text = str(g)
    assert "%0, 2.0" in text
    assert "axis=0, keepdims=True" in text
    assert "const(3,)" in text


def test_to_dot_is_graphviz_source(g):
    dot = g.to_dot()
    assert dot.startswith('digraph "funcgrad" {') and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    declared = set(re.findall(r"^\s+(n\d+) \[label=", dot, re.MULTILINE))
    assert declared == {f"n{k}" for k in range(len(g))}
    edges = re.findall(r"^\s+(n\d+) -> (n\d+);", dot, re.MULTILINE)
    assert len(edges) == sum(len(n.inputs) for n in g)
    assert {a for e in edges for a in e} <= declared
    for n in g:
        assert name(n) in dot
    assert dot.count("peripheries=2") == len(g.outputs)


def test_to_dot_quotes_labels():
    assert fg.graph.dot_str('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


# Every character that DOT source cannot hold as it is, and a few that need escaping.
HOSTILE = "".join(map(chr, range(32))) + '\x7f\x85"\\{}[];<>&\ud800 \u2028 end\\'
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def _hostile_graph():
    weird = fg.primitive(lambda x: x * 2.0)
    weird.name = "w" + HOSTILE
    fg.defvjp(weird, lambda g, ans, x: g * 2.0)
    return fg.trace(lambda x: fnp.sum(weird(x)), np.ones(2))


def _check_dot_syntax(dot: str) -> None:
    """Quoted strings close on their line, hold no raw control character, and nothing
    outside them holds a quote or a control character (DOT's lexical rules)."""
    for line in dot.splitlines():
        for q in _QUOTED.findall(line):
            assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in q), repr(q)
            q.encode("utf-8")  # no lone surrogate
        rest = _QUOTED.sub("", line)
        assert '"' not in rest and not any(ord(c) < 32 for c in rest), repr(line)


def test_to_dot_is_valid_for_any_name():
    g = _hostile_graph()
    dot = g.to_dot(name="graph" + HOSTILE)
    _check_dot_syntax(dot)
    assert "\\\\x00" in dot  # NUL shown as text, its backslash escaped
    assert 'label="%1 w\\\\x00\\\\x01' in dot  # the label begins as the name does


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_to_dot_with_any_name_renders_with_graphviz():
    dot = _hostile_graph().to_dot(name=HOSTILE)
    svg = subprocess.run(
        ["dot", "-Tsvg"], input=dot.encode("utf-8"), capture_output=True, check=True
    ).stdout
    assert b"<svg" in svg and b"\\x00" in svg


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_to_dot_renders_with_graphviz(g):
    svg = subprocess.run(
        ["dot", "-Tsvg"], input=g.to_dot(), capture_output=True, text=True, check=True
    ).stdout
    assert "<svg" in svg


def test_repr_html_is_a_table(g):
    page = g._repr_html_()
    assert page.startswith("<div>") and page.endswith("</div>")
    assert page.count("<tr>") == len(g) + 1  # a header and one row per node
    assert "<table" in page and "</table>" in page
    assert "matmul" in page and "%0" in page


def test_repr_html_escapes_and_is_cut_when_long(monkeypatch):
    prim = fg.primitive(lambda x: x + 1)
    prim.name = "<b>&"
    fg.defvjp(prim, lambda g, ans, x: g)
    g = fg.trace(lambda x: prim(prim(prim(x))), np.ones(1))
    assert "&lt;b&gt;&amp;" in g._repr_html_() and "<b>&" not in g._repr_html_()
    monkeypatch.setattr(graph_module, "HTML_MAX_ROWS", 2)
    assert "2 more nodes" in g._repr_html_()


def test_repr_is_short(g):
    assert repr(g) == "<Graph: 2 inputs, 1 output, 11 nodes>"


def test_svg_without_graphviz_is_funcgrads_own_drawing(monkeypatch, g):
    monkeypatch.setattr(shutil, "which", lambda cmd: None)
    svg = g._repr_svg_()
    assert svg.startswith("<svg") and svg.count("class='node'") == len(g)
    bundle = g._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/svg+xml"}
    assert bundle["image/svg+xml"] == svg and svg in bundle["text/html"]
    with pytest.raises(fg.FuncgradStateError, match="dot program"):
        g.to_svg(engine="dot")
    with pytest.raises(fg.FuncgradValueError, match="engine"):
        g.to_svg(engine="neato")


def test_svg_with_graphviz(monkeypatch, g):
    # A stand-in for the graphviz package and the dot program.
    calls = []

    class Source:
        def __init__(self, source):
            self.source = source

        def pipe(self, format, encoding):
            calls.append((self.source, format))
            return "<svg>drawn</svg>"

    monkeypatch.setitem(sys.modules, "graphviz", types.SimpleNamespace(Source=Source))
    monkeypatch.setattr(shutil, "which", lambda cmd: "/usr/bin/dot")
    assert g._repr_svg_() == "<svg>drawn</svg>"
    assert calls == [(g.to_dot(), "svg")]
    bundle = g._repr_mimebundle_()
    assert bundle["image/svg+xml"] == "<svg>drawn</svg>"
    assert "<svg>drawn</svg>" in bundle["text/html"] and "<table" in bundle["text/html"]
    assert len(calls) == 2  # one dot run per display
    monkeypatch.setattr(graph_module, "SVG_MAX_NODES", 3)
    assert "class='node'" in g._repr_svg_()  # too large for dot: funcgrad's layout
    assert g.to_svg(engine="dot") == "<svg>drawn</svg>"  # unless asked for


def test_svg_failure_falls_back(monkeypatch, g):
    class Source:
        def __init__(self, source):
            pass

        def pipe(self, format, encoding):
            raise subprocess.CalledProcessError(1, "dot")

    monkeypatch.setitem(sys.modules, "graphviz", types.SimpleNamespace(Source=Source))
    monkeypatch.setattr(shutil, "which", lambda cmd: "/usr/bin/dot")
    assert "class='node'" in g._repr_svg_()  # dot failed: funcgrad's own layout
    with pytest.raises(subprocess.CalledProcessError):
        g.to_svg(engine="dot")


def test_ipython_displays_html(g):
    formatters = pytest.importorskip("IPython.core.formatters")
    data, _ = formatters.DisplayFormatter().format(g)
    assert "<table" in data["text/html"]
    assert data["text/plain"] == repr(g)


def test_pytrees_and_several_outputs():
    g = fg.trace(lambda d: {"a": d["x"] * 2, "b": (d["x"][0], 1.0)}, {"x": np.arange(3.0)})
    assert len(g.inputs) == 1
    assert sorted(name(o) for o in g.outputs) == ["getitem", "multiply"]


def test_an_unused_input_is_still_an_input():
    g = fg.trace(lambda x, y: fnp.sin(x), np.ones(2), np.ones(3))
    assert len(g.inputs) == 2 and len(g) == 3
    assert g.inputs[1] in g.nodes


def test_constant_output_has_no_output_nodes():
    g = fg.trace(lambda x: np.ones(2), np.ones(2))
    assert g.outputs == () and len(g) == 1
    assert "outputs:" in str(g)


def test_the_graph_can_be_folded():
    g = fg.trace(lambda x: fnp.sum(x * x), np.array([1.0, 2.0]))
    grads = fg.backprop(g.outputs, g.inputs, backprop_id=g.backprop_id)
    np.testing.assert_array_equal(grads[g.inputs[0]], [2.0, 4.0])


def test_trace_of_a_gradient():
    g = fg.trace(fg.grad(lambda x: fnp.sum(fnp.sin(x))), np.ones(2))
    assert "cos" in str(g)
    assert len(g.outputs) == 1


def test_trace_inside_grad_sees_its_own_graph_only():
    seen = []

    def f(x):
        inner = fg.trace(lambda y: fnp.exp(y) * x, x)
        seen.append(inner)
        return fnp.sum(fg.value_of(inner.outputs[0]))

    fg.grad(f)(np.ones(2))  # the traced result is taken out by value: no gradient
    inner = seen[0]
    assert [name(n) for n in inner] == ["multiply", "exp", "require_grad"]
    assert "outer(2,)" in str(inner)  # x is a constant of the traced graph


def test_graph_of_a_hand_built_graph():
    with fg.backprop_scope("bp") as bp:
        x = fg.require_grad(np.array(3.0), bp)
        y = x * x + x
        g = fg.Graph.of([y], [x], bp)
    assert [name(n) for n in g] == ["add", "multiply", "input"]
    assert g.backprop_id is bp
    with pytest.raises(TypeError):
        fg.Graph.of([1.0], [x], bp)


def test_trace_takes_integer_arguments_as_data():
    # Labels, a mask and a Python int count are data: constants, not inputs.
    def loss(w, labels, mask, k):
        logits = fnp.tanh(w * k)
        return fnp.sum(logits[np.arange(2), labels] * mask)

    w = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    labels = np.array([2, 0])
    mask = np.array([True, False])
    g = fg.trace(loss, w, labels, mask, 3)
    assert len(g.inputs) == 1 and g.inputs[0].shape == (2, 3)
    np.testing.assert_allclose(fg.value_of(g.outputs[0]), np.tanh(0.9))
    gw = fg.backprop(g.outputs, g.inputs, backprop_id=g.backprop_id)[g.inputs[0]]
    expected = np.zeros((2, 3))
    expected[0, 2] = 3 * (1 - np.tanh(0.9) ** 2)
    np.testing.assert_allclose(gw, expected, rtol=1e-15)
    np.testing.assert_allclose(fg.grad(loss)(w, labels, mask, 3), expected, rtol=1e-15)
    only_data = fg.trace(lambda i: i * 2, np.arange(3))
    assert len(only_data.inputs) == 0 and len(only_data.outputs) == 0


def test_a_gradient_with_respect_to_integer_data_is_refused():
    with pytest.raises(TypeError, match="dtype int"):
        fg.grad(lambda x, i: fnp.sum(x[i]), argnums=1)(np.ones(3), np.array([0, 2]))
    with pytest.raises(TypeError, match="dtype int"):
        fg.jvp(lambda i: i * 2.0, (np.arange(3),), (np.ones(3),))
    with pytest.raises(fg.FuncgradError):
        fg.vjp(lambda i: i * 2.0, np.array([True]))


def test_indices_read_as_written():
    g = fg.trace(lambda x: x[1:, ::2] + x[..., :1][:2, None, 0], np.ones((3, 4)))
    text = str(g)
    assert "%0, (1:, ::2)" in text and "(..., :1)" in text and "(:2, None, 0)" in text


def test_identity_function():
    g = fg.trace(lambda x: x, np.ones(2))
    assert len(g) == 1 and g.outputs == g.inputs
    assert str(g).splitlines()[-1] == "  outputs: %0"


def test_graph_checks_its_fields():
    x = fg.require_grad(np.ones(2))
    with pytest.raises(TypeError, match=r"nodes\[1\]"):
        fg.Graph((x,), (x,), (x, "not a node"))
