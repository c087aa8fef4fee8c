"""``trace`` and ``Graph``: look at a computation as the fold sees it (layer 6).

``trace(fun, *args)`` runs ``fun`` once on the leaves of a fresh graph and
returns the :class:`Graph` it built: an immutable value holding the input and
output Nodes and every Node between them, sorted as the backward fold visits
them.  A Graph prints as a table, writes itself as Graphviz DOT, draws itself
as SVG (with Graphviz, or with funcgrad's own layout where Graphviz is not
installed: :mod:`funcgrad.drawing`), shows as that drawing in Jupyter, and draws
its gradient flow (:meth:`Graph.with_gradients`).

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> g = fg.trace(lambda x: fnp.sum(fnp.sin(x) * x), numpy.ones(3))
>>> [n.primitive.name if n.primitive else 'input' for n in g]
['sum', 'multiply', 'sin', 'input']
>>> print(g)
Graph: 1 input, 1 output, 4 nodes
  id  primitive  shape  dtype    inputs
  %0  input      (3,)   float64
  %1  sin        (3,)   float64  %0
  %2  multiply   (3,)   float64  %1, %0
  %3  sum        ()     float64  %2
  outputs: %3
"""

from __future__ import annotations

import html
import math
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import numpy

from . import drawing, tree
from . import numpy as fnp
from .backprop import backprop, between
from .combinators import trace_call
from .errors import FuncgradStateError, FuncgradTypeError, FuncgradValueError
from .node import DEFAULT_BACKPROP_ID, BackpropId, Node

# Beyond these sizes a display would be unreadable or slow (Graphviz lays out
# thousands of nodes in minutes): the HTML table is cut, and the drawing is
# funcgrad's own, condensed (see funcgrad.drawing).
HTML_MAX_ROWS = 500
SVG_MAX_NODES = 300


def _fold_order(nodes: Any) -> NodeTuple:
    # The backward fold's order (backprop.backprop): highest rank first, ties
    # in creation order.
    return NodeTuple(sorted(nodes, key=lambda n: (-n.rank, n.serial)))


class NodeTuple(tuple):
    """A tuple of Nodes whose ``in``, ``index`` and ``count`` go by identity.

    A Node's ``==`` is elementwise (as an array's), so a plain tuple's ``x in
    nodes`` would compare values; here it asks whether ``x`` is one of them.
    """

    __slots__ = ()

    def __contains__(self, x: object) -> bool:
        return any(n is x for n in self)

    def index(self, x: object, start: int = 0, stop: int = sys.maxsize) -> int:
        for i in range(*slice(start, stop).indices(len(self))):
            if self[i] is x:
                return i
        raise ValueError(f"{short_text(x)} is not one of these nodes")

    def count(self, x: object) -> int:
        return sum(n is x for n in self)


def _node_tuple(seq: Any, what: str) -> NodeTuple:
    seq = NodeTuple(seq)
    for i, n in enumerate(seq):
        if type(n) is not Node:
            raise FuncgradTypeError(f"Graph {what}[{i}] must be a Node, got {type(n).__name__}")
    return seq


