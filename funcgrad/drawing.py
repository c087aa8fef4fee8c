"""Drawing graphs as SVG without Graphviz: a layered layout in pure Python (layer 6).

:class:`fg.Graph`, :class:`fg.Plan` and the gradient-flow view of
``graph.with_gradients()`` are directed acyclic graphs whose nodes already
come in ranks, so they are drawn the way Sugiyama, Tagawa and Toda proposed
(1981), in four passes:

1. **layers**: each node goes one layer below the lowest of its inputs (the
   longest path from a source, which is a traced node's rank within the
   graph), and each source just above its first user;
2. **dummies**: an edge that spans several layers is cut into one-layer
   pieces through invisible points, so it can bend around the nodes between;
3. **crossing reduction**: the nodes of each layer are ordered by the mean
   position of their neighbours (the barycentre heuristic), sweeping down and
   up a few times and keeping the order with the fewest crossings;
4. **coordinates**: each layer is placed as near as its order and the
   nodes' widths allow to the mean ``x`` of its neighbours, an isotonic
   regression solved exactly by pooling adjacent violators.

Edges are drawn as smooth curves through their dummy points, with arrowheads.
Graphs larger than :data:`MAX_NODES` are condensed first (:func:`condense`):
the nodes of one layer with the same primitive become one box ``tanh x32``,
and a block of layers that repeats (a network's layers, an unrolled loop) is
kept once at each end with one box for the repeats between; when even that
is too large, a summary card of the counts is drawn instead.

The functions here know nothing of funcgrad's Nodes: they take boxes
(:class:`Box`) and edges between their indices.

>>> svg = render([Box(["%0 input"]), Box(["%1 sin"])], [(0, 1)])
>>> svg.startswith("<svg") and svg.count("<rect") >= 2 and "marker-end" in svg
True
"""

from __future__ import annotations

import collections
import html
import itertools
from collections.abc import Sequence

import attrs

MAX_NODES = 250  # drawn node by node up to this size; condensed above it
MAX_CONDENSED = 150  # a condensed drawing larger than this is replaced by a summary
MAX_POINTS = 20_000  # boxes plus edge bends: beyond it, a drawing is condensed too
_CHAR = 6.6  # mean width of a character of the 11px sans-serif labels
_LINE = 14.0
_PAD_X, _PAD_Y = 9.0, 6.0
_GAP_X, _GAP_Y = 18.0, 34.0
_MARGIN = 12.0
_DUMMY_W = 6.0


@attrs.frozen
class Box:
    """One node of a drawing: its text lines and how it looks.

    ``fill`` and ``stroke`` are CSS colours, ``double`` draws a second outline
    (an output), ``dashed`` a dashed one, ``shape`` is ``'box'`` or
    ``'diamond'`` (a replay guard), ``title`` a tooltip.
    """

    lines: tuple = attrs.field(converter=tuple)
    fill: str = "#ffffff"
    stroke: str = "#444444"
    stroke_width: float = 1.0
    double: bool = False
    dashed: bool = False
    shape: str = "box"
    title: str = ""
    text_color: str = "#111111"

    @property
    def width(self) -> float:
        widest = max((len(s) for s in self.lines), default=1)
        w = widest * _CHAR + 2 * _PAD_X
        return w * 1.4 if self.shape == "diamond" else w

    @property
    def height(self) -> float:
        h = max(1, len(self.lines)) * _LINE + 2 * _PAD_Y
        return h * 1.5 if self.shape == "diamond" else h


# -- 1. layers ----------------------------------------------------------------------


