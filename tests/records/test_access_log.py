"""The server's access log (docs/operations.md, "Logs"): paths, never query strings. Daphne's own
access log (one line per request on stdout, query string included) is off; ours logs the path."""
from __future__ import annotations

import os
import subprocess
import urllib.request

import pytest

from legalmem_site.serving import daphne_command, free_port, stop_process, wait_until_listening
from tests.live_server import test_database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.live_server]

ID_NUMBER = "330102199001011234"


def test_a_searched_id_number_reaches_no_line_the_server_writes(tmp_path):
    log = tmp_path / "server.log"
    port = free_port()
    env = {**os.environ, "DATABASE_URL": test_database_url(), "ALLOWED_HOSTS": "127.0.0.1"}
    with log.open("wb") as output:  # stdout and stderr, as `make run` shows them
        process = subprocess.Popen(daphne_command("127.0.0.1", port), env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until_listening(process, port)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz?q={ID_NUMBER}") as response:
                assert response.status == 200
        finally:
            stop_process(process)
    written = log.read_text(errors="replace")
    assert ID_NUMBER not in written, written[-2000:]
