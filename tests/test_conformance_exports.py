"""The public names of ``simclock_conformance``: one export table, ``_HOME``.

``__all__`` is derived from it, the ``TYPE_CHECKING`` imports (what type
checkers see) must name the same names from the same modules, and every name
resolves, lazily, to the object its home module defines.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import simclock_conformance

INIT = Path(simclock_conformance.__file__)
HOME: dict[str, str] = simclock_conformance._HOME


def _type_checking_imports() -> dict[str, str]:
    """``name -> module`` of every import under ``if TYPE_CHECKING:`` in ``__init__.py``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    out: dict[str, str] = {}
    for stmt in blocks[0].body:
        assert isinstance(stmt, ast.ImportFrom) and stmt.module is not None, ast.unparse(stmt)
        for alias in stmt.names:
            # ``X as X``: an explicit re-export, so strict mypy sees the name as public.
            assert alias.asname == alias.name, ast.unparse(stmt)
            out[alias.name] = stmt.module.removeprefix("simclock_conformance.")
    return out


def test_all_is_derived_from_the_export_table() -> None:
    assert simclock_conformance.__all__ == list(HOME)
    assert len(HOME) == 20


def test_type_checking_imports_are_the_export_table() -> None:
    assert _type_checking_imports() == HOME


@pytest.mark.parametrize("name", sorted(HOME))
def test_every_public_name_is_the_object_its_home_module_defines(name: str) -> None:
    module = importlib.import_module(f"simclock_conformance.{HOME[name]}")
    value = getattr(simclock_conformance, name)
    assert value is getattr(module, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        # Defined there, not re-exported from somewhere else: the table names the real home.
        assert value.__module__ == module.__name__


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(
        AttributeError, match=r"^module 'simclock_conformance' has no attribute 'nope'$"
    ):
        simclock_conformance.nope  # noqa: B018


def test_dir_lists_every_export() -> None:
    assert set(simclock_conformance.__all__) <= set(dir(simclock_conformance))


def test_import_loads_none_of_the_suite_until_a_name_is_used() -> None:
    code = (
        "import sys, simclock_conformance\n"
        "print(sorted(m for m in sys.modules if m.startswith('simclock_conformance.')))\n"
        "from simclock_conformance import *\n"
        "print('simclock_conformance.suite._suite_clock' in sys.modules,\n"
        "      ClockConformance.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\nTrue ClockConformance\n"
