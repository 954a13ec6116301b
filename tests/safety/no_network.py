"""Run ``unveil ARGS`` with an audit hook that kills the process (exit 99) on any AF_INET /
AF_INET6 socket, any connect/bind/getaddrinfo, and any exec or subprocess: used by
test_no_network.py so "no socket to the internet, never run anything" stays true."""

import os
import socket
import sys

FORBIDDEN_FAMILIES = {socket.AF_INET, socket.AF_INET6}


def hook(event, args):
    bad = None
    if event == "socket.__new__" and len(args) > 1 and args[1] in FORBIDDEN_FAMILIES:
        bad = f"socket family {args[1]}"
    elif event in ("socket.connect", "socket.bind", "socket.sendto") and args:
        addr = args[-1]
        if not isinstance(addr, (str, bytes)):  # AF_UNIX paths are local
            bad = f"{event} {addr!r}"
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"):
        bad = f"{event} {args!r}"
    elif event in (
        "subprocess.Popen",
        "os.system",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
    ) or event.startswith("os.exec"):
        bad = f"{event} {args!r}"
    if bad:
        os.write(2, f"NETWORK-OR-EXEC VIOLATION: {bad}\n".encode())
        os._exit(99)


sys.addaudithook(hook)
from unveil.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
