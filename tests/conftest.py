"""Test configuration: make the shared table helpers importable from every test module."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import pytest


@pytest.fixture
def standin():
    """The strict stand-in device (tests/standin.py), registered for one test."""
    import standin as module

    with module.registered():
        yield module
