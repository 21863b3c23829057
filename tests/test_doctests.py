"""The `>>>` examples in the docstrings of the main public functions run and print what they say.

Only the listed modules are collected (not the whole tree through pytest's addopts): their
examples are fast and need nothing but the packaged offline models.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "internals.load",
    "lingprobe.feature_set",
    "internals.subject",
    "internals.sites",
    "internals.span_attention",
    "probes.grid",
    "probes.train",
    "probes.logistic",
    "probes.directions",
    "suites.tasks",
    "suites.datasets",
    "suites.edge.experiment",
    "suites.structural.experiment",
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    outcome = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert outcome.attempted > 0, f"{name} has no examples"
    assert outcome.failed == 0
