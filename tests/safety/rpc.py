"""A raw JSON-RPC client for ``unveil serve`` in a subprocess: exact bytes on the wire, so tests
can send malformed frames, requests out of order, and watch the exit code."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

SERVER = [sys.executable, "-m", "unveil", "serve"]


def frame(obj) -> bytes:
    body = json.dumps(obj).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(self, cmd=None, env=None, cwd=None):
        self.proc = subprocess.Popen(
            cmd or SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.seen: list[dict] = []
        self._next = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode("ascii", "replace").partition(":")
                headers[k.strip().lower()] = v.strip()
            n = int(headers.get("content-length", "0"))
            body = out.read(n)
            try:
                self.messages.put(json.loads(body))
            except ValueError:
                pass

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj) -> None:
        self.send_raw(frame(obj))

    def notify(self, method: str, params=None) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def request_id(self, method: str, params=None) -> int:
        self._next += 1
        msg = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self._next

    def wait(self, pred, timeout: float = 20.0) -> dict:
        """The first message (already seen or arriving) for which ``pred`` is true; answers
        server-to-client requests with null on the way."""
        for m in self.seen:
            if pred(m):
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout} s")
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(m)
            if "method" in m and "id" in m:  # a server request: answer
                result = (
                    [None] * len((m.get("params") or {}).get("items", []))
                    if m["method"] == "workspace/configuration"
                    else None
                )
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
            if pred(m):
                return m

    def request(self, method: str, params=None, timeout: float = 20.0) -> dict:
        rid = self.request_id(method, params)
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def initialize(self, root: str | None = None, options=None, encodings=None) -> dict:
        caps = {"general": {"positionEncodings": encodings}} if encodings else {}
        params = {"processId": os.getpid(), "rootUri": root, "capabilities": caps}
        if options is not None:
            params["initializationOptions"] = options
        r = self.request("initialize", params)
        self.notify("initialized", {})
        return r

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": version, "text": text}},
        )

    def publish(self, uri: str, version: int | None = None, timeout: float = 20.0, after: int = 0) -> dict:
        def ok(m):
            p = m.get("params") or {}
            return (
                m.get("method") == "textDocument/publishDiagnostics"
                and p.get("uri") == uri
                and (version is None or p.get("version") == version)
            )

        return self.wait(ok, timeout)["params"]

    def close(self, timeout: float = 10.0) -> int:
        try:
            self.request("shutdown", None, timeout)
            self.notify("exit")
        except (AssertionError, BrokenPipeError, OSError):
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
