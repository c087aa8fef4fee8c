"""funcgrad's own drawings (funcgrad/drawing.py): graphs, plans and gradient flow as SVG.

The layout is checked by its geometry (every edge points down, no two boxes of
a row overlap, a crossing that a reordering removes is removed), the SVG by
parsing it as XML, the gradient-flow view against ``fg.grad`` and by the marks
of a NaN, an Inf and a zero gradient, and the condensed drawing of a large
graph by its size and what it says.
"""

from __future__ import annotations

import itertools
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import drawing

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and float(root.get("width")) > 0
    return root


def nodes_of(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def texts(node: ET.Element) -> list[str]:
    return [t.text for t in node.iter(f"{SVG}text")]


def shape_of(node: ET.Element) -> ET.Element:
    return next(e for e in node if e.tag in (f"{SVG}rect", f"{SVG}polygon"))


def test_layers_are_longest_paths_and_cycles_are_refused():
    assert drawing.layers_of(5, [(0, 2), (1, 2), (2, 3), (0, 3), (4, 4 - 1)]) == [0, 0, 1, 2, 0]
    with pytest.raises(ValueError, match="cycle"):
        drawing.layers_of(2, [(0, 1), (1, 0)])


def _crossings(lay: drawing.Layout, edges) -> int:
    count = 0
    for (a, b), (c, d) in itertools.combinations(edges, 2):
        (xa, ya), (xb, _), (xc, yc), (xd, _) = (lay.centres[i] for i in (a, b, c, d))
        if ya == yc and len({a, b, c, d}) == 4 and (xa - xc) * (xb - xd) < 0:
            count += 1
    return count


def test_layout_geometry():
    # Two rows wired crosswise in their given order: a reordering removes every crossing.
    boxes = [drawing.Box([name]) for name in ("a", "b", "c", "long label d", "e", "f")]
    edges = [(0, 3), (1, 2), (2, 4), (3, 5), (0, 5)]
    lay = drawing.layout(boxes, edges)
    assert _crossings(lay, edges) == 0
    for u, v in edges:
        assert lay.centres[u][1] < lay.centres[v][1]  # every edge points down
    rows: dict = {}
    for i, (x, y) in enumerate(lay.centres):
        rows.setdefault(y, []).append((x - boxes[i].width / 2, x + boxes[i].width / 2))
    for spans in rows.values():
        spans.sort()
        assert all(r1 <= l2 for (_, r1), (l2, _) in itertools.pairwise(spans))
    assert all(0 < x < lay.width and 0 < y < lay.height for x, y in lay.centres)
    # The edge 0 -> 5 spans two rows: it bends through a point of the row between.
    assert len(lay.routes[4]) == 3


def test_a_graph_draws_each_node_and_edge():
    g = fg.trace(lambda w, x: fnp.sum(fnp.tanh(x @ w) ** 2), np.ones((3, 2)), np.ones((4, 3)))
    root = parse(g.to_svg(engine="funcgrad"))
    found = nodes_of(root)
    assert len(found) == len(g)
    labels = {texts(n)[0] for n in found}
    assert {"%0 input", "%1 input", "%2 matmul", "%3 tanh"} <= labels
    edges = sum(1 for n in g for p in n.inputs if p in set(g.nodes))
    assert len([p for p in root.iter(f"{SVG}path") if p.get("marker-end")]) == edges
    out = next(n for n in found if texts(n)[0].endswith("sum"))
    assert len([e for e in out if e.tag == f"{SVG}rect"]) == 2  # the output: doubly outlined


def test_labels_are_escaped():
    prim = fg.primitive(lambda x: x + 1)
    prim.name = "<b>&\"'"
    fg.defvjp(prim, lambda g, ans, x: g)
    svg = fg.trace(lambda x: prim(x), np.ones(1)).to_svg(engine="funcgrad")
    assert "<b>&" not in svg
    assert "%1 <b>&\"'" in [texts(n)[0] for n in nodes_of(parse(svg))]


def _where_sqrt(x):
    # |x| as sqrt(x * x): at 0 sqrt's slope is inf, and x * x's rule makes inf * 0 = NaN.
    # (where(x > 0, sqrt(x), 0) is no trap: a zero cotangent times inf is 0.)
    return fnp.sum(fnp.sqrt(x * x))


def test_gradient_flow_marks_a_nan_node():
    x = np.array([0.0, 4.0])
    flow = fg.trace(_where_sqrt, x).with_gradients()
    (inp,) = flow.graph.inputs
    sqrt = next(n for n in flow.graph if n.primitive and n.primitive.name == "sqrt")
    assert flow.status(inp) == "nan" and np.isnan(flow.norm(inp))
    assert flow.status(sqrt) == "finite" and flow.norm(sqrt) == pytest.approx(2 ** 0.5)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(flow.gradients[inp], fg.grad(_where_sqrt)(x))
    node = next(n for n in nodes_of(parse(flow.to_svg())) if texts(n)[0] == "%0 input")
    assert shape_of(node).get("fill") == "#d62728" and float(shape_of(node).get("stroke-width")) >= 3
    assert "|g| NaN" in texts(node)
    assert "1 nan" in repr(flow) and "NaN" in str(flow).splitlines()[2]


def test_gradient_flow_marks_inf_zero_and_none():
    def f(x, unused):
        return fnp.sum(fnp.sqrt(x)) + 0.0 * fnp.sum(fnp.exp(x))

    flow = fg.trace(f, np.array([0.0, 1.0]), np.ones(2)).with_gradients()
    x, unused = flow.graph.inputs
    exp = next(n for n in flow.graph if n.primitive and n.primitive.name == "exp")
    assert (flow.status(x), flow.status(unused), flow.status(exp)) == ("inf", "none", "zero")
    marks = {texts(n)[0]: n for n in nodes_of(parse(flow.to_svg()))}
    assert shape_of(marks["%0 input"]).get("fill") == "#9467bd"
    assert shape_of(marks["%1 input"]).get("stroke-dasharray")
    zero = next(n for k, n in marks.items() if k.endswith(" exp"))
    assert "|g| 0" in texts(zero) and shape_of(zero).get("stroke-dasharray")


def test_gradient_flow_equals_the_folds_gradients_and_shades_by_norm():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4))

    def deep(x):
        for _ in range(6):
            x = fnp.tanh(x @ w * 3.0)
        return fnp.sum(x)

    x = rng.standard_normal(4)
    flow = fg.trace(deep, x).with_gradients()
    np.testing.assert_allclose(flow.gradients[flow.graph.inputs[0]], fg.grad(deep)(x))
    for n in flow.graph:
        g = flow.gradients[n]
        assert flow.norm(n) == pytest.approx(np.linalg.norm(np.ravel(g)), rel=1e-12)
    shades = {texts(n)[0]: shape_of(n).get("fill") for n in nodes_of(parse(flow.to_svg()))}
    big = max(flow.graph, key=flow.norm)
    small = min(flow.graph, key=flow.norm)
    assert len(set(shades.values())) > 3
    assert shades[next(k for k in shades if k.startswith(f"%{_id(flow, big)} "))] == "#005a32"
    assert shades[next(k for k in shades if k.startswith(f"%{_id(flow, small)} "))] == "#ffffcc"


