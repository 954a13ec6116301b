"""Modules imported on first use.

:func:`lazy_module` is the recipe of the Python documentation (``importlib`` — "Implementing lazy
imports", https://docs.python.org/3/library/importlib.html#implementing-lazy-imports), with the
module also bound as its parent package's attribute, so ``from package import name``,
``import package.name`` and ``unittest.mock.patch("package.name.x")`` all find the same object.
Pure: no LSP, no CLI imports."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name`` (dotted, absolute), whose code runs when one of its attributes is
    first read; the module itself when it is already imported. Raises ``ModuleNotFoundError``
    when there is no such module (found now: only its execution is deferred)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module