def short_text(x: Any) -> str:
    """A few characters describing an argument that is not a Node of the graph."""
    if type(x) is Node:
        return f"outer{x.shape}"  # a Node of another graph: a constant here
    if isinstance(x, slice):  # indices read as they were written: x[1:, ::2]
        text = ":".join("" if v is None else short_text(v) for v in (x.start, x.stop, x.step))
        return text[:-1] if x.step is None else text
    if x is Ellipsis:
        return "..."
    if isinstance(x, tuple):
        return "(" + ", ".join(short_text(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    shape = getattr(x, "shape", None)
    if shape is not None and shape != ():
        return f"const{tuple(shape)}"
    text = repr(x.item() if shape == () and hasattr(x, "item") else x)
    return text if len(text) <= 24 else text[:21] + "..."


@attrs.frozen(eq=False, repr=False)
class Graph:
    """An immutable computation graph: what :func:`trace` returns.

    ``inputs`` and ``outputs`` are tuples of Nodes; ``nodes`` holds every Node
    between them (inputs included) in the backward fold's order -- highest
    rank first, ties in creation order -- and is what ``len()`` counts and
    iteration yields.  The listings (``str()``, :meth:`to_dot`, the Jupyter
    table) read top-down like a program instead: inputs first, then each node
    after the nodes it uses, numbered ``%0, %1, ...`` in that order.

    ``backprop_id`` names the graph, so its nodes can be folded again:

    >>> import numpy, funcgrad as fg
    >>> g = fg.trace(lambda x: (x * x).sum(), numpy.array([1.0, 2.0]))
    >>> fg.backprop(g.outputs, g.inputs, backprop_id=g.backprop_id)[g.inputs[0]]
    array([2., 4.])
    """

    inputs: tuple = attrs.field(converter=lambda s: _node_tuple(s, "inputs"))
    outputs: tuple = attrs.field(converter=lambda s: _node_tuple(s, "outputs"))
    nodes: tuple = attrs.field(converter=lambda s: _fold_order(_node_tuple(s, "nodes")))
    backprop_id: BackpropId = DEFAULT_BACKPROP_ID

    @classmethod
    def of(
        cls, outputs: Sequence[Node], inputs: Sequence[Node], backprop_id: BackpropId | None = None
    ) -> Graph:
        """The Graph of the nodes on ``backprop_id`` between ``outputs`` and ``inputs``.

        For graphs built by hand with :func:`fg.require_grad`:

        >>> import numpy, funcgrad as fg
        >>> x = fg.require_grad(numpy.array(3.0))
        >>> len(fg.Graph.of([x * x + x], [x]))
        3
        """
        bp = DEFAULT_BACKPROP_ID if backprop_id is None else backprop_id
        inputs = _node_tuple(inputs, "inputs")
        outputs = _node_tuple(outputs, "outputs")
        targets = {n.serial: n for n in inputs}
        found = {n.serial: n for n in between(list(outputs), targets, bp)}
        found.update(targets)  # an input the outputs do not use is still an input
        return cls(inputs, outputs, found.values(), bp)

    # -- the collection ---------------------------------------------------
    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __contains__(self, x: object) -> bool:
        """Whether ``x`` is one of the graph's nodes (by identity, not value)."""
        return x in self.nodes

    def __repr__(self) -> str:
        return f"<{self._summary()}>"

    def _summary(self) -> str:
        def count(k: int, word: str) -> str:
            return f"{k} {word}" if k == 1 else f"{k} {word}s"

        return (
            f"Graph: {count(len(self.inputs), 'input')}, {count(len(self.outputs), 'output')}, "
            f"{count(len(self.nodes), 'node')}"
        )

    # -- listings ---------------------------------------------------------
    def _program(self) -> tuple[list[Node], dict[int, int]]:
        """Nodes in program order (inputs, then by creation) and their ids by serial."""
        seen = {n.serial for n in self.inputs}
        order = list(dict.fromkeys(self.inputs))  # an input passed twice is listed once
        order += sorted((n for n in self.nodes if n.serial not in seen), key=lambda n: n.serial)
        return order, {n.serial: k for k, n in enumerate(order)}

    def _rows(self) -> Iterator[tuple[int, Node, str, str, str, str, list[str]]]:
        """``(id, node, primitive, shape, dtype, inputs, in-graph input ids)`` per node."""
        order, ids = self._program()
        inputs = {n.serial for n in self.inputs}
        for k, n in enumerate(order):
            if n.serial in inputs:
                yield k, n, "input", str(n.shape), str(n.dtype), "", []
                continue
            args, edges = [], []
            for a in n.args:
                if type(a) is Node and a.serial in ids:
                    args.append(f"%{ids[a.serial]}")
                    edges.append(ids[a.serial])
                else:
                    args.append(short_text(a))
            # Options left at None/False (axis=None, keepdims=False) are noise here.
            kw = (n.kwargs or {}).items()
            args += [f"{key}={short_text(v)}" for key, v in kw if v is not None and v is not False]
            yield k, n, n.primitive.name, str(n.shape), str(n.dtype), ", ".join(args), edges

    def _output_ids(self) -> list[int]:
        _, ids = self._program()
        return [ids[o.serial] for o in self.outputs if o.serial in ids]

    def _marked_rows(self) -> Iterator[tuple[tuple, bool, bool]]:
        """``(row, is an input, is an output)`` for each row of :meth:`_rows`."""
        outs = set(self._output_ids())
        n_inputs = len(dict.fromkeys(self.inputs))  # inputs come first in program order
        for row in self._rows():
            yield row, row[0] < n_inputs, row[0] in outs

    def __str__(self) -> str:
        table = [("id", "primitive", "shape", "dtype", "inputs")]
        table += [(f"%{k}", p, s, d, i) for k, _, p, s, d, i, _ in self._rows()]
        lines = [self._summary(), *_columns(table)]
        lines.append("  outputs: " + ", ".join(f"%{k}" for k in self._output_ids()))
        return "\n".join(lines)

    def to_dot(self, name: str = "funcgrad") -> str:
        """Graphviz DOT source of the graph (render it with ``dot -Tsvg``).

        Inputs are shaded, outputs doubly outlined; an arrow runs from each
        node to every node that uses it.

        >>> import numpy, funcgrad as fg
        >>> print(fg.trace(lambda x: -x, numpy.ones(2)).to_dot())
        digraph "funcgrad" {
          rankdir=TB;
          node [shape=box, style="rounded,filled", fillcolor=white, fontname="Helvetica", fontsize=10];
          n0 [label="%0 input\\n(2,) float64", fillcolor="#dbe8f6"];
          n1 [label="%1 negative\\n(2,) float64", peripheries=2];
          n0 -> n1;
        }
        """
        lines = [
            f"digraph {dot_str(name)} {{",
            "  rankdir=TB;",
            (
                '  node [shape=box, style="rounded,filled", fillcolor=white, '
                'fontname="Helvetica", fontsize=10];'
            ),
        ]
        edges = []
        for (k, _, prim, shape, dtype, _, uses), is_input, is_output in self._marked_rows():
            attrs_ = [f"label={dot_str(f'%{k} {prim}' + chr(10) + f'{shape} {dtype}')}"]
            if is_input:
                attrs_.append('fillcolor="#dbe8f6"')
            if is_output:
                attrs_.append("peripheries=2")
            lines.append(f"  n{k} [{', '.join(attrs_)}];")
            edges += [f"  n{u} -> n{k};" for u in uses]
        lines += edges
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- drawings -----------------------------------------------------------
    def _boxes(self, looks: Callable[[int, Node], dict] | None = None) -> tuple[list, list]:
        """One :class:`drawing.Box` per node (program order) and the edges ``(user, used)``."""
        boxes, edges = [], []
        for (k, node, prim, shape, dtype, _, uses), is_input, is_output in self._marked_rows():
            style: dict = {"fill": "#dbe8f6"} if is_input else {}
            style["double"] = is_output
            lines = [f"%{k} {prim}", f"{shape} {dtype}"]
            if looks is not None:
                extra = looks(k, node)
                lines += extra.pop("lines", [])
                style.update(extra)
            boxes.append(drawing.Box(lines, title=f"%{k} {prim} {shape} {dtype}", **style))
            edges += [(u, k) for u in uses]
        return boxes, edges

    def _condensed_svg(self, flow: GradientFlow | None = None) -> str:
        """A drawing of a graph too large to draw node by node (see :func:`drawing.condense`);
        with ``flow``, each box shaded by the worst gradient among its nodes."""
        rows = list(self._rows())
        kinds = [r[2] for r in rows]
        outs = set(self._output_ids())
        special = [r[2] == "input" or r[0] in outs for r in rows]
        edges = [(u, r[0]) for r in rows for u in r[6]]
        groups, gedges, hidden, member = drawing.condense_members(kinds, edges, special)
        title = self._summary() if flow is None else _flow_title(flow)
        if len(groups) > drawing.MAX_CONDENSED:
            return _summary_card(title, kinds, edges, flow)
        nodes_of: list[list[Node]] = [[] for _ in groups]
        for v, gi in enumerate(member):
            nodes_of[gi].append(rows[v][1])
        boxes = [_group_box(group, nodes, flow) for group, nodes in zip(groups, nodes_of,
                                                                        strict=True)]
        note = (f"condensed: nodes of one layer and primitive drawn as one box"
                f"{f', {hidden} nodes in repeated layers hidden' if hidden else ''}"
                f"{'; each box shows its worst gradient' if flow is not None else ''}")
        legend = [*(flow._legend() if flow is not None else ()), drawing.legend_note(note)]
        return drawing.render(boxes, gedges, title=title, legend=legend)

    def to_svg(self, engine: str | None = None) -> str:
        """The graph drawn as an SVG document.

        ``engine='funcgrad'`` lays it out in pure Python (:mod:`funcgrad.drawing`):
        nothing to install.  ``engine='dot'`` renders :meth:`to_dot` with
        Graphviz (the ``graphviz`` package and its ``dot`` program).  The
        default uses Graphviz when it is installed and the graph is small,
        funcgrad's layout otherwise.  Graphs of more than
        ``drawing.MAX_NODES`` nodes are condensed: one box per primitive and
        layer, repeated blocks of layers shown once (or, beyond that, a
        summary of their primitives).

        >>> import numpy, funcgrad as fg
        >>> svg = fg.trace(lambda x: -x, numpy.ones(2)).to_svg(engine="funcgrad")
        >>> svg.startswith("<svg") and "%1 negative" in svg
        True
        """
        if engine not in (None, "dot", "funcgrad"):
            raise FuncgradValueError(
                f"Graph.to_svg: engine must be None, 'dot' or 'funcgrad', got {engine!r}")
        if engine == "dot" or (engine is None and len(self.nodes) <= SVG_MAX_NODES):
            svg = _graphviz_svg(self.to_dot(), engine == "dot")
            if svg is not None:
                return svg
        return self._own_svg()

    def _own_svg(self, flow: GradientFlow | None = None) -> str:
        """funcgrad's drawing, node by node, or condensed when that is too large; with
        ``flow``, of its gradients."""
        if len(self.nodes) > drawing.MAX_NODES:
            return self._condensed_svg(flow)
        boxes, edges = self._boxes(None if flow is None else flow._looks)
        if drawing.points(len(boxes), edges) > drawing.MAX_POINTS:
            return self._condensed_svg(flow)
        if flow is None:
            return drawing.render(boxes, edges, title=self._summary())
        return drawing.render(boxes, edges, title=_flow_title(flow), legend=flow._legend())

    def with_gradients(self, grad_outputs: Sequence | None = None) -> GradientFlow:
        """The graph with the gradient of every node, from one backward fold.

        ``grad_outputs`` seeds the fold as in :func:`fg.backprop`: None for
        scalar outputs (each seeded with one), else one cotangent per output.
        The result draws like the graph, each node coloured by its gradient's
        norm (log scale) and marked where it is zero, NaN or Inf; see
        :class:`GradientFlow`.  The gradients of the graph's inputs are those
        ``fg.grad`` of the traced function returns.

        >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
        >>> flow = fg.trace(lambda x: fnp.sum(fnp.sqrt(x)), numpy.array([0.0, 4.0])).with_gradients()
        >>> [flow.status(n) for n in flow.graph.inputs]
        ['inf']
        """
        with numpy.errstate(all="ignore"):  # the NaNs and Infs are what we came to see
            grads = backprop(list(self.outputs), list(self.nodes), grad_outputs,
                             backprop_id=self.backprop_id)
        return GradientFlow(self, grads)

    # -- Jupyter ------------------------------------------------------------
    def _repr_svg_(self) -> str:
        """The drawing (:meth:`to_svg`): Graphviz's when it is installed, funcgrad's otherwise."""
        return self.to_svg()  # never raises: a failing dot falls back to funcgrad's layout

    def _repr_html_(self) -> str:
        """The drawing above the HTML table of the nodes (folded away under 'nodes')."""
        return self._html(self._repr_svg_())

    def _html(self, svg: str | None) -> str:
        """The HTML table, below the drawing ``svg`` when there is one."""
        esc = html.escape
        rows = []
        for k, _, prim, shape, dtype, ins, _ in self._rows():
            if k == HTML_MAX_ROWS:
                rows.append(f"<tr><td colspan='5'>... {len(self.nodes) - k} more nodes</td></tr>")
                break
            cells = (f"%{k}", prim, shape, dtype, ins)
            rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
        head = "".join(f"<th>{h}</th>" for h in ("id", "primitive", "shape", "dtype", "inputs"))
        outs = ", ".join(f"%{k}" for k in self._output_ids())
        table = (
            f"<table class='funcgrad-graph'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table><p>outputs: {esc(outs)}</p>"
        )
        title = esc(self._summary())
        if svg is None:
            return f"<div><p><b>{title}</b></p>{table}</div>"
        return (
            f"<div><p><b>{title}</b></p>{svg}"
            f"<details><summary>nodes</summary>{table}</details></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        # Notebooks pick HTML over SVG, so the drawing goes inside the HTML
        # too; drawing it once here spares a second layout (or run of ``dot``).
        svg = self._repr_svg_()
        return {"text/plain": repr(self), "text/html": self._html(svg), "image/svg+xml": svg}


def _summary_card(title: str, kinds: list[str], edges: list[tuple],
                  flow: GradientFlow | None) -> str:
    """The card drawn for a graph too large even condensed: the count of each gradient
    status with ``flow``, else the commonest primitives."""
    if flow is not None:
        return drawing.summary_card(
            title, [(f"{s} gradients", n) for s, n in flow._counts().items()],
            "too large to draw; str() lists every node's |grad|")
    depth = max(drawing.layers_of(len(kinds), edges), default=-1) + 1
    return drawing.summary_card(title, drawing.commonest(kinds),
                                f"too large to draw ({depth} layers); its commonest primitives:")


def _group_box(group: tuple[str, int, bool], nodes: list[Node],
               flow: GradientFlow | None) -> drawing.Box:
    """The box of one group of a condensed drawing (with ``flow``, by its worst gradient)."""
    kind, count, special = group
    label = kind if count == 1 or kind.startswith("repeated") else f"{kind} \u00d7{count}"
    double = special and kind != "input"
    if flow is not None:
        worst = min((flow._measures()[n.serial] for n in nodes), key=_severity)
        style = flow._look(*worst)
        return drawing.Box([label, *style.pop("lines")], double=double, **style)
    if kind.startswith("repeated"):
        return drawing.Box([kind], fill="#f3f3f3", dashed=True)
    return drawing.Box([label], fill="#dbe8f6" if kind == "input" else "#ffffff", double=double)


def _columns(table: list[tuple[str, ...]]) -> list[str]:
    """Rows of cells as indented lines, each column but the last padded to its widest."""
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]) - 1)]
    return [("  " + "  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True))
             + "  " + row[-1]).rstrip() for row in table]


