"""Several LegalMem processes on the test database, for tests/site/test_scale_out.py: a private
redis-server, Daphne servers and ``run_worker``s started as `make run` starts them
(``legalmem_site.serving``), each in its own process group, all stopped when the block ends —
whatever happened inside it."""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from legalmem_site.serving import free_port, spawn_daphne, start_worker, stop_process, wait_until_listening

STARTUP_SECONDS = 120  # a loaded 2-core machine imports Django and the embedder slowly


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A redis-server of its own on a free port: no persistence, not daemonized, its files in
    ``folder``. Yields its URL. Debian's package (``make redis``); missing, the test fails."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is missing: `make test` installs Debian's package (`make redis`)"
    port = free_port()
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--daemonize", "no", "--save", "",
         "--appendonly", "no", "--dir", str(folder), "--logfile", str(folder / "redis.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                log = (folder / "redis.log").read_text(errors="replace")[-2000:]
                assert process.poll() is None, f"redis-server exited during start-up: {log}"
                assert time.monotonic() < deadline, f"redis-server did not start within 30s: {log}"
                time.sleep(0.1)
        client.close()
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_process(process)


@dataclass
class Cluster:
    ports: list[int]  # one per Daphne server
    workers: list[subprocess.Popen]
    folder: Path  # every process's log

    def http(self, server: int) -> str:
        return f"http://127.0.0.1:{self.ports[server]}"

    def ws(self, server: int) -> str:
        return f"ws://127.0.0.1:{self.ports[server]}/ws/chat/"

    def logs(self) -> str:
        """The tail of every process's log, for an assertion message."""
        return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
                         for path in sorted(self.folder.glob("*.log")))


@contextmanager
def cluster(env: dict[str, str], folder: Path, *, servers: int = 2, workers: int = 2) -> Iterator[Cluster]:
    """``servers`` Daphne processes and ``workers`` ``run_worker``s sharing ``env`` (the database,
    Redis, the LLM); yields once every server listens."""
    ports = [free_port() for _ in range(servers)]
    env = {**env, "ALLOWED_HOSTS": "127.0.0.1,localhost",
           "CSRF_TRUSTED_ORIGINS": ",".join(f"http://127.0.0.1:{port}" for port in ports)}
    processes: list[subprocess.Popen] = []
    with ExitStack() as logs:
        try:
            for number in range(workers):
                output = logs.enter_context((folder / f"worker-{number}.log").open("wb"))
                processes.append(start_worker(env, "--interval", "0.2", output=output))
            started = [spawn_daphne(port, env, stderr=logs.enter_context((folder / f"daphne-{number}.log").open("wb")))
                       for number, port in enumerate(ports)]
            processes.extend(started)
            the_cluster = Cluster(ports, processes[:workers], folder)
            for process, port in zip(started, ports):
                try:
                    wait_until_listening(process, port, timeout=STARTUP_SECONDS)
                except RuntimeError as exc:
                    raise AssertionError(f"{exc}\n{the_cluster.logs()}") from None
            yield the_cluster
        finally:
            for process in processes:
                stop_process(process)
