"""How Daphne is started (by `make run`, the tests and the benchmarks): one command line.

Daphne (autobahn) drops a websocket whose message is over its own cap with no frame the page
could show (close 1006). The cap is set well above the chat's own ``CHAT_MAX_FRAME_BYTES`` so an
oversized frame reaches the consumer, which answers with an ``error`` frame and closes cleanly
(4413); only messages over ``CHAT_TRANSPORT_MAX_BYTES`` are still dropped by the transport
(docs/hardening-input.md).
"""
from __future__ import annotations

import sys

from legalmem_site.environment import env_int

TRANSPORT_MAX_BYTES_DEFAULT = 16 * 1024 * 1024


def transport_max_bytes() -> int:
    """CHAT_TRANSPORT_MAX_BYTES: the largest websocket message Daphne reads (16 MiB)."""
    return env_int("CHAT_TRANSPORT_MAX_BYTES", TRANSPORT_MAX_BYTES_DEFAULT, minimum=65536)


def daphne_command(host: str, port: int | str) -> list[str]:
    """The Daphne command serving the product on ``host:port``."""
    size = str(transport_max_bytes())
    return [
        sys.executable, "-m", "daphne", "-b", host, "-p", str(port),
        "--websocket-max-message-size", size, "--websocket-max-frame-size", size,
        "legalmem_site.asgi:application",
    ]