def _id(flow, node) -> int:
    return flow.graph._program()[1][node.serial]


def test_gradient_flow_of_a_gradient_with_seeds():
    # The graph of fg.grad(f) has a vector output: seed it to see its own backward flow.
    f = fg.grad(lambda x: fnp.sum(fnp.sin(x) ** 2))
    x = np.array([0.3, -1.2])
    g = fg.trace(f, x)
    flow = g.with_gradients([np.ones(2)])
    hess_row_sums = fg.hessian(lambda x: fnp.sum(fnp.sin(x) ** 2))(x).sum(axis=0)
    np.testing.assert_allclose(flow.gradients[g.inputs[0]], hess_row_sums)
    with pytest.raises(ValueError):
        g.with_gradients()  # a vector output needs seeds, as for fg.backprop


def test_a_large_graph_is_condensed_quickly():
    def loop(x):
        for _ in range(700):
            x = fnp.tanh(x * 1.01 + 0.1)
        return fnp.sum(x)

    g = fg.trace(loop, np.ones(3))
    assert len(g) > 2000
    start = time.perf_counter()
    svg = g._repr_svg_()
    assert time.perf_counter() - start < 10
    root = parse(svg)
    found = nodes_of(root)
    assert 5 <= len(found) <= 20
    labels = [texts(n)[0] for n in found]
    assert any(s.startswith("repeated 698 times: the 3 layers above") for s in labels), labels
    assert "condensed" in svg


def test_an_irregular_huge_graph_gets_a_summary(monkeypatch):
    monkeypatch.setattr(drawing, "MAX_NODES", 4)
    monkeypatch.setattr(drawing, "MAX_CONDENSED", 2)
    g = fg.trace(lambda x: fnp.sum(fnp.cos(fnp.sin(x) * x + x)), np.ones(2))
    svg = g.to_svg(engine="funcgrad")
    assert "too large to draw" in svg and ">sin<" in svg
    parse(svg)
    flow_svg = g.with_gradients().to_svg()
    assert "too large to draw" in flow_svg and "finite gradients" in flow_svg
    parse(flow_svg)


def test_a_plan_draws_itself():
    f = fg.replay(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)))
    f(np.ones(3))
    plan = f.plans[0]
    root = parse(plan.to_svg())
    assert len(nodes_of(root)) == len(plan) + len(plan.inputs)
    assert "<svg" in plan._repr_html_() and "<table" in plan._repr_html_()
    assert plan._repr_svg_() == plan.to_svg()


def test_scale_colours():
    assert drawing.scale_colour(-1.0) == "#ffffcc" and drawing.scale_colour(2.0) == "#005a32"
    assert drawing.scale_colour(0.5) not in ("#ffffcc", "#005a32")


def test_a_large_gradient_flow_is_condensed_with_its_nan_marked():
    def loop(x):
        for _ in range(400):
            x = fnp.tanh(x * 1.01 + 0.1)
        d = x - 5  # below 0: the masked branch divides by 0, and its rule makes 0 / 0
        return fnp.sum(fnp.where(x > 5, d / fnp.maximum(d, 0.0), 0.0))  # NaN slope

    with np.errstate(divide="ignore", invalid="ignore"):  # the masked branch's 0 / 0
        flow = fg.trace(loop, np.ones(3)).with_gradients()
    assert len(flow.graph) > 1000
    found = {texts(n)[0]: n for n in nodes_of(parse(flow.to_svg()))}
    assert len(found) < 20
    repeat = next(n for k, n in found.items() if k.startswith("repeated 398 times"))
    assert shape_of(repeat).get("fill") == "#d62728" and "|g| NaN" in texts(repeat)
    assert shape_of(found["divide"]).get("stroke-dasharray")  # a zero gradient, above the NaN
    assert shape_of(found["sum"]).get("fill") not in ("#d62728", "#e6e6e6")