def _graphviz_svg(dot: str, required: bool) -> str | None:
    """``dot`` rendered by Graphviz, or None when it is not installed (or fails).

    With ``required``, a missing Graphviz raises instead, saying what to install.
    """
    if shutil.which("dot") is None:
        if required:
            raise FuncgradStateError(
                "engine='dot' needs Graphviz's dot program on PATH (apt-get install graphviz, "
                "brew install graphviz...); engine='funcgrad' needs nothing")
        return None
    try:
        import graphviz  # optional: funcgrad[viz]
    except ImportError:
        if required:
            raise FuncgradStateError(
                "engine='dot' needs the graphviz package: pip install -e '.[viz]'") from None
        return None
    try:
        return graphviz.Source(dot).pipe(format="svg", encoding="utf-8")
    except (RuntimeError, OSError, subprocess.CalledProcessError):
        if required:
            raise
        return None


# -- gradient flow --------------------------------------------------------------------

STATUSES = ("finite", "zero", "nan", "inf", "none")


def _measure(g: Any) -> tuple[str, float]:
    """``(status, norm)`` of one gradient: NaN wins over Inf, Inf over zero."""
    if g is None:
        return "none", 0.0
    a = fnp.abs(g)
    if bool(fnp.any(fnp.isnan(a))):
        return "nan", float("nan")
    if bool(fnp.any(fnp.isinf(a))):
        return "inf", float("inf")
    if math.prod(getattr(a, "shape", ())) == 0:
        return "zero", 0.0
    top = float(fnp.max(a))  # scaled, so that float16 and float32 squares do not overflow
    if top == 0.0:
        return "zero", 0.0
    return "finite", top * float(fnp.sqrt(fnp.sum(fnp.square(a / top))))


