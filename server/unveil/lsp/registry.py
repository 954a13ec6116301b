"""The one registration point of the language server's features (esbonio style).

Each module in :mod:`unveil.lsp.features` exposes ``register(server)`` and imports only this
module (for :func:`safe`) and :mod:`unveil.core`; :func:`unveil.lsp.server.create_server` imports
the modules named in :data:`FEATURE_MODULES` and calls ``register`` on each, in that order. So the
server sits above its features and nothing imports it back (checked by
``scripts/check_imports.py``).

Adding a feature: write ``unveil/lsp/features/<name>.py`` with ``register(server)`` and add
``<name>`` to :data:`FEATURE_MODULES`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any, Callable

log = logging.getLogger("unveil.lsp")

FEATURE_MODULES: tuple[str, ...] = (
    "configuration",
    "diagnostics",
    "hover",
    "inlay_hints",
    "code_actions",
    "reveal",
    "workspace",
    "completion",
    "lock",
)
"""Module names under :mod:`unveil.lsp.features`, registered in this order."""


def safe(default: Any = None) -> Callable:
    """Decorator for handlers: an exception is logged with its traceback and ``default`` is
    returned, so a bug never reaches the client as an error response or a pop-up. Works for
    plain and ``async`` functions and keeps the signature (pygls inspects it for ``ls``)."""

    def wrap(fn: Callable) -> Callable:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001
                    log.exception("handler %s failed", fn.__name__)
                    return default

            return run_async

        @functools.wraps(fn)
        def run_sync(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:  # noqa: BLE001
                log.exception("handler %s failed", fn.__name__)
                return default

        return run_sync

    return wrap
