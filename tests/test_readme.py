"""The README's Python examples run as written, in order, as one session."""

from __future__ import annotations

import pathlib
import re
import warnings

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_examples_run_in_order():
    assert len(BLOCKS) >= 2
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example that warns is a wrong example
        for index, block in enumerate(BLOCKS):
            exec(compile(block, f"README block {index}", "exec"), namespace)  # noqa: S102
