"""Issue 17's budgets, read from the source with ``ast``: the core reads in one sitting.

- STYLE.md's five core files (node, primitive, backprop, forward, combinators) hold at most
  1,600 lines together;
- no function in them is longer than 60 lines (``def`` to its last line, docstring and
  nested functions included);
- no function anywhere in the package has a cyclomatic complexity of 21 or more, counted
  as radon counts it (radon's "D" and worse), without depending on radon: 1, plus one per
  ``if``/``elif`` and conditional expression, per ``for``/``while`` (one more with an
  ``else``), per ``except`` handler (one more for a ``try``'s ``else``), per ``assert``,
  per comprehension (plus its ``if``s), per extra operand of ``and``/``or``, per ``match``
  case other than a final ``_``. A nested function is a function of its own and adds
  nothing to the one around it; a lambda's body counts toward its enclosing function.

Each failure lists every offender with its figure.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "funcgrad"
CORE = ("node.py", "primitive.py", "backprop.py", "forward.py", "combinators.py")
CORE_LINES, FUNCTION_LINES, COMPLEXITY = 1600, 60, 21

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def complexity(fun: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Radon's cyclomatic complexity of one function (see the module's docstring).

    >>> complexity(ast.parse('def f(x):\\n    return [y for y in x if y] or x').body[0])
    4
    """
    score = 1
    stack = list(fun.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            continue  # a block of its own
        if isinstance(node, (ast.If, ast.IfExp, ast.Assert)):
            score += 1
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            score += 1 + bool(node.orelse)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            score += len(node.handlers) + bool(node.orelse)
        elif isinstance(node, ast.BoolOp):
            score += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            score += 1 + len(node.ifs)
        elif isinstance(node, ast.Match):
            final_wildcard = any(getattr(c.pattern, "pattern", False) is None for c in node.cases)
            score += max(0, len(node.cases) - final_wildcard)
        stack.extend(ast.iter_child_nodes(node))
    return score


def _functions(path: pathlib.Path):
    """``(qualified name, node)`` for every function and method of ``path``, nested too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*_FUNCTIONS, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if isinstance(child, _FUNCTIONS):
                    yield name, child
                yield from visit(child, name + ".")
            else:
                yield from visit(child, prefix)

    yield from visit(tree, "")


def _where(path: pathlib.Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_the_five_core_files_fit_the_line_budget():
    counts = {name: len((PACKAGE / name).read_text(encoding="utf-8").splitlines())
              for name in CORE}
    total = sum(counts.values())
    assert total <= CORE_LINES, (
        f"the core files hold {total} lines, over the budget of {CORE_LINES}: "
        + ", ".join(f"{name} {n}" for name, n in counts.items()))


def test_no_core_function_is_longer_than_the_budget():
    long = [f"{name}:{fun.lineno} {qual} ({fun.end_lineno - fun.lineno + 1} lines)"
            for name in CORE for qual, fun in _functions(PACKAGE / name)
            if fun.end_lineno - fun.lineno + 1 > FUNCTION_LINES]
    assert not long, (f"core functions over {FUNCTION_LINES} lines:\n  " + "\n  ".join(long))


def test_no_function_in_the_package_is_too_complex():
    tangled = sorted(
        ((complexity(fun), f"{_where(path)}:{fun.lineno} {qual}")
         for path in sorted(PACKAGE.rglob("*.py")) for qual, fun in _functions(path)),
        reverse=True)
    over = [f"{where} (complexity {score})" for score, where in tangled if score >= COMPLEXITY]
    assert not over, (f"functions of cyclomatic complexity >= {COMPLEXITY}:\n  "
                      + "\n  ".join(over))


def test_the_count_is_radons():
    """Each construct of the count, on a function that has them all."""
    source = '''
def f(x, ys):
    assert x
    if x and ys or not x:            # if: 1, and/or: 2
        pass
    elif x:                          # 1
        pass
    for y in ys:                     # 1, and its else: 1
        pass
    else:
        pass
    while x:                         # 1
        break
    try:
        pass
    except ValueError:               # 1
        pass
    except TypeError:                # 1
        pass
    else:                            # 1
        pass
    with open(x):                    # nothing
        pass
    z = [y for y in ys if y if x]    # 1 + 2
    w = (lambda q: q if q else 0)    # the lambda's conditional: 1
    match x:
        case 1:                      # 1
            pass
        case _:                      # nothing
            pass

    def inner(a):                    # a block of its own
        return a if a else [b for b in a]
    return 1 if x else 0             # 1
'''
    fun = ast.parse(source).body[0]
    assert complexity(fun) == 1 + 1 + 3 + 1 + 2 + 1 + 3 + 3 + 1 + 1 + 1
    inner = fun.body[-2]
    assert complexity(inner) == 1 + 1 + 1
