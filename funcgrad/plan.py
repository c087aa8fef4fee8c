"""Plans: a trace as a flat program of raw-array calls, run again on new inputs (layer 6).

A :class:`Plan` is what :func:`fg.replay <funcgrad.replay>` keeps of one trace
(:mod:`funcgrad.tracer`): the steps in the order they ran -- the forward
primitives, the backward rules and the folds' sums, every level of nesting
flattened -- with slots for the values, and the guards.  It is built once:

- **liveness**: walking back from the outputs, a step whose results nothing
  reads is dropped (a forward value no rule reads is never computed again),
  and every slot is released right after its last reader, so a replay holds
  only the values that a later step reads -- the residuals of the backward
  rules and the gradients being summed;
- **registers**: slots share the places of an environment list, a place being
  taken again as soon as its value is dead;
- **steps**: each kept entry becomes one small closure made by a factory that
  is generated (``exec``) once per *shape* of step and cached for the process,
  so building a plan compiles nothing.  A hot plan is compiled into one
  straight-line function (see :meth:`Plan.compile`).

Running a plan creates no Node, walks no graph and checks nothing per step
but its guards: ``bool()`` of data, shapes that depend on data...  A guard
that does not hold raises :class:`GuardFailed`.

>>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
>>> f = fg.replay(fg.grad(lambda x: fnp.sum(fnp.sin(x) * x)))
>>> _ = f(numpy.ones(3))
>>> plan = f.plans[0]
>>> len(plan.inputs), len(plan.outputs)
(1, 1)
>>> [s.op for s in plan.steps]       # the forward sum is dropped: grad does not return it
['sin', 'ones', 'reshape', 'broadcast_to', '*', '*', 'cos', '*', '+']
"""

from __future__ import annotations

import html
import math
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import drawing
from .context import collector_paused
from .draws import generator_locks, held_generators, restore_generators, save_generators
from .graph import dot_str, short_text
from .tracer import Back, Eqn, Guard, Slot, Tape, decode

# Beyond these sizes a display would be unreadable or slow.
HTML_MAX_ROWS = 500
COMPILE_MAX_STEPS = 20_000  # beyond it, compiling costs more than it can save


class GuardFailed(Exception):
    """A guard of a plan did not hold: ``ordinal`` is its place, ``observed`` the value seen."""

    def __init__(self, ordinal: int, observed: Any):
        super().__init__(ordinal, observed)
        self.ordinal = ordinal
        self.observed = observed


def _fail(ordinal: int, observed: Any) -> None:
    raise GuardFailed(ordinal, observed)


