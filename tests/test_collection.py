"""Each module's doctests pass when pytest collects that module alone.

``fg.hooks`` and ``fg.primitive`` are functions named like their modules
(``funcgrad.hooks``, ``funcgrad.primitive``).  An import mode that loads a
module a second time rebinds the package attribute to the module and
duplicates classes, and those doctests then fail depending on what was
collected first: pytest must import the package the ordinary way.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_doctests_of_modules_named_like_public_functions_pass_alone():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "funcgrad/hooks.py", "funcgrad/primitive.py", "funcgrad/node.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