def layers_of(n: int, edges: Sequence[tuple]) -> list[int]:
    """The layer of each of ``n`` nodes: 0 for sources, else one below its lowest input.

    >>> layers_of(4, [(0, 1), (1, 2), (0, 2), (3, 2)])
    [0, 1, 2, 0]
    """
    succs: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for e in edges:
        succs[e[0]].append(e[1])
        indeg[e[1]] += 1
    layer = [0] * n
    ready = [v for v in range(n) if indeg[v] == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for v in succs[u]:
            layer[v] = max(layer[v], layer[u] + 1)
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    if seen != n:
        raise ValueError("draw: the graph has a cycle")  # never for a trace or a plan
    return layer


def points(n: int, edges: Sequence[tuple]) -> int:
    """How many boxes and bends a layout of ``n`` nodes and ``edges`` places: its cost.

    >>> points(3, [(0, 1), (1, 2), (0, 2)])  # the long edge bends once
    4
    """
    layer = layers_of(n, edges)
    return n + sum(max(0, layer[e[1]] - layer[e[0]] - 1) for e in edges)


# -- 3. crossing reduction -----------------------------------------------------------


def _crossings(upper_pos: dict, lower_pos: dict, pairs: list[tuple[int, int]]) -> int:
    """Crossings between two adjacent layers: inversions of the edges' lower ends."""
    ends = sorted(((upper_pos[u], lower_pos[v]) for u, v in pairs))
    size = len(lower_pos) + 1
    tree = [0] * (size + 1)
    count = 0
    for seen, (_, b) in enumerate(ends):
        i, below = b + 1, 0
        while i > 0:  # how many earlier edges end at or left of b
            below += tree[i]
            i -= i & -i
        count += seen - below
        i = b + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
    return count


def _order(rows: list[list[int]], down: list[list[int]], up: list[list[int]],
           sweeps: int = 8) -> list[list[int]]:
    """Orders of the nodes in each row with few crossings (barycentre sweeps)."""

    def total(rs):
        t = 0
        for k in range(len(rs) - 1):
            pos_u = {v: i for i, v in enumerate(rs[k])}
            pos_l = {v: i for i, v in enumerate(rs[k + 1])}
            t += _crossings(pos_u, pos_l, [(u, v) for u in rs[k] for v in down[u]])
        return t

    best, best_count = [list(r) for r in rows], total(rows)
    current = [list(r) for r in rows]
    for sweep in range(sweeps):
        if best_count == 0:
            break
        ks = range(1, len(current)) if sweep % 2 == 0 else range(len(current) - 2, -1, -1)
        for k in ks:
            ref = current[k - 1] if sweep % 2 == 0 else current[k + 1]
            pos = {v: i for i, v in enumerate(ref)}
            nbrs = up if sweep % 2 == 0 else down
            keys = {}
            for i, v in enumerate(current[k]):
                ps = [pos[u] for u in nbrs[v] if u in pos]
                keys[v] = sum(ps) / len(ps) if ps else float(i)
            current[k].sort(key=lambda v: keys[v])
        count = total(current)
        if count < best_count:
            best, best_count = [list(r) for r in current], count
    return best


# -- 4. coordinates ------------------------------------------------------------------


def _isotonic(targets: list[float], weights: list[float]) -> list[float]:
    """The nondecreasing sequence nearest ``targets`` in weighted least squares (PAV)."""
    blocks: list[list[float]] = []  # [mean, weight, length]
    for t, w in zip(targets, weights, strict=True):
        blocks.append([t, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, n2 = blocks.pop()
            m1, w1, n1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    out: list[float] = []
    for m, _, k in blocks:
        out += [m] * int(k)
    return out


def _place(row: list[int], widths: list[float], desired: dict, weights: list[float]) -> dict:
    """x of each node of ``row``, in order, at least a gap apart, near ``desired``."""
    offsets, acc = [], 0.0
    for i, v in enumerate(row):
        if i:
            acc += widths[row[i - 1]] / 2 + _GAP_X + widths[v] / 2
        offsets.append(acc)
    ys = _isotonic([desired[v] - o for v, o in zip(row, offsets, strict=True)],
                   [weights[v] for v in row])
    return {v: y + o for v, y, o in zip(row, ys, offsets, strict=True)}


def _coordinates(rows, widths, down, up, weights, rounds: int = 6) -> dict:
    x: dict[int, float] = {}
    for row in rows:  # start packed, centred on 0
        placed = _place(row, widths, {v: 0.0 for v in row}, weights)
        shift = (placed[row[0]] + placed[row[-1]]) / 2 if row else 0.0
        x.update({v: p - shift for v, p in placed.items()})
    for r in range(rounds):
        order = range(len(rows)) if r % 2 == 0 else range(len(rows) - 1, -1, -1)
        for k in order:
            want = {}
            for v in rows[k]:
                ns = up[v] + down[v]
                want[v] = sum(x[u] for u in ns) / len(ns) if ns else x[v]
            x.update(_place(rows[k], widths, want, weights))
    return x


# -- the whole layout ----------------------------------------------------------------


@attrs.frozen
class Layout:
    """Where everything goes: box centres, edge routes (lists of points), the size."""

    centres: tuple
    routes: tuple
    width: float
    height: float


def layout(boxes: Sequence[Box], edges: Sequence[tuple]) -> Layout:
    """Lay out ``boxes`` with ``edges`` ``(u, v)`` or ``(u, v, label)`` from ``u`` down to ``v``.

    >>> lay = layout([Box(["a"]), Box(["b"]), Box(["c"])], [(0, 1), (0, 2)])
    >>> [round(y) for _, y in lay.centres]  # a above b and c, which share a row
    [25, 85, 85]
    """
    n = len(boxes)
    layer = _sources_lowered(layers_of(n, edges), edges)
    widths = [b.width for b in boxes]
    heights = [b.height for b in boxes]
    weights = [1.0] * n
    down, up, chains = _cut(edges, layer, widths, heights, weights)
    rows: list[list[int]] = [[] for _ in range(max(layer, default=-1) + 1)]
    # Initial order: dummies and nodes in the order they come (program order).
    for v in range(len(widths)):
        rows[layer[v]].append(v)
    big = len(widths) > 3000  # fewer passes for large drawings: a second or two at most
    rows = _order(rows, down, up, sweeps=4 if big else 8)
    x = _coordinates(rows, widths, down, up, weights, rounds=3 if big else 6)
    y_of_row, bottom = _row_centres(rows, heights)
    left = min((x[v] - widths[v] / 2 for v in x), default=0.0)
    right = max((x[v] + widths[v] / 2 for v in x), default=0.0)
    shift = _MARGIN - left
    pos = [(x[v] + shift, y_of_row[layer[v]]) for v in range(len(widths))]
    routes = tuple(_route(chain, pos, heights) for chain in chains)
    return Layout(tuple(pos[:n]), routes, right - left + 2 * _MARGIN,
                  max(bottom - _GAP_Y + _MARGIN, 2 * _MARGIN))


def _sources_lowered(layer: list[int], edges: Sequence[tuple]) -> list[int]:
    """``layer`` with each source (an input, a weight) just above its first user, not at
    the top: short edges, and a network's weights sit beside their layers."""
    first_use: dict[int, int] = {}
    for e in edges:
        first_use[e[0]] = min(first_use.get(e[0], 1 << 30), layer[e[1]])
    has_input = {e[1] for e in edges}
    for v, lowest in first_use.items():
        if v not in has_input:
            layer[v] = lowest - 1
    return layer


def _cut(edges: Sequence[tuple], layer: list[int], widths: list[float], heights: list[float],
         weights: list[float]) -> tuple[list, list, list]:
    """2. Each edge cut into one-layer pieces through a dummy point per layer it crosses
    (appended to ``layer``, ``widths``, ``heights``, ``weights``): ``(down, up, chains)``,
    the neighbours below and above each point and each edge's points."""
    down: list[list[int]] = [[] for _ in widths]
    up: list[list[int]] = [[] for _ in widths]
    chains = []
    for e in edges:
        u, v = e[0], e[1]
        chain = [u]
        for k in range(layer[u] + 1, layer[v]):
            chain.append(len(widths))
            widths.append(_DUMMY_W)
            heights.append(0.0)
            weights.append(4.0)  # long edges pull harder: they stay straight
            layer.append(k)
            down.append([])
            up.append([])
        chain.append(v)
        for a, b in itertools.pairwise(chain):
            down[a].append(b)
            up[b].append(a)
        chains.append(chain)
    return down, up, chains


def _row_centres(rows: list[list[int]], heights: list[float]) -> tuple[list[float], float]:
    """The ``y`` of each row's centre, each as tall as its tallest box, and where the
    next row would start."""
    y_of_row, acc = [], _MARGIN
    for row in rows:
        h = max((heights[v] for v in row), default=0.0)
        y_of_row.append(acc + h / 2)
        acc += h + _GAP_Y
    return y_of_row, acc


def _route(chain: list[int], pos: list[tuple], heights: list[float]) -> tuple:
    """An edge's points: from the bottom of its first box through its dummies to the top
    of its last."""
    u, v = chain[0], chain[-1]
    return ((pos[u][0], pos[u][1] + heights[u] / 2), *(pos[d] for d in chain[1:-1]),
            (pos[v][0], pos[v][1] - heights[v] / 2))


# -- SVG -----------------------------------------------------------------------------


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _path(points: Sequence[tuple]) -> str:
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{_num(x0)},{_num(y0)}"]
    for x1, y1 in rest:  # vertical tangents at each point: a smooth S per layer
        mid = (y0 + y1) / 2
        d.append(f"C{_num(x0)},{_num(mid)} {_num(x1)},{_num(mid)} {_num(x1)},{_num(y1)}")
        x0, y0 = x1, y1
    return " ".join(d)


def _box_svg(box: Box, cx: float, cy: float) -> list[str]:
    esc = html.escape
    w, h = box.width, box.height
    dash = ' stroke-dasharray="4 3"' if box.dashed else ""
    style = (f'fill="{esc(box.fill)}" stroke="{esc(box.stroke)}" '
             f'stroke-width="{_num(box.stroke_width)}"{dash}')
    out = ["<g class='node'>"]
    if box.title:
        out.append(f"<title>{esc(box.title)}</title>")
    if box.shape == "diamond":
        pts = f"{_num(cx)},{_num(cy - h / 2)} {_num(cx + w / 2)},{_num(cy)} " \
              f"{_num(cx)},{_num(cy + h / 2)} {_num(cx - w / 2)},{_num(cy)}"
        out.append(f'<polygon points="{pts}" {style}/>')
    else:
        out.append(f'<rect x="{_num(cx - w / 2)}" y="{_num(cy - h / 2)}" width="{_num(w)}" '
                   f'height="{_num(h)}" rx="5" {style}/>')
        if box.double:
            out.append(f'<rect x="{_num(cx - w / 2 + 3)}" y="{_num(cy - h / 2 + 3)}" '
                       f'width="{_num(w - 6)}" height="{_num(h - 6)}" rx="3" fill="none" '
                       f'stroke="{esc(box.stroke)}" stroke-width="1"/>')
    top = cy - (len(box.lines) - 1) * _LINE / 2
    for i, line in enumerate(box.lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        out.append(f'<text x="{_num(cx)}" y="{_num(top + i * _LINE + 4)}" '
                   f'text-anchor="middle" fill="{esc(box.text_color)}"{weight}>'
                   f"{esc(line)}</text>")
    out.append("</g>")
    return out


def render(boxes: Sequence[Box], edges: Sequence[tuple], title: str = "",
           legend: Sequence[str] = ()) -> str:
    """An SVG document drawing ``boxes`` and ``edges`` (see :func:`layout`).

    ``title`` is the document's tooltip and accessible name; ``legend`` holds
    extra SVG elements placed below the drawing (see :func:`legend_bar`), each
    a ``(height, markup)`` pair whose markup starts at ``y = 0``.
    """
    lay = layout(boxes, edges)
    extra_h = sum(h for h, _ in legend)
    width = max(lay.width, max((w for w, _ in (_legend_width(m) for _, m in legend)),
                               default=0.0))
    height = lay.height + extra_h
    esc = html.escape
    out = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
         f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
         'font-family="Helvetica, Arial, sans-serif" font-size="11" class="funcgrad-drawing">'),
        f"<title>{esc(title)}</title>" if title else "",
        ('<defs><marker id="fg-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
         'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
         '<path d="M0,1 L10,5 L0,9 z" fill="#555555"/></marker></defs>'),
    ]
    for e, pts in zip(edges, lay.routes, strict=True):
        width_e = e[3] if len(e) > 3 else 1.2
        colour = e[4] if len(e) > 4 else "#555555"
        out.append(f'<path d="{_path(pts)}" fill="none" stroke="{esc(colour)}" '
                   f'stroke-width="{_num(width_e)}" marker-end="url(#fg-arrow)"/>')
        label = e[2] if len(e) > 2 else ""
        if label:
            (x0, y0), (x1, y1) = pts[0], pts[1]
            out.append(f'<text x="{_num((x0 + x1) / 2 + 4)}" y="{_num((y0 + y1) / 2 + 3)}" '
                       f'font-size="9" fill="#666666">{esc(label)}</text>')
    for box, (cx, cy) in zip(boxes, lay.centres, strict=True):
        out += _box_svg(box, cx, cy)
    y = lay.height
    for h, markup in legend:
        out.append(f'<g transform="translate({_num(_MARGIN)},{_num(y)})">{markup}</g>')
        y += h
    out.append("</svg>")
    return "\n".join(s for s in out if s)


def _legend_width(markup: str) -> tuple[float, None]:
    # Legends declare their width in a data attribute of their first element.
    key = 'data-width="'
    i = markup.find(key)
    if i < 0:
        return 0.0, None
    return float(markup[i + len(key):markup.index('"', i + len(key))]) + 2 * _MARGIN, None


def legend_items(items: Sequence[tuple[str, str, str]]) -> tuple[float, str]:
    """A one-row legend of ``(fill, stroke, text)`` swatches: ``(height, markup)``."""
    esc = html.escape
    parts, x = [], 0.0
    for fill, stroke, text in items:
        parts.append(f'<rect x="{_num(x)}" y="4" width="16" height="12" rx="3" '
                     f'fill="{esc(fill)}" stroke="{esc(stroke)}" stroke-width="1.5"/>')
        parts.append(f'<text x="{_num(x + 21)}" y="14">{esc(text)}</text>')
        x += 30 + len(text) * _CHAR
    return 24.0, f'<g data-width="{_num(x)}">' + "".join(parts) + "</g>"


def legend_note(text: str) -> tuple[float, str]:
    """A line of small grey text below a drawing: ``(height, markup)``."""
    width = len(text) * 6.0
    return 20.0, (f'<text data-width="{width:.0f}" x="0" y="12" font-size="10" '
                  f'fill="#666666">{html.escape(text)}</text>')


# -- colours for gradient norms -------------------------------------------------------

# A sequential scale, pale yellow (small) to dark blue (large), evenly spaced in
# the log of the norm; chosen to stay readable behind black and white text.
_SCALE = ["#ffffcc", "#d9f0a3", "#addd8e", "#78c679", "#41ab5d", "#238443", "#005a32"]


def scale_colour(t: float) -> str:
    """The colour at ``t`` in [0, 1] of the gradient-norm scale (linear in RGB).

    >>> scale_colour(0.0), scale_colour(1.0)
    ('#ffffcc', '#005a32')
    """
    t = min(1.0, max(0.0, t)) * (len(_SCALE) - 1)
    i = min(int(t), len(_SCALE) - 2)
    f = t - i
    a, b = _SCALE[i], _SCALE[i + 1]
    rgb = [round(int(a[k:k + 2], 16) * (1 - f) + int(b[k:k + 2], 16) * f) for k in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def text_on(t: float) -> str:
    """Black text on the pale half of the scale, white on the dark half."""
    return "#ffffff" if t > 0.62 else "#111111"


def legend_bar(low: float, high: float) -> tuple[float, str]:
    """A colour bar from ``low`` to ``high`` (norms, drawn on a log scale)."""
    esc = html.escape
    stops = "".join(f'<stop offset="{k / (len(_SCALE) - 1):.3f}" stop-color="{c}"/>'
                    for k, c in enumerate(_SCALE))
    markup = (
        f'<g data-width="330"><defs><linearGradient id="fg-scale">{stops}</linearGradient>'
        '</defs><text x="0" y="12">|gradient|</text>'
        '<rect x="64" y="2" width="160" height="13" fill="url(#fg-scale)" stroke="#888888"/>'
        f'<text x="64" y="28" font-size="9">{esc(f"{low:.1e}")}</text>'
        f'<text x="224" y="28" font-size="9" text-anchor="end">{esc(f"{high:.1e}")}</text>'
        '<text x="232" y="12" font-size="9">(log scale)</text></g>'
    )
    return 34.0, markup


# -- large graphs ------------------------------------------------------------------


def _period(sigs: list, start: int, max_period: int = 12) -> tuple[int, int]:
    """``(p, k)``: the block of ``p`` layers from ``start`` that repeats ``k`` times in a row,
    the one covering most layers."""
    best = (1, 1)
    for p in range(1, max_period + 1):
        k = 1
        while start + (k + 1) * p <= len(sigs) and \
                sigs[start + k * p:start + (k + 1) * p] == sigs[start:start + p]:
            k += 1
        if k > 1 and k * p > best[0] * best[1]:
            best = (p, k)
    return best


def condense(kinds: Sequence[str], edges: Sequence[tuple], special: Sequence[bool] = ()
             ) -> tuple[list[tuple[str, int, bool]], list[tuple[int, int]], int]:
    """A smaller drawing of a large graph: ``(groups, edges, repeats hidden)``.

    ``kinds[i]`` is node ``i``'s primitive; ``special[i]`` marks inputs and
    outputs, which keep a group of their own.  Nodes of one layer and one kind
    form a group ``(kind, count, special)``; then, where a block of layers
    repeats three times or more, only its first and last copies are kept and
    one group ``('... k more x <p layers>', k, False)`` stands for the rest.
    The edges join groups.

    >>> kinds = ["input"] + ["tanh", "mul"] * 10
    >>> chain = [(i, i + 1) for i in range(20)]
    >>> groups, _, hidden = condense(kinds, chain, [True] + [False] * 20)
    >>> [g[0] for g in groups], hidden
    (['input', 'tanh', 'mul', 'repeated 8 times: the 2 layers above', 'tanh', 'mul'], 16)
    """
    return condense_members(kinds, edges, special)[:3]


def condense_members(kinds: Sequence[str], edges: Sequence[tuple], special: Sequence[bool] = ()
                     ) -> tuple[list, list, int, list[int]]:
    """:func:`condense`, and the group of each node: ``(groups, edges, hidden, group_of)``.

    >>> condense_members(["input", "sin", "sin"], [(0, 1), (0, 2)], [True, False, False])[3]
    [0, 1, 1]
    """
    n = len(kinds)
    special = list(special) or [False] * n
    layer = layers_of(n, edges)
    depth = max(layer, default=-1) + 1
    keys: list[dict] = [{} for _ in range(depth)]
    for v in range(n):
        keys[layer[v]].setdefault((kinds[v], special[v]), []).append(v)
    kept, hidden = _kept_layers(keys)
    groups: list[tuple[str, int, bool]] = []
    group_of = [-1] * n
    repeat_of_layer: dict[int, int] = {}
    for item in kept:
        if isinstance(item, tuple):
            _, p, reps, lo, hi = item
            words = "the layer above" if p == 1 else f"the {p} layers above"
            groups.append((f"repeated {reps} times: {words}", reps, False))
            for lay_ in range(lo, hi):
                repeat_of_layer[lay_] = len(groups) - 1
            continue
        for (kind, sp), vs in keys[item].items():
            for v in vs:
                group_of[v] = len(groups)
            groups.append((kind, len(vs), sp))
    for v in range(n):
        if group_of[v] < 0:
            group_of[v] = repeat_of_layer[layer[v]]
    out_edges = sorted({(group_of[e[0]], group_of[e[1]]) for e in edges
                        if group_of[e[0]] != group_of[e[1]]})
    return groups, out_edges, hidden, group_of


def commonest(kinds: Sequence[str]) -> list[tuple[str, int]]:
    """``(kind, count)`` of each kind, the commonest first (ties by name): a summary card's
    rows.

    >>> commonest(["sin", "mul", "sin", "add"])
    [('sin', 2), ('add', 1), ('mul', 1)]
    """
    return sorted(collections.Counter(kinds).items(), key=lambda kv: (-kv[1], kv[0]))


def _kept_layers(keys: list[dict]) -> tuple[list[int | tuple], int]:
    """Which layers a condensed drawing keeps, with a ``("repeat", p, reps, lo, hi)`` item
    where the copies ``lo:hi`` of a block of ``p`` layers repeating three times or more
    are hidden, and how many nodes those hide.  ``keys[layer]`` groups a layer's nodes."""
    sigs = [tuple(sorted((k, len(vs)) for k, vs in row.items())) for row in keys]
    kept: list[int | tuple] = []
    hidden = 0
    lay = 0
    while lay < len(keys):
        p, k = _period(sigs, lay)
        if k >= 3:
            kept += list(range(lay, lay + p))
            kept.append(("repeat", p, k - 2, lay + p, lay + (k - 1) * p))
            kept += list(range(lay + (k - 1) * p, lay + k * p))
            hidden += sum(len(vs) for row in keys[lay + p:lay + (k - 1) * p]
                          for vs in row.values())
            lay += k * p
        else:
            kept.append(lay)
            lay += 1
    return kept, hidden


def summary_card(title: str, counts: Sequence[tuple[str, int]], note: str) -> str:
    """An SVG card for a graph too large to draw: its size and its commonest primitives."""
    esc = html.escape
    top = list(counts)[:12]
    most = max((c for _, c in top), default=1)
    height = 56 + 18 * len(top) + 24
    width = 460
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
            'font-size="11" class="funcgrad-drawing">'),
           f"<title>{esc(title)}</title>",
           (f'<rect x="1" y="1" width="{width - 2}" height="{height - 2}" rx="8" '
            'fill="#f7f7f7" stroke="#999999"/>'),
           f'<text x="14" y="22" font-weight="bold" font-size="13">{esc(title)}</text>',
           f'<text x="14" y="40" fill="#555555">{esc(note)}</text>']
    for i, (name, c) in enumerate(top):
        y = 56 + 18 * i
        bar = 200 * c / most
        out.append(f'<text x="14" y="{y + 11}">{esc(name)}</text>')
        out.append(f'<rect x="150" y="{y + 2}" width="{_num(bar)}" height="12" fill="#9ecae1"/>')
        out.append(f'<text x="{_num(156 + bar)}" y="{y + 12}">{c}</text>')
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["Box", "Layout", "commonest", "condense", "condense_members", "layout", "legend_bar",
           "legend_items", "legend_note", "render", "summary_card"]