def same(a: Any, b: Any) -> bool:
    """Exact equality for guard values: NaN equals NaN, -0.0 differs from 0.0, types match."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if type(a) is complex:
        return same(a.real, b.real) and same(a.imag, b.imag)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# Python operators render as themselves: faster than calling ``operator.add``.
_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
           operator.lshift: "<<", operator.rshift: ">>", operator.lt: "<", operator.le: "<=",
           operator.gt: ">", operator.ge: ">=", operator.eq: "==", operator.ne: "!="}
_IN_PLACE = {operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=",
             operator.itruediv: "/=", operator.ifloordiv: "//=", operator.imod: "%=",
             operator.ipow: "**=", operator.imatmul: "@=", operator.iand: "&=",
             operator.ior: "|=", operator.ixor: "^=", operator.ilshift: "<<=",
             operator.irshift: ">>="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def slots_in(tmpl: Any, out: list) -> list:
    """The slots in a template, left to right (with repeats): each its :class:`Slot`, an
    int equal to its number (``.k`` would make a new int)."""
    t = type(tmpl)
    if t is Slot:
        out.append(tmpl)
    elif t is tuple or t is list:
        for o in tmpl:
            slots_in(o, out)
    elif t is dict:
        for o in tmpl.values():
            slots_in(o, out)
    elif t is slice:
        for o in (tmpl.start, tmpl.stop, tmpl.step):
            slots_in(o, out)
    return out


@dataclass(frozen=True)
class Step:
    """One step of a plan, as shown: ``op`` is the primitive, function or operator."""

    index: int
    op: str
    kind: str  # 'call', 'in-place' or 'guard'
    inputs: tuple  # slots read
    outputs: tuple  # slots written (kept)
    frees: tuple  # slots released after this step: their last reader
    args: str  # the arguments as written, slots as %k
    shape: Any
    dtype: Any
    where: str = ""  # for guards: the code that read the value

    def __str__(self) -> str:
        return f"{self.op}({self.args})"


class _Source:
    """Source text of one step, its parameters gathered apart (the factory's signature)."""

    __slots__ = ("names", "values")

    def __init__(self):
        self.names: list[str] = []
        self.values: list = []

    def param(self, value: Any, prefix: str = "c") -> str:
        name = f"{prefix}{len(self.names)}"
        self.names.append(name)
        self.values.append(value)
        return name


def _expr(tm: Any, src: _Source, reg: Callable) -> str:
    t = type(tm)
    if t is Slot:
        return reg(tm)
    if tm is None or tm is True or tm is False or tm is Ellipsis:
        return repr(tm)
    if t is tuple and _has_slot(tm):
        inner = ", ".join(_expr(o, src, reg) for o in tm)
        return f"({inner},)" if len(tm) == 1 else f"({inner})"
    if t is list and _has_slot(tm):
        return "[" + ", ".join(_expr(o, src, reg) for o in tm) + "]"
    if t is dict and _has_slot(tm):
        return "{" + ", ".join(f"{src.param(k)}: {_expr(v, src, reg)}"
                               for k, v in tm.items()) + "}"
    if t is slice and _has_slot(tm):
        return "slice(" + ", ".join(_expr(o, src, reg)
                                    for o in (tm.start, tm.stop, tm.step)) + ")"
    return src.param(tm)


def _has_slot(tm: Any) -> bool:
    return bool(slots_in(tm, []))


def _symbolic(fn: Any, n_args: int, tkw: dict | None) -> bool:
    """Whether a call is written as a Python operator (``a + b``, ``-a``, ``a[i]``,
    ``a += b``, ``a[i] = v``) rather than as a call of the function."""
    return not tkw and fn in _OPERATORS.get(n_args, ())


# The functions written as operators, by their number of arguments.
_OPERATORS = {1: frozenset(_UNARY), 2: frozenset({*_BINARY, *_IN_PLACE, operator.getitem}),
              3: frozenset({operator.setitem})}


def _call_expr(fn: Any, targs: tuple, tkw: dict | None, src: _Source, reg: Callable) -> str:
    """The expression of one call; operators as operators."""
    if _symbolic(fn, len(targs), tkw):
        if fn in _UNARY:
            return f"{_UNARY[fn]}{_expr(targs[0], src, reg)}"
        a, b = (_expr(x, src, reg) for x in targs)
        return f"{a}[{b}]" if fn is operator.getitem else f"{a} {_BINARY[fn]} {b}"
    parts = [_expr(x, src, reg) for x in targs]
    for k, v in (tkw or {}).items():
        if isinstance(k, str) and k.isidentifier():
            parts.append(f"{k}={_expr(v, src, reg)}")
        else:
            parts.append(f"**{{{src.param(k)}: {_expr(v, src, reg)}}}")
    return f"{src.param(fn, 'f')}({', '.join(parts)})"


def _statements(entry: Eqn | Guard, ordinal: int, writes: tuple, clears: tuple, src: _Source,
                reg: Callable, put: Callable) -> list[str]:
    """The lines of one step: ``reg(slot)`` reads a slot, ``put(register)`` writes one.

    The one renderer of plans: the steps of :meth:`Plan._build` (each a function
    of its own, see :func:`_fast_step`) and the body of :meth:`Plan.compile`.
    """
    if type(entry) is Guard:
        lines = _guard_lines(entry, ordinal, src, reg)
    else:
        lines = _call_lines(entry, writes, src, reg, put)
    lines += [f"{put(r)} = None" for r in clears]
    return lines


def _guard_lines(guard: Guard, ordinal: int, src: _Source, reg: Callable) -> list[str]:
    value = reg(guard.slot)
    expected = guard.expected
    if guard.check is operator.truth and type(expected) is bool:
        test = f"not {value}" if expected else f"{value}"
        return [f"if {test}: fail({src.param(ordinal)}, {not expected})"]
    check = src.param(guard.check, "g")
    want = src.param(expected, "w")
    return [f"got = {check}({value})",
            f"if not same(got, {want}): fail({src.param(ordinal)}, got)"]


def _call_lines(eqn: Eqn, writes: tuple, src: _Source, reg: Callable,
                put: Callable) -> list[str]:
    fn, targs, tkw = eqn.fn, eqn.args, eqn.kwargs
    if fn in _IN_PLACE and _symbolic(fn, len(targs), tkw):
        a, b = (_expr(x, src, reg) for x in targs)
        target = put(writes[0]) if writes and writes[0] is not None else a
        lines = [] if target == a else [f"{target} = {a}"]
        return [*lines, f"{target} {_IN_PLACE[fn]} {b}"]
    if fn is operator.setitem and _symbolic(fn, len(targs), tkw):
        a, i, v = (_expr(x, src, reg) for x in targs)
        return [f"{a}[{i}] = {v}"]
    call = _call_expr(fn, targs, tkw, src, reg)
    if eqn.unpack:
        if all(w is None for w in writes):
            return [call]
        return [f"t = {call}", *(f"{put(w)} = t[{k}]" for k, w in enumerate(writes)
                                 if w is not None), "del t"]
    if writes and writes[0] is not None:
        return [f"{put(writes[0])} = {call}"]
    return [call]


_GLOBALS = {"fail": _fail, "same": same, "slice": slice}
# One factory per shape of step, for the process: a step is the function it makes,
# its registers, constants and function given as default arguments (read as fast as
# locals; no closure cells, no compilation per plan).  A factory, not
# ``types.FunctionType``: that constructor raises an audit event, which replay's
# hook (see replay._opening) would hear once per step.
_CODES: dict[Any, Callable] = {}


def _code(key: Any, body: list[str], names: list[str]) -> Callable:
    make = _CODES.get(key)
    if make is None:
        params = ", ".join(names)
        defaults = "".join(f", {n}={n}" for n in names)
        source = (f"def make({params}):\n    def step(e{defaults}):\n"
                  + "".join(f"        {line}\n" for line in body) + "    return step\n")
        namespace: dict = {}
        # Our own generated source (no user text in it): the shape of one step.
        exec(compile(source, "<funcgrad plan step>", "exec"), _GLOBALS, namespace)  # noqa: S102
        make = _CODES[key] = namespace["make"]
    return make


def _reads(entry: Eqn | Guard) -> list:
    """The slots an entry reads, left to right (with repeats)."""
    if type(entry) is Guard:
        return [entry.slot]  # an int: dicts key slots by either (see Slot)
    return _slots_read(entry.args, entry.kwargs)


def _slots_read(args: Any, kwargs: dict | None) -> list:
    found = []
    for a in args:
        if type(a) is Slot:
            found.append(a)
        elif type(a) in _CONTAINERS:
            slots_in(a, found)
    if kwargs:
        slots_in(kwargs, found)
    return found


_CONTAINERS = frozenset({tuple, list, dict, slice})
_LITERALS = {None: "None", True: "True", False: "False", Ellipsis: "..."}


def _fast_step(fn: Any, args: Any, tkw: dict | None, writes: tuple, clears: tuple,
               reg: dict, made: int = 0) -> Callable | None:
    """The step of a simple call ``fn(*args, **tkw)`` -- one result at most (not
    unpacked), arguments that are slots or constants -- made without rendering any
    source once its shape has been seen.  ``made`` is the slot a plain step's row makes
    (a :class:`Back` among its arguments names slot ``made - d``).

    Its parameters are gathered in the order :func:`_statements` takes them:
    the arguments (a register per slot, each constant), the function (unless
    written as an operator), the register written, those cleared.
    """
    if tkw:
        names = tuple(tkw)
        if not all(isinstance(k, str) and k.isidentifier() for k in names):
            return None
        args = (*args, *tkw.values())  # positional, then keyword
        symbolic = False
    else:
        names = ()
        symbolic = fn in _OPERATORS.get(len(args), ())
    pattern = []
    values = []
    for a in args:
        t = type(a)
        if t is Back:
            pattern.append("S")
            values.append(reg[made - a])
        elif t is Slot:
            pattern.append("S")
            values.append(reg[a])
        elif t in _CONTAINERS and _has_slot(a):
            return None
        elif a is None or a is True or a is False or a is Ellipsis:
            pattern.append(_LITERALS[a])  # written as itself, no parameter
        else:
            pattern.append("C")
            values.append(a)
    if not symbolic:
        values.append(fn)
    write = writes[0] if writes else None
    if write is not None:
        values.append(write)
    values += clears
    key = (fn if symbolic else None, tuple(pattern), names, write is not None, len(clears))
    code = _CODES.get(key)
    if code is None:
        code = _render(key, fn, args[:len(args) - len(names)], tkw, writes, clears, made)
    return code(*values)


def _render(key: Any, fn: Any, args: Any, tkw: dict | None, writes: tuple, clears: tuple,
            made: int) -> Callable:
    """The code of :func:`_fast_step`'s shape ``key``, rendered from one step of it."""
    args = tuple(Slot(made - a) if type(a) is Back else a for a in args)
    eqn = Eqn(fn, args, tkw, (), "")
    src = _Source()

    def place(_):
        return f"e[{src.param(None, 'r')}]"  # one parameter per read and write

    return _code(key, _statements(eqn, -1, writes, clears, src, place, place), src.names)


def _slow_step(entry: Eqn | Guard, ordinal: int, writes: tuple, clears: tuple,
               reg: dict) -> Callable:
    """The step of any entry: its source rendered in full (guards, nested arguments,
    several results)."""
    src = _Source()
    regs: dict[int, str] = {}

    def put(r):
        name = regs.get(r)
        if name is None:
            name = regs[r] = src.param(r, "r")
        return f"e[{name}]"

    body = _statements(entry, ordinal, writes, clears, src, lambda k: put(reg[k]), put)
    return _code("\n".join(body) + "|" + ",".join(src.names), body, src.names)(*src.values)


# -- the tape's flat records ------------------------------------------------------
# A tape keeps its steps flat (tracer.decode reads them as records): a plain step -- one
# array made, no effect -- lies in a row of cells, ``head, arg_1 ... arg_n, kwargs, step``
# with ``head`` its ``(n, fn, name)`` (``~n`` and no kwargs cell when it has none): it
# makes the slot ``step`` past the one the plain step before it made, and reads slot
# ``made - d`` for an argument that is a Back ``d``.  Or ``n, fn, arg_1 ... arg_n, kwargs,
# outputs, name``; any other record (a Guard; an Eqn with an effect, unpacked results or
# made elsewhere) is itself, in one cell.  A plan reads a plain step where it lies, by its
# offset, and makes no record of it.


def _offsets(records: list) -> list[int]:
    """Where each record begins, in order."""
    at = []
    i, end = 0, len(records)
    while i < end:
        at.append(i)
        o = records[i]
        t = type(o)
        if t is tuple:  # head, n arguments, kwargs if n >= 0, out
            m = o[0]
            i += m + 3 if m >= 0 else 1 - m  # n + 3 cells, or n + 2
        elif t is int:
            i += o + 5
        else:
            i += 1
    return at


def _entry_at(records: list, i: int, view: Any) -> Eqn | Guard:
    """The record at offset ``i``, whose view is ``view`` (see :func:`_live`): a plain
    step's Eqn made anew, for display and compiling."""
    o = records[i]
    prev = 0
    if type(o) is tuple:  # the slot it made (its view's) less its step: the one before
        m = o[0]
        prev = view[3] - records[i + m + 2 if m >= 0 else i - m]
    return decode(records, i, i + 1, prev)[0]


def _live(records: list, at: list[int], outputs: list,
          made_last: int) -> tuple[list[int], list, list, dict]:
    """The records kept, in order (their offsets): walking back from the outputs, the
    guards, the effects and the steps whose results a later kept record reads (or the
    plan returns).  With them, each one's view -- ``(fn, args, kwargs, out)`` for a plain
    step, its arguments as they lie (Backs among them), ``out`` the int slot it makes or
    the outputs tuple of :meth:`Tape.result`'s form; the record itself for any other --
    and the slots it reads; and each slot's last reader (the offset past the end for an
    output: never released).  ``made_last`` is the slot the last plain step made (the
    tape's ``prev``)."""
    last = dict.fromkeys(outputs, len(records))
    live = last.keys()
    kept, views, reads = [], [], []
    made = made_last
    for i in reversed(at):
        o = records[i]
        t = type(o)
        if t is tuple:  # (n, fn, name), arg_1 ... arg_n, [kwargs,] step
            m, fn = o[0], o[1]
            if m < 0:
                j = i - m  # i + 1 + n, as ~m is n
                args, kwargs = records[i + 1:j], None
            else:
                j = i + 1 + m
                args, kwargs, j = records[i + 1:j], records[j], j + 1
            out = made
            made -= records[j]  # the slot the plain step before made
            if out not in last:
                continue
        elif t is int:  # n, fn, arg_1 ... arg_n, kwargs, outputs, name
            j = i + 2 + o
            fn, args, kwargs, out = records[i + 1], records[i + 2:j], records[j], records[j + 1]
            if live.isdisjoint(out):
                continue
        else:
            found = _whole_reads(o, live, last, i)
            if found is not None:
                kept.append(i)
                views.append(o)
                reads.append(found)
            continue
        found = []
        for a in args:
            ta = type(a)
            if ta is Back:
                k = out - a  # the slot it names
                found.append(k)
                if k not in last:
                    last[k] = i
            elif ta is Slot:
                found.append(a)
                if a not in last:
                    last[a] = i
            elif ta in _CONTAINERS:
                found += _first_read(slots_in(a, []), last, i)
        if kwargs:
            found += _first_read(slots_in(kwargs, []), last, i)
        kept.append(i)
        views.append((fn, args, kwargs, out))
        reads.append(found)
    kept.reverse()
    views.reverse()
    reads.reverse()
    return kept, views, reads, last


def _first_read(found: list, last: dict, i: int) -> list:
    """``found``, each slot not yet read (walking back) marked last read at ``i``."""
    for s in found:
        if s not in last:
            last[s] = i
    return found


def _whole_reads(record: Eqn | Guard, live: Any, last: dict, i: int) -> list | None:
    """The slots a record kept whole reads (marked last read at ``i`` if not yet read),
    or None if it is dead (no effect, and no result in ``live``)."""
    if type(record) is Guard:
        return _first_read([record.slot], last, i)
    if record.effect or not live.isdisjoint(record.outputs):
        return _first_read(_slots_read(record.args, record.kwargs), last, i)
    return None


class _Places:
    """The places of a plan's environment list: ``n`` made so far, ``free`` ones to take."""

    __slots__ = ("free", "n")

    def __init__(self, n: int):
        self.n = n
        self.free: list[int] = []

    def take(self) -> int:
        if self.free:
            return self.free.pop()
        self.n += 1
        return self.n - 1


def _writes(outputs: tuple, target: Any, reg: dict, dying: list, places: _Places,
            last: dict) -> tuple:
    """The place each of ``outputs`` goes to (None for one nothing reads), set in ``reg``:
    a place of an operand dying here if any, else a free one.  An in-place step (whose
    ``target`` is the slot it updates) writes its result before it reads its operand:
    its target's place, or a free one."""
    writes = []
    for o in outputs:
        if o is None or o not in last:  # no result, or one nothing reads
            writes.append(None)
            continue
        if target is not None:
            r = reg[target]
            if r in dying:
                dying.remove(r)
            else:
                r = places.take()
        else:
            r = dying.pop() if dying else places.take()
        reg[o] = r
        writes.append(r)
    return tuple(writes)


def _layout(kept: list[int], views: list, reads: list, last: dict,
            n_inputs: int) -> tuple[list, dict, int]:
    """Per kept record its (writes, clears) registers; slot -> register; the number of
    registers.  Slots share the places of one list, a place taken again once its value
    is dead."""
    reg: dict = {k: k for k in range(n_inputs)}
    places = _Places(n_inputs)
    take, free = places.take, places.free
    layout = []
    for i, view, found in zip(kept, views, reads, strict=True):
        dying: list[int] = []
        for s in found:
            if last[s] == i:
                r = reg[s]
                if r not in dying:
                    dying.append(r)
        t = type(view)
        if t is tuple and type(made := view[3]) is int:  # a plain step, kept: read later
            r = dying.pop() if dying else take()
            reg[made] = r
            writes = (r,)
        elif t is tuple:
            writes = _writes(made, None, reg, dying, places, last)
        elif t is Guard:
            writes = ()
        else:
            target = view.args[0] if view.effect and view.fn in _IN_PLACE else None
            writes = _writes(view.outputs, target, reg, dying, places, last)
        layout.append((writes, dying))  # what dies here, cleared: a list, never changed again
        free += dying
    return layout, reg, places.n


class Plan:
    """A recorded flat program: inputs, steps, guards, outputs (see the module docstring).

    ``str(plan)`` lists the steps with the slots each reads, writes and frees;
    :meth:`to_dot` and :meth:`to_svg` draw it; Jupyter shows the drawing.  ``signature``
    describes the inputs it was traced for, ``guards`` the guards in order.
    """

    def __init__(self, tape: Tape, outputs: list, out_treedef: Any, signature: str = ""):
        self.signature = signature
        self.out_treedef = out_treedef
        self.n_inputs = tape.n_inputs
        # The tape's steps, flat as it keeps them (see _offsets): read where they lie.
        self._records: list = tape.records
        self._at: list[int] | None = None  # where each record begins: read at the first run
        self._meta = tape.meta
        self._made_last = tape.prev
        # Outputs: a Slot, or a constant (copied at each call when it is an array).
        self._out_template = outputs
        self._guard_values: tuple | None = None
        self._steps: list | None = None
        self._blank: list = []
        self._outs: list = []
        self._compiled: Callable | None = None
        # fnp.random generators the plan draws from and does not make: put back as they
        # were when a guard fails, so that the plan run next draws what eager would.
        self._held: tuple | None = None  # read at the first run: the trace is spared it
        self.hits = 0
        # What the function read besides its arguments (funcgrad.reads.World), or None:
        # checked before each replay.
        self.world: Any = None

    @property
    def _starts(self) -> list[int]:
        at = self._at
        if at is None:
            at = self._at = _offsets(self._records)
        return at

    def _whole(self) -> list:
        """The records kept whole (guards, effects, ...), in order: plain steps are none."""
        records = self._records
        return [o for o in map(records.__getitem__, self._starts)
                if type(o) is not tuple and type(o) is not int]  # (Eqn, Guard: subclasses)

    # -- building ---------------------------------------------------------------
    def _schedule(self) -> tuple[list[int], list, dict, int, dict, list]:
        """Kept records in order (their offsets); per kept record its (writes, clears)
        registers; slot -> register; the number of registers; slot -> its last reader;
        per kept record its view (see _live)."""
        outputs = [t for t in self._out_template if type(t) is Slot]
        kept, views, reads, last = _live(self._records, self._starts, outputs, self._made_last)
        layout, reg, n_regs = _layout(kept, views, reads, last, self.n_inputs)
        return kept, layout, reg, n_regs, last, views

    def _build(self) -> None:
        if len(self._starts) < 100:
            self._make_steps()
            return
        # A long build makes no cycles, and a dozen containers per step: the collector
        # would walk them again and again, alive until the build ends (-4% of a second
        # call on the 200-op chain, -7% on fan-in's, in instructions).
        with collector_paused():
            self._make_steps()

    def _make_steps(self) -> None:
        kept, layout, reg, n_regs, _, views = self._schedule()
        steps = []
        ordinal = 0
        for i, view, (writes, clears) in zip(kept, views, layout, strict=True):
            t = type(view)
            if t is tuple:  # a plain step: (fn, args, kwargs, out)
                step = _fast_step(view[0], view[1], view[2], writes, clears, reg,
                                  view[3] if type(view[3]) is int else 0)
            elif t is Guard:
                step = _slow_step(view, ordinal, writes, clears, reg)
                ordinal += 1
            elif not view.unpack:
                step = _fast_step(view.fn, view.args, view.kwargs, writes, clears, reg)
            else:
                step = None
            steps.append(step or _slow_step(_entry_at(self._records, i, view), -1, writes,
                                            clears, reg))
        self._blank = [None] * (n_regs - self.n_inputs)
        self._outs = [(reg[t], None) if type(t) is Slot else (None, t)
                      for t in self._out_template]
        self._steps = steps

    @property
    def guard_values(self) -> tuple:
        """The value each guard saw when traced, in order."""
        if self._guard_values is None:
            self._guard_values = tuple(e.expected for e in self._whole() if type(e) is Guard)
        return self._guard_values

    # -- running ----------------------------------------------------------------
    def run(self, inputs: list) -> list:
        """The output leaves for new ``inputs`` (raw arrays, in the traced order)."""
        held = self._held
        if held is None:
            held = self._held = held_generators(self._whole())
        if held:
            return self._run_drawing(inputs)
        compiled = self._compiled
        if compiled is not None:
            return compiled(*inputs)
        return self._run_steps(inputs)

    def _run_steps(self, inputs: list) -> list:
        if self._steps is None:
            self._build()
        env = inputs + self._blank  # the environment: a place per live value
        for step in self._steps:
            step(env)
        return [env[r] if r is not None else _fresh(c) for r, c in self._outs]

    def _run_drawing(self, inputs: list) -> list:
        """:meth:`run`, the generators it draws from restored if a guard fails (the draws
        made before the guard are drawn again by the plan that runs instead)."""
        locks = generator_locks(self._held)
        for lock in locks:
            lock.acquire()
        try:
            saved = save_generators(self._held)
            try:
                if self._compiled is not None:
                    return self._compiled(*inputs)
                return self._run_steps(inputs)
            except GuardFailed:
                restore_generators(self._held, saved)
                raise
        finally:
            for lock in reversed(locks):
                lock.release()

    def compile(self) -> bool:
        """Compile the plan into one straight-line function (locals, no environment list).

        Worth it for a plan run many times: each step then costs its call alone.
        Returns whether it compiled (plans over ``COMPILE_MAX_STEPS`` steps do not).
        """
        if self._compiled is not None:
            return True
        kept, layout, reg, _, _, views = self._schedule()
        if len(kept) > COMPILE_MAX_STEPS:
            return False
        src = _Source()

        def local(r):
            return f"v{r}"

        lines = []
        ordinal = 0
        for i, view, (writes, clears) in zip(kept, views, layout, strict=True):
            e = _entry_at(self._records, i, view)
            lines += _statements(e, ordinal, writes, (), src, lambda k: local(reg[k]), local)
            ordinal += type(e) is Guard
            lines += [f"del {local(r)}" for r in clears]
        outs = [local(reg[t]) if type(t) is Slot else f"fresh({src.param(t)})"
                for t in self._out_template]
        lines.append(f"return [{', '.join(outs)}]")
        params = [local(k) for k in range(self.n_inputs)]
        source = (f"def make({', '.join(src.names)}):\n"
                  f"    def plan({', '.join(params)}):\n"
                  + "".join(f"        {line}\n" for line in lines) + "    return plan\n")
        namespace: dict = {}
        glob = dict(_GLOBALS, fresh=_fresh)
        # Our own generated source: the plan's steps, one line each.
        exec(compile(source, "<funcgrad plan>", "exec"), glob, namespace)  # noqa: S102
        self._compiled = namespace["make"](*src.values)
        return True

    @property
    def compiled(self) -> bool:
        """Whether :meth:`compile` has made the plan one function."""
        return self._compiled is not None

    # -- looking at it ------------------------------------------------------------
    @property
    def steps(self) -> tuple[Step, ...]:
        """The kept steps, in order, as :class:`Step` records."""
        kept, layout, _, _, last, views = self._schedule()
        meta = self._slot_meta()
        out = []
        for n, (i, view, (writes, _)) in enumerate(zip(kept, views, layout, strict=True)):
            e = _entry_at(self._records, i, view)
            reads = tuple(dict.fromkeys(int(s) for s in _reads(e)))
            freed = tuple(s for s in reads if last.get(s) == i)
            if type(e) is Guard:
                out.append(Step(n, f"guard {e.name}", "guard", reads, (), freed,
                                f"%{e.slot} == {short_text(e.expected)}", (), None, e.where))
                continue
            outs = tuple(o for o, w in zip(e.outputs, writes, strict=True) if w is not None)
            shape, dtype = meta[outs[0]] if outs else ((), None)
            out.append(Step(n, e.name, "in-place" if e.effect else "call", reads, outs,
                            freed, _args_text(e.args, e.kwargs), shape, dtype))
        return tuple(out)

    def _slot_meta(self) -> list:
        return self._meta

    @property
    def inputs(self) -> tuple:
        """The input slots, ``(shape, dtype)`` each."""
        return tuple(self._meta[k] for k in range(self.n_inputs))

    @property
    def outputs(self) -> tuple:
        """The output leaves: a slot number, or the constant returned every time."""
        return tuple(t.k if type(t) is Slot else t for t in self._out_template)

    @property
    def guards(self) -> tuple[Step, ...]:
        """The guards, in the order they are checked."""
        return tuple(s for s in self.steps if s.kind == "guard")

    @property
    def dropped(self) -> int:
        """How many recorded steps the liveness analysis dropped (results nothing reads)."""
        return len(self._starts) - len(self._schedule()[0])

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def _summary(self) -> str:
        def count(k, word):
            return f"{k} {word}" if k == 1 else f"{k} {word}s"

        steps = self.steps
        n_guards = sum(s.kind == "guard" for s in steps)
        return (f"Plan: {count(self.n_inputs, 'input')}, {count(len(self._out_template), 'output')}"
                f", {count(len(steps) - n_guards, 'step')}, {count(n_guards, 'guard')}"
                f" ({self.dropped} dropped as dead)")

    def __repr__(self) -> str:
        return f"<{self._summary()}>"

    def _table(self) -> list[tuple[str, ...]]:
        rows = [("step", "op", "args", "out", "shape", "dtype", "frees")]
        for k in range(self.n_inputs):
            shape, dtype = self._meta[k]
            rows.append(("in", "input", "", f"%{k}", str(shape), str(dtype), ""))
        for s in self.steps:
            rows.append((str(s.index), s.op, s.args + (f"  [{s.where}]" if s.where else ""),
                         ", ".join(f"%{o}" for o in s.outputs),
                         str(s.shape) if s.kind != "guard" else "",
                         str(s.dtype) if s.kind != "guard" else "",
                         ", ".join(f"%{f}" for f in s.frees)))
        return rows

    def __str__(self) -> str:
        rows = self._table()
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        lines = [self._summary()]
        for r in rows:
            lines.append(("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
                         .rstrip())
        lines.append("  outputs: " + ", ".join(
            f"%{o}" if type(o) is int else f"const {short_text(o)}" for o in self.outputs))
        return "\n".join(lines)

    def to_dot(self, name: str = "plan") -> str:
        """Graphviz DOT source: a box per step, an arrow per slot from writer to reader."""
        lines = [f"digraph {dot_str(name)} {{", "  rankdir=TB;",
                 ('  node [shape=box, style="rounded,filled", fillcolor=white, '
                  'fontname="Helvetica", fontsize=10];')]
        writer: dict[int, str] = {}
        for k in range(self.n_inputs):
            shape, dtype = self._meta[k]
            lines.append(f"  in{k} [label={dot_str(f'%{k} input' + chr(10) + f'{shape} {dtype}')}"
                         ', fillcolor="#dbe8f6"];')
            writer[k] = f"in{k}"
        outs = {o for o in self.outputs if type(o) is int}
        edges = []
        for s in self.steps:
            node = f"s{s.index}"
            if s.kind == "guard":
                label = f"{s.op}\n{s.args}"
                lines.append(f"  {node} [label={dot_str(label)}, shape=diamond, "
                             'fillcolor="#fde9c8"];')
            else:
                label = f"{s.index} {s.op}\n{s.shape} {s.dtype}"
                extra = ", peripheries=2" if outs & set(s.outputs) else ""
                extra += ', fillcolor="#eeeeee"' if s.kind == "in-place" else ""
                lines.append(f"  {node} [label={dot_str(label)}{extra}];")
            for r in s.inputs:
                if r in writer:
                    edges.append(f"  {writer[r]} -> {node} [label=\"%{r}\"];")
            for o in s.outputs:
                writer[o] = node
        lines += edges
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_svg(self) -> str:
        """The plan drawn as an SVG document, with funcgrad's own layout (no Graphviz needed).

        A box per step (a diamond per guard, grey for in-place steps, a double
        outline for outputs), an arrow per slot from its writer to each reader.
        Plans of more than ``drawing.MAX_NODES`` steps are condensed as graphs are.

        >>> import numpy, funcgrad as fg, funcgrad.numpy as fnp
        >>> f = fg.replay(fg.grad(lambda x: fnp.sum(fnp.sin(x))))
        >>> _ = f(numpy.ones(2))
        >>> f.plans[0].to_svg().startswith("<svg")
        True
        """
        boxes, edges, kinds, writer = [], [], [], {}
        for k in range(self.n_inputs):
            shape, dtype = self._meta[k]
            boxes.append(drawing.Box([f"%{k} input", f"{shape} {dtype}"], fill="#dbe8f6"))
            kinds.append("input")
            writer[k] = k
        outs = {o for o in self.outputs if type(o) is int}
        for s in self.steps:
            me = len(boxes)
            if s.kind == "guard":
                boxes.append(drawing.Box([s.op, s.args[:40]], shape="diamond", fill="#fde9c8"))
            else:
                boxes.append(drawing.Box([f"{s.index} {s.op}", f"{s.shape} {s.dtype}"],
                                      double=bool(outs & set(s.outputs)),
                                      fill="#eeeeee" if s.kind == "in-place" else "#ffffff"))
            kinds.append(s.op)
            edges += [(writer[r], me, f"%{r}") for r in s.inputs if r in writer]
            for o in s.outputs:
                writer[o] = me
        if len(boxes) > drawing.MAX_NODES or drawing.points(len(boxes), edges) > drawing.MAX_POINTS:
            groups, gedges, _ = drawing.condense(kinds, [e[:2] for e in edges])
            if len(groups) > drawing.MAX_CONDENSED:
                counts: dict = {}
                for k in kinds:
                    counts[k] = counts.get(k, 0) + 1
                return drawing.summary_card(self._summary(), sorted(
                    counts.items(), key=lambda kv: (-kv[1], kv[0])), "its commonest steps:")
            boxes = [drawing.Box([kind if n == 1 else f"{kind} \u00d7{n}"])
                     for kind, n, _ in groups]
            edges = gedges
        return drawing.render(boxes, edges, title=self._summary())

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        return self._html(self.to_svg())

    def _html(self, svg: str) -> str:
        rows = self._table()
        esc = html.escape
        head = "".join(f"<th>{esc(c)}</th>" for c in rows[0])
        body = []
        for k, r in enumerate(rows[1:]):
            if k == HTML_MAX_ROWS:
                body.append(f"<tr><td colspan='{len(r)}'>... {len(rows) - 1 - k} more</td></tr>")
                break
            body.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>")
        return (f"<div><p><b>{esc(self._summary())}</b></p>{svg}<details><summary>steps"
                f"</summary><table class='funcgrad-plan'><thead><tr>{head}</tr></thead><tbody>"
                f"{''.join(body)}</tbody></table></details></div>")


def _args_text(targs: tuple, tkw: dict | None) -> str:
    parts = [_text(a) for a in targs]
    parts += [f"{k}={_text(v)}" for k, v in (tkw or {}).items()
              if v is not None and v is not False]
    return ", ".join(parts)


def _text(tm: Any) -> str:
    t = type(tm)
    if t is Slot:
        return f"%{tm.k}"
    if t is tuple or t is list:
        inner = ", ".join(_text(o) for o in tm)
        return f"({inner}{',' if len(tm) == 1 and t is tuple else ''})" if t is tuple else \
            f"[{inner}]"
    if t is slice:
        text = ":".join("" if v is None else _text(v) for v in (tm.start, tm.stop, tm.step))
        return text[:-1] if tm.step is None else text
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in tm.items()) + "}"
    return short_text(tm)


def _fresh(c: Any) -> Any:
    """A constant output, copied when it is an array (results never alias each other)."""
    copy = getattr(c, "copy", None)
    return copy() if callable(copy) and hasattr(c, "shape") else c


__all__ = ["GuardFailed", "Plan", "Step", "same"]
