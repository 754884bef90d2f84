"""What a person's sentence does — tells a fact, wants an outcome, plans a step, or says how to be
contacted — read from its embedding by a small linear model, not from a list of phrases.

The rule reader (``legaltext.acts``) finds one wish in eight and one preference in nine of the
sentences of the act set, which it was not written from; a softmax regression over the passage
vectors finds nine in ten, also fitted on one writer and scored on another (docs/evaluation.md,
seventh round). The weights (``act_model.json``) are fitted by ``manage.py train_acts`` on the act
set, under the embedder they record: under another embedder the model is not used.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).resolve().parent / "act_model.json"
#: The acts the model tells apart, in the order of its weights' rows.
ACTS: tuple[str, ...] = ("fact", "wish", "plan", "preference")


@dataclass(frozen=True)
class ActModel:
    """Weights (acts × dimensions) and biases over the vectors of ``embedder``."""

    embedder: str
    weights: np.ndarray
    biases: np.ndarray

    def acts(self, vectors: np.ndarray) -> list[tuple[str, float]]:
        """The most likely act of each vector and its probability."""
        logits = np.atleast_2d(vectors) @ self.weights.T + self.biases
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        found = shifted / shifted.sum(axis=1, keepdims=True)
        return [(ACTS[int(row.argmax())], float(row.max())) for row in found]

    def write_file(self, path: Path = MODEL_PATH, *, about: str = "") -> None:
        path.write_text(json.dumps({
            "about": about, "embedder": self.embedder, "acts": list(ACTS),
            "biases": [round(float(b), 6) for b in self.biases],
            "weights": [[round(float(w), 6) for w in row] for row in self.weights],
        }, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> ActModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["acts"]) != ACTS:
            raise ValueError(f"{path} holds acts {data['acts']}, expected {list(ACTS)}")
        return cls(data["embedder"], np.asarray(data["weights"], dtype=np.float32),
                   np.asarray(data["biases"], dtype=np.float32))


@lru_cache(maxsize=1)
def shipped_model() -> ActModel:
    return ActModel.load()


def read_acts(texts: list[str]) -> list[tuple[str, float]] | None:
    """The act of each text and its probability under the configured embedder — or None when the
    shipped model was fitted under another embedder (its weights would read noise)."""
    from infra.embeddings import embedder_identity, get_embedder

    model = shipped_model()
    embedder = get_embedder()
    if model.embedder != embedder_identity(embedder):
        return None
    return model.acts(embedder.embed_passages(texts)) if texts else []
