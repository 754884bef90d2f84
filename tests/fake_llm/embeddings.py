"""The fake server's embeddings: deterministic feature-hashing vectors, so tests of search see
texts that share words or Chinese characters as similar without a model."""

from __future__ import annotations

import hashlib
import math
import re

_FEATURE_RE = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")


def fake_embedding(text: str, dim: int) -> list[float]:
    """Deterministic unit vector for ``text``: feature hashing of lower-cased
    words, Chinese characters and Chinese character bigrams, so texts that
    share vocabulary are closer. Texts without features get a pure hash vector."""
    pieces = _FEATURE_RE.findall(text.lower())
    features = list(pieces)
    features += [a + b for a, b in zip(pieces, pieces[1:]) if len(a) == 1 and len(b) == 1]
    vec = [0.0] * dim
    for feature in features:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    if not any(vec):
        seed = hashlib.sha256(text.encode("utf-8")).digest()
        for i in range(dim):
            byte = seed[i % len(seed)] ^ (i * 131 % 256)
            vec[i] = byte / 127.5 - 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]