@attrs.frozen(eq=False, repr=False)
class GradientFlow:
    """A :class:`Graph` and the gradient of each of its nodes: what
    :meth:`Graph.with_gradients` returns.

    ``gradients`` maps each node to its gradient (None where no gradient
    reaches it).  :meth:`status` says ``'finite'``, ``'zero'``, ``'nan'``,
    ``'inf'`` or ``'none'``; :meth:`norm` gives the gradient's 2-norm.  In
    Jupyter it is the graph's drawing with each node filled by the norm of its
    gradient on a log scale (pale: small, dark green: large) and its norm
    written in the box; zero gradients are grey and dashed, NaN red and Inf
    purple, with a thick outline; ``str()`` is the listing with a ``|grad|``
    column.

    >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
    >>> flow = fg.trace(lambda x: fnp.sum(fnp.tanh(10 * x)), numpy.ones(3)).with_gradients()
    >>> print(flow)
    GradientFlow: 1 input, 1 output, 4 nodes
      id  primitive  shape  |grad|
      %0  input      (3,)   1.4e-07
      %1  multiply   (3,)   1.4e-08
      %2  tanh       (3,)   1.7
      %3  sum        ()     1
    """

    graph: Graph
    gradients: Any
    _by_serial: dict = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        found = {n.serial: _measure(self.gradients.get(n)) for n in self.graph.nodes}
        object.__setattr__(self, "_by_serial", found)

    def _measures(self) -> dict[int, tuple[str, float]]:
        return self._by_serial

    def status(self, node: Node) -> str:
        """``'finite'``, ``'zero'``, ``'nan'``, ``'inf'`` or ``'none'`` (nothing reaches it)."""
        return self._measures()[node.serial][0]

    def norm(self, node: Node) -> float:
        """The 2-norm of ``node``'s gradient (NaN or Inf where it holds one; 0 for none)."""
        return self._measures()[node.serial][1]

    def _scale(self) -> tuple[float, float]:
        finite = [math.log10(m) for s, m in self._measures().values() if s == "finite"]
        if not finite:
            return 0.0, 0.0
        high = max(finite)  # from one decade to twelve: below them, the palest colour
        return min(max(min(finite), high - 12.0), high - 1.0), high

    def _counts(self) -> dict[str, int]:
        """How many nodes have each status, in the order of ``STATUSES``."""
        found = [s for s, _ in self._measures().values()]
        return {s: found.count(s) for s in STATUSES if s in found}

    def __repr__(self) -> str:
        counts = self._counts()
        marks = ", ".join(f"{counts[s]} {s}" for s in STATUSES[1:] if counts.get(s))
        return f"<GradientFlow of {self.graph._summary()}{': ' + marks if marks else ''}>"

    def __str__(self) -> str:
        rows = [("id", "primitive", "shape", "|grad|")]
        for k, node, prim, shape, _, _, _ in self.graph._rows():
            rows.append((f"%{k}", prim, shape, _norm_text(*self._measures()[node.serial])))
        title = "Gradient" + self.graph._summary().replace("Graph", "Flow", 1)
        return "\n".join([title, *_columns(rows)])

    def _looks(self, k: int, node: Node) -> dict:
        return self._look(*self._measures()[node.serial])

    def _look(self, status: str, norm: float) -> dict:
        """How a node (or a condensed group) of this status and norm is drawn."""
        low, high = self._scale()
        if status == "finite":
            t = (math.log10(norm) - low) / (high - low) if high > low else 1.0
            return {"lines": [f"|g| {_norm_text(status, norm)}"], "fill": drawing.scale_colour(t),
                    "text_color": drawing.text_on(t)}
        look = {
            "zero": {"fill": "#e6e6e6", "dashed": True, "stroke": "#777777"},
            "nan": {"fill": "#d62728", "stroke": "#7f0000", "stroke_width": 3.0,
                    "text_color": "#ffffff"},
            "inf": {"fill": "#9467bd", "stroke": "#3f007d", "stroke_width": 3.0,
                    "text_color": "#ffffff"},
            "none": {"fill": "#ffffff", "dashed": True, "stroke": "#aaaaaa"},
        }[status]
        return {"lines": [f"|g| {_norm_text(status, norm)}"], **look}

    def to_svg(self) -> str:
        """The gradient-flow drawing as an SVG document (funcgrad's own layout).

        >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
        >>> flow = fg.trace(lambda x: fnp.sum(fnp.sqrt(x)), numpy.zeros(2)).with_gradients()
        >>> "|g| Inf" in flow.to_svg()
        True
        """
        return self.graph._own_svg(self)

    def _legend(self) -> list:
        low, high = self._scale()
        return [drawing.legend_bar(10 ** low, 10 ** high), drawing.legend_items([
            ("#e6e6e6", "#777777", "zero"), ("#d62728", "#7f0000", "NaN"),
            ("#9467bd", "#3f007d", "Inf"), ("#ffffff", "#aaaaaa", "no gradient")])]

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        return f"<div><p><b>{html.escape(repr(self)[1:-1])}</b></p>{self.to_svg()}</div>"


