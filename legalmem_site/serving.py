"""How Daphne and the worker are started (by `make run`, the tests and the benchmarks): one
command line each, and for the tests a start and a stop of each in its own process group.

Daphne (autobahn) drops a websocket whose message is over its own cap with no frame the page
could show (close 1006). The cap is set well above the chat's own ``CHAT_MAX_FRAME_BYTES`` so an
oversized frame reaches the consumer, which answers with an ``error`` frame and closes cleanly
(4413); only messages over ``CHAT_TRANSPORT_MAX_BYTES`` are still dropped by the transport
(docs/chat-page.md).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

BASE_DIR = Path(__file__).resolve().parent.parent

#: The largest websocket message Daphne reads (16 MiB), far above the chat's own frame limit.
CHAT_TRANSPORT_MAX_BYTES = 16 * 1024 * 1024


def transport_max_bytes() -> int:
    """The largest websocket message Daphne reads (``CHAT_TRANSPORT_MAX_BYTES``)."""
    return CHAT_TRANSPORT_MAX_BYTES


def daphne_command(host: str, port: int | str) -> list[str]:
    """The Daphne command serving the product on ``host:port``."""
    size = str(transport_max_bytes())
    return [
        sys.executable, "-m", "daphne", "-b", host, "-p", str(port),
        "--websocket-max-message-size", size, "--websocket-max-frame-size", size,
        # Daphne's own access log prints full query strings (a search's question, an ID number);
        # ours (infra/logs/requests.py, logger legalmem.access) logs paths only.
        "--access-log", os.devnull,
        "legalmem_site.asgi:application",
    ]


def worker_command(*options: str) -> list[str]:
    """The background worker (``manage.py run_worker``: db_worker plus the takeover watchdog)."""
    return [sys.executable, str(BASE_DIR / "manage.py"), "run_worker", *options]


def start_daphne(port: int, env: dict[str, str], *, stderr: int | IO = subprocess.DEVNULL,
                 timeout: float = 60) -> subprocess.Popen:
    """Daphne serving the product on 127.0.0.1:``port`` with ``env``, in its own session (so
    ``stop_daphne`` ends its whole process group); returns once it listens. For the tests and
    the benchmarks; ``make run`` supervises its server in the launcher."""
    process = spawn_daphne(port, env, stderr=stderr)
    wait_until_listening(process, port, timeout=timeout)
    return process


def spawn_daphne(port: int, env: dict[str, str], *, stderr: int | IO = subprocess.DEVNULL) -> subprocess.Popen:
    """``start_daphne`` without the wait, so several servers start side by side."""
    return subprocess.Popen(
        daphne_command("127.0.0.1", port),
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
    )


def wait_until_listening(process: subprocess.Popen, port: int, *, timeout: float = 60) -> None:
    """Return once ``process`` accepts connections on 127.0.0.1:``port``; stop it and raise
    RuntimeError if it exits or does not listen within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                stop_process(process)
                raise RuntimeError("daphne did not start") from None
            time.sleep(0.2)


def start_worker(env: dict[str, str], *options: str, output: int | IO = subprocess.DEVNULL) -> subprocess.Popen:
    """``run_worker`` with ``env`` in its own session (``stop_process`` ends its process group;
    a test may ``kill -9`` it alone); its stdout and stderr go to ``output``."""
    return subprocess.Popen(worker_command(*options), cwd=BASE_DIR, env=env, stdout=output,
                            stderr=subprocess.STDOUT, start_new_session=True)


def stop_daphne(process: subprocess.Popen) -> None:
    """Stop a server ``start_daphne`` started, and wait for it."""
    stop_process(process)


def stop_process(process: subprocess.Popen, *, grace: float = 20) -> None:
    """SIGTERM to the process group of a process started in its own session, SIGKILL after
    ``grace`` seconds; waits for it either way, so nothing is left running."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            os.killpg(process.pid, signal.SIGCONT)  # a stopped process acts on SIGTERM only once it runs
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=grace)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
