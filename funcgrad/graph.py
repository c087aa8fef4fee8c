"""``trace`` and ``Graph``: look at a computation as the fold sees it (layer 6).

``trace(fun, *args)`` runs ``fun`` once on the leaves of a fresh graph and
returns the :class:`Graph` it built: an immutable value holding the input and
output Nodes and every Node between them, sorted as the backward fold visits
them.  A Graph prints as a table, draws itself as Graphviz DOT, and shows as a
table (and a drawing, when Graphviz is installed) in Jupyter.

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
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from . import tree
from .backprop import walk
from .combinators import _trace
from .errors import FuncgradTypeError
from .node import DEFAULT_BACKPROP_ID, BackpropId, Node

# Beyond these sizes a display would be unreadable or slow (Graphviz lays out
# thousands of nodes in minutes): the HTML table is cut, the drawing skipped.
HTML_MAX_ROWS = 500
SVG_MAX_NODES = 300


def _fold_order(nodes: Any) -> tuple:
    # The backward fold's order (backprop.backprop): highest rank first, ties
    # in creation order.
    return tuple(sorted(nodes, key=lambda n: (-n.rank, n.serial)))


def _node_tuple(seq: Any, what: str) -> tuple:
    seq = tuple(seq)
    for i, n in enumerate(seq):
        if type(n) is not Node:
            raise FuncgradTypeError(f"Graph {what}[{i}] must be a Node, got {type(n).__name__}")
    return seq


def _short(x: Any) -> str:
    """A few characters describing an argument that is not a Node of the graph."""
    if type(x) is Node:
        return f"outer{x.shape}"  # a Node of another graph: a constant here
    if isinstance(x, slice):  # indices read as they were written: x[1:, ::2]
        text = ":".join("" if v is None else _short(v) for v in (x.start, x.stop, x.step))
        return text[:-1] if x.step is None else text
    if x is Ellipsis:
        return "..."
    if isinstance(x, tuple):
        return "(" + ", ".join(_short(v) for v in x) + ("," if len(x) == 1 else "") + ")"
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
        found = {n.serial: n for n in walk(list(outputs), targets, bp)[0]}
        found.update(targets)  # an input the outputs do not use is still an input
        return cls(inputs, outputs, found.values(), bp)

    # -- the collection ---------------------------------------------------
    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

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
                    args.append(_short(a))
            # Options left at None/False (axis=None, keepdims=False) are noise here.
            kw = (n.kwargs or {}).items()
            args += [f"{key}={_short(v)}" for key, v in kw if v is not None and v is not False]
            yield k, n, n.primitive.name, str(n.shape), str(n.dtype), ", ".join(args), edges

    def _output_ids(self) -> list[int]:
        _, ids = self._program()
        return [ids[o.serial] for o in self.outputs if o.serial in ids]

    def __str__(self) -> str:
        table = [("id", "primitive", "shape", "dtype", "inputs")]
        table += [(f"%{k}", p, s, d, i) for k, _, p, s, d, i, _ in self._rows()]
        widths = [max(len(row[c]) for row in table) for c in range(4)]
        lines = [self._summary()]
        for row in table:
            cells = [cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)]
            lines.append(("  " + "  ".join(cells) + "  " + row[4]).rstrip())
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
        outs = set(self._output_ids())
        n_inputs = len(dict.fromkeys(self.inputs))  # inputs come first in program order
        lines = [
            f"digraph {_dot_str(name)} {{",
            "  rankdir=TB;",
            (
                '  node [shape=box, style="rounded,filled", fillcolor=white, '
                'fontname="Helvetica", fontsize=10];'
            ),
        ]
        edges = []
        for k, _, prim, shape, dtype, _, uses in self._rows():
            attrs_ = [f"label={_dot_str(f'%{k} {prim}' + chr(10) + f'{shape} {dtype}')}"]
            if k < n_inputs:
                attrs_.append('fillcolor="#dbe8f6"')
            if k in outs:
                attrs_.append("peripheries=2")
            lines.append(f"  n{k} [{', '.join(attrs_)}];")
            edges += [f"  n{u} -> n{k};" for u in uses]
        lines += edges
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- Jupyter ------------------------------------------------------------
    def _repr_svg_(self) -> str | None:
        """The graph drawn as SVG by Graphviz, or None (Jupyter falls back to HTML).

        None unless the ``graphviz`` package (``pip install funcgrad[viz]``) and
        Graphviz's ``dot`` program are both installed, or when the graph has
        more than ``SVG_MAX_NODES`` nodes.
        """
        if len(self.nodes) > SVG_MAX_NODES or shutil.which("dot") is None:
            return None
        try:
            import graphviz  # optional: funcgrad[viz]
        except ImportError:
            return None
        try:
            return graphviz.Source(self.to_dot()).pipe(format="svg", encoding="utf-8")
        except (RuntimeError, OSError, subprocess.CalledProcessError):
            return None  # a display must never raise: the table is shown instead

    def _repr_html_(self) -> str:
        """An HTML table of the nodes (the drawing, when there is one, is in the bundle)."""
        return self._html(None)

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
        # too; rendering it once here spares a second run of ``dot``.
        svg = self._repr_svg_()
        bundle = {"text/plain": repr(self), "text/html": self._html(svg)}
        if svg is not None:
            bundle["image/svg+xml"] = svg
        return bundle


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


def _dot_str(text: str) -> str:
    """``text`` as a quoted DOT string, valid whatever it holds.

    Quotes and backslashes are escaped, newlines become DOT's ``\\n``, and
    control characters and lone surrogates are written out as ``\\x00``.

    >>> print(_dot_str('say "hi"' + chr(0)))
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
    bp, leaves, _, out, _ = _trace(fun, args, "trace", data=True)
    outputs = [o for o in tree.flatten(out)[0] if type(o) is Node and bp in o.graphs]
    return Graph.of(outputs, [v for v in leaves if type(v) is Node], bp)


__all__ = ["Graph", "trace"]