def _flow_title(flow: GradientFlow) -> str:
    return repr(flow)[1:-1]


_SEVERITY = {"nan": 0, "inf": 1, "finite": 2, "zero": 3, "none": 4}


def _severity(measure: tuple[str, float]) -> tuple[int, float]:
    """Sort key of ``(status, norm)``: NaN first, then Inf, then the largest finite norm."""
    status, norm = measure
    return _SEVERITY[status], -norm if status == "finite" else 0.0


def _norm_text(status: str, norm: float) -> str:
    return {"nan": "NaN", "inf": "Inf", "none": "-", "zero": "0"}.get(status) or f"{norm:.2g}"


def _dot_char(ch: str) -> str:
    if ch == "\n":
        return "\\n"  # DOT's line break
    if ch in '"\\':
        return "\\" + ch
    code = ord(ch)
    if code < 32 or 127 <= code < 160 or 0xD800 <= code < 0xE000 or code in (0x2028, 0x2029):
        # A control character (NUL included), a lone surrogate or a Unicode line
        # separator: not valid in DOT source, or a line break to line-oriented
        # tools, so shown as text, with an escaped backslash: \x00.
        return f"\\\\x{code:02x}" if code < 256 else f"\\\\u{code:04x}"
    return ch


def dot_str(text: str) -> str:
    """``text`` as a quoted DOT string, valid whatever it holds.

    Quotes and backslashes are escaped, newlines become DOT's ``\\n``, and
    control characters and lone surrogates are written out as ``\\x00``.

    >>> print(dot_str('say "hi"' + chr(0)))
    "say \\"hi\\"\\\\x00"
    """
    return '"' + "".join(_dot_char(ch) for ch in str(text)) + '"'


def trace(fun: Callable, *args: Any) -> Graph:
    """Run ``fun(*args)`` once and return the :class:`Graph` of its computation.

    ``args`` are arrays, numbers or pytrees of them, as for :func:`fg.grad`;
    each floating leaf becomes one input, each Node among the result's leaves
    one output.  Integer and boolean leaves (labels, indices, Python ints) are
    data: ``fun`` gets them unchanged, and they are constants of the graph.

    >>> import numpy, funcgrad as fg
    >>> g = fg.trace(lambda x, y: x * y + x, numpy.ones(2), numpy.ones(2))
    >>> len(g), len(g.inputs), [n.primitive.name for n in g.outputs]
    (4, 2, ['add'])
    >>> labels = numpy.array([2, 0])
    >>> len(fg.trace(lambda x, y: x[y], numpy.ones(3), labels).inputs)
    1
    """
    bp, leaves, _, out, _ = trace_call(fun, args, "trace", data=True)
    outputs = [o for o in tree.flatten(out)[0] if type(o) is Node and bp in o.graphs]
    return Graph.of(outputs, [v for v in leaves if type(v) is Node], bp)


__all__ = ["GradientFlow", "Graph", "trace"]
