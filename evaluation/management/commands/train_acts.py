"""``manage.py train_acts``: fit the act model the offline engine reads a person's sentences with
(``remember/extraction/act_model.py``) on the whole act set (evaluation/acts/), under the
configured embedder, and write its weights. ``evaluate_acts`` gives the held-out figures."""
from __future__ import annotations

import numpy as np
from django.core.management.base import BaseCommand

from infra.embeddings import embedder_identity, get_embedder
from remember.extraction import act_model
from evaluation import acts_scoring


class Command(BaseCommand):
    help = "Fit the act model on the act set and write remember/extraction/act_model.json."

    def handle(self, *args, **options) -> None:
        found = acts_scoring.examples()
        embedder = get_embedder()
        vectors = embedder.embed_passages([e.text for e in found])
        labels = np.array([act_model.ACTS.index(e.act) for e in found])
        weights, biases = acts_scoring.fit(vectors, labels)
        name = embedder_identity(embedder)
        act_model.ActModel(name, weights.astype(np.float32), biases.astype(np.float32)).write_file(
            about=f"manage.py train_acts: softmax regression on {len(found)} sentences of evaluation/acts")
        self.stdout.write(f"fitted on {len(found)} sentences under {name}: {act_model.MODEL_PATH}")
