"""JSON-RPC robustness in our layer over pygls 2.1 (issue 9, items 12, 13 and 15).

Stock pygls 2.1.1, and what :class:`UnveilProtocol` / :func:`run_async` do instead:

* **Framing.** ``pygls.io_.run_async`` only accepts a header line that *is*
  ``Content-Length: N\\r\\n``. After one frame with a wrong length, the leftover bytes are glued
  to the next header line, which then never matches again: the server is deaf for good. Our
  loop finds the last ``Content-Length:`` header anywhere in a line, so it resynchronises on
  the next message. (Upstream: search, not fullmatch, and reset on a body that is not JSON.)
* **Unanswered requests.** pygls structures the message inside ``json.loads``'s
  ``object_hook``; a request with invalid params raises there and is only logged, so the client
  waits forever. We parse first, then structure, and answer ``InvalidParams`` (-32602). LSP
  positions are ``uinteger`` (0..2^31-1); a negative or larger ``line``/``character`` is
  ``InvalidParams`` too. Invalid JSON is a ``ParseError`` (-32700) with id null.
  (Upstream: structure after parsing; validate ``uinteger``.)
* **Lifecycle.** pygls serves requests before ``initialize``, accepts a second ``initialize``
  and silently drops requests after ``shutdown``. We answer ``ServerNotInitialized`` (-32002)
  before ``initialize`` (notifications other than ``exit`` are dropped, as LSP 3.17 says),
  ``InvalidRequest`` (-32600) for a second ``initialize`` and for any request after
  ``shutdown``. ``exit`` without ``shutdown`` makes ``unveil serve`` exit 1 (pygls's
  ``sys.exit(1)`` is swallowed by ``start_io``). (Upstream: a lifecycle state machine in
  ``handle_message``; propagate the exit code.)
* **A future per notification.** ``JsonRPCProtocol._execute_handler`` stores the future of
  every async, threaded or generator handler in ``_request_futures`` under a fresh uuid, and
  only request responses ever remove theirs: about 2 KB per notification (``didOpen``,
  ``didChange``, ``didClose`` are generator handlers), without bound. We remove each future
  when it is done. (Upstream: do not store notification futures, or pop them in
  ``_check_handler_result`` and in ``_run_generator``.)
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger("unveil.lsp.protocol")

UINTEGER_MAX = 2**31 - 1
"""LSP ``uinteger``: 0..2^31-1 (LSP 3.17, "Base Types")."""

_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n?$", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024
"""A Content-Length above this (bytes) is treated as a framing error, not a read."""


def bad_position(value: Any, depth: int = 0) -> str | None:
    """The first ``line`` / ``character`` in ``value`` (parsed JSON params) that is not an LSP
    ``uinteger``, described, else ``None``. Looks at most 12 levels deep."""
    if depth > 12:
        return None
    if isinstance(value, dict):
        for key in ("line", "character"):
            if key in value:
                v = value[key]
                if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= UINTEGER_MAX:
                    return f"{key} must be an integer in 0..{UINTEGER_MAX}, got {v!r}"
        for v in value.values():
            if isinstance(v, (dict, list)):
                got = bad_position(v, depth + 1)
                if got:
                    return got
    elif isinstance(value, list):
        for v in value[:10_000]:
            if isinstance(v, (dict, list)):
                got = bad_position(v, depth + 1)
                if got:
                    return got
    return None


class UnveilProtocol(LanguageServerProtocol):
    """``LanguageServerProtocol`` with the lifecycle checks and the future clean-up described in
    the module docstring."""

    def __init__(self, server, converter):
        super().__init__(server, converter)
        self.initialize_received = False
        self.exit_code: int | None = None

    # -- errors ---------------------------------------------------------------------------
    def send_error(self, msg_id, exc: JsonRpcException) -> None:
        self._send_response(msg_id, None, exc.to_response_error())

    # -- parse, validate, structure ---------------------------------------------------------
    def handle_body(self, body: bytes) -> None:
        """One frame's body: parse, validate, structure and dispatch; answer what cannot be."""
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("invalid JSON in a message: %s", exc)
            self.send_error(None, JsonRpcParseError(f"invalid JSON: {exc}"))
            return
        if not isinstance(data, dict):
            self.send_error(None, JsonRpcInvalidRequest("a message must be a JSON object"))
            return
        is_request = "id" in data and "method" in data
        if "method" in data and "params" in data:
            problem = bad_position(data["params"])
            if problem:
                if is_request:
                    self.send_error(data["id"], JsonRpcInvalidParams(f"invalid params: {problem}"))
                else:
                    log.warning("dropped %s notification: %s", data.get("method"), problem)
                return
        try:
            message = json.loads(body, object_hook=self.structure_message)
        except JsonRpcException as exc:
            if is_request:
                self.send_error(
                    data["id"],
                    exc
                    if isinstance(exc, JsonRpcInvalidParams)
                    else JsonRpcInvalidParams(f"invalid params for {data.get('method')}"),
                )
            else:
                log.warning("dropped a malformed %s message", data.get("method"))
            return
        except Exception:  # noqa: BLE001 - never stop reading
            log.exception("could not structure a message")
            if is_request:
                self.send_error(data["id"], JsonRpcInvalidParams(f"invalid params for {data.get('method')}"))
            return
        try:
            self.handle_message(message)
        except Exception:  # noqa: BLE001
            log.exception("could not handle a message")
            if is_request:
                from pygls.exceptions import JsonRpcInternalError

                self.send_error(data["id"], JsonRpcInternalError("internal error"))

    # -- lifecycle ------------------------------------------------------------------------
    def handle_message(self, message) -> None:
        method = getattr(message, "method", None)
        is_request = method is not None and getattr(message, "id", None) is not None
        if method == "exit":
            self.exit_code = 0 if self._shutdown else 1
        elif not self.initialize_received and method is not None:
            if method == "initialize" and is_request:
                self.initialize_received = True
            elif is_request:
                self.send_error(message.id, JsonRpcServerNotInitialized("the server has not been initialized"))
                return
            else:
                return  # LSP 3.17: notifications before initialize are dropped
        elif method == "initialize" and is_request:
            self.send_error(message.id, JsonRpcInvalidRequest("initialize was already received"))
            return
        elif self._shutdown and method is not None:
            if is_request:
                self.send_error(message.id, JsonRpcInvalidRequest("the server is shutting down"))
            return
        super().handle_message(message)

    # -- no future kept per notification ------------------------------------------------------
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        futures = self._request_futures

        def done(future, _callback=callback, _id=msg_id):
            if futures.get(_id) is future:
                del futures[_id]
            _callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)


async def run_async(stop_event, reader, protocol: UnveilProtocol) -> None:
    """The message loop of ``pygls.io_.run_async`` with resynchronisation: a header line is
    searched for ``Content-Length:`` (the last one wins), so bytes left over from a frame with a
    wrong length only cost that frame. Reads until EOF or ``stop_event``."""
    content_length: int | None = None
    while not stop_event.is_set():
        header = await reader.readline()
        if not header:
            break
        m = _CONTENT_LENGTH.search(header)
        if m:
            n = int(m.group(1))
            content_length = n if n <= MAX_BODY else None
            if content_length is None:
                log.warning("ignored a frame with Content-Length %d", n)
            continue
        if header.strip():
            continue  # another header (Content-Type) or garbage between frames
        if content_length is None:
            continue  # an empty line without a length: nothing to read
        n, content_length = content_length, None
        body = await reader.readexactly(n) if n else b""
        if n and not body:
            break  # EOF
        protocol.handle_body(body)
