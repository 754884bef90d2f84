"""What a person's sentence does — tells a fact, wants an outcome, plans a step, says how to be
contacted: how well the rule reader (``legaltext.acts.act_of``) tells it, beside a learned
baseline over the same sentences.

The set (``acts/*.jsonl``, 720 sentences, Chinese and English, clients and lawyers relaying
them) was written by helpers from a brief, without reading the code. The baseline is a softmax
regression over the configured embedder's passage vectors, scored by five-fold cross-validation
(each fold held out once), so no sentence is scored by a model trained on it. It is the
learned-reader figure the rule reader is measured against (docs/evaluation.md, "Acts").
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).resolve().parent / "acts"
#: The acts the set labels; the reader's "statement" is a fact.
ACTS: tuple[str, ...] = ("fact", "wish", "plan", "preference")
FOLDS = 5
#: Who wrote each file: two helpers, each from the same brief (zh_written_a by one; zh_written_b
#: and en_written by the other). Folds mix both writers' styles; ``across_writers`` does not.
WRITERS = {"zh_written_a.jsonl": "a", "zh_written_b.jsonl": "b", "en_written.jsonl": "b"}
#: The regression: L2 weight, steps and step size of gradient descent on standardised vectors.
L2 = 1e-1
STEPS = 1000
STEP_SIZE = 0.5


@dataclass(frozen=True)
class Example:
    text: str
    act: str
    language: str
    writer: str  # the file it came from: sentences of one writer share a style


def examples(folder: Path = FOLDER) -> list[Example]:
    """Every ``*.jsonl`` of the set, one {"text", "act", "speaker"} per line; a bad line fails loudly."""
    found = []
    paths = sorted(folder.glob("*.jsonl"))
    if not paths:
        raise FileNotFoundError(f"no act sentences in {folder}")
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("act") not in ACTS or not str(row.get("text", "")).strip():
                raise ValueError(f"{path.name}:{number}: expected a text and an act of {ACTS}")
            found.append(Example(row["text"].strip(), row["act"], "en" if path.name.startswith("en") else "zh",
                                 WRITERS.get(path.name, path.stem)))
    return found


@dataclass
class ActReport:
    """Per act: how many sentences, and how many each reader gave that act."""

    name: str
    said: Counter = field(default_factory=Counter)  # (truth, said) -> count

    def add(self, truth: str, said: str) -> None:
        self.said[(truth, said)] += 1

    def lines(self) -> list[str]:
        total = sum(self.said.values())
        right = sum(self.said[(a, a)] for a in ACTS)
        out = [f"{self.name}: accuracy {right / total:.3f} ({right}/{total})"]
        for act in ACTS:
            truth = sum(v for (t, _s), v in self.said.items() if t == act)
            given = sum(v for (_t, s), v in self.said.items() if s == act)
            out.append(f"  {act:<11} recall {self.said[(act, act)]}/{truth}  precision {self.said[(act, act)]}/{given}")
        return out


def rule_reader(found: list[Example]) -> ActReport:
    """``legaltext.acts.act_of`` on each sentence (a statement is a fact; a question or a
    correction is none of the four acts, and counted as missed)."""
    from legaltext.acts import act_of

    report = ActReport("rule reader (legaltext.acts.act_of)")
    for example in found:
        said = act_of(example.text)
        report.add(example.act, "fact" if said == "statement" else said)
    return report


def learned_baseline(found: list[Example], vectors: np.ndarray) -> ActReport:
    """Softmax regression over ``vectors``, each fold scored by a model fitted on the others."""
    report = ActReport(f"learned baseline (softmax regression on embeddings, {FOLDS}-fold)")
    labels = np.array([ACTS.index(e.act) for e in found])
    fold = np.arange(len(found)) % FOLDS
    for held in range(FOLDS):
        weights, biases = fit(vectors[fold != held], labels[fold != held])
        said = (vectors[fold == held] @ weights.T + biases).argmax(axis=1)
        for truth, guess in zip(labels[fold == held], said):
            report.add(ACTS[truth], ACTS[guess])
    return report


def across_writers(found: list[Example], vectors: np.ndarray) -> ActReport:
    """Fitted on one writer's sentences, scored on the other's (Chinese only, both ways): the
    figure that says whether the baseline learned the acts or one writer's style."""
    report = ActReport("learned baseline, fitted on one writer and scored on the other [zh]")
    labels = np.array([ACTS.index(e.act) for e in found])
    for writer in ("a", "b"):
        train = np.array([e.writer == writer and e.language == "zh" for e in found])
        scored = np.array([e.writer != writer and e.language == "zh" for e in found])
        weights, biases = fit(vectors[train], labels[train])
        for truth, guess in zip(labels[scored], (vectors[scored] @ weights.T + biases).argmax(axis=1)):
            report.add(ACTS[truth], ACTS[guess])
    return report


def fit(vectors: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights (acts × dimensions) and biases, classes weighted equally; the standardisation of
    the vectors is folded back into the weights."""
    raw = np.asarray(vectors, dtype=np.float64)
    mean, scale = raw.mean(axis=0), raw.std(axis=0) + 1e-6
    x = (raw - mean) / scale
    counts = np.bincount(labels, minlength=len(ACTS)).astype(np.float64)
    sample_weight = (len(labels) / (len(ACTS) * np.maximum(counts, 1)))[labels]
    onehot = np.eye(len(ACTS))[labels]
    weights = np.zeros((len(ACTS), x.shape[1]))
    biases = np.zeros(len(ACTS))
    for _ in range(STEPS):
        logits = x @ weights.T + biases
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        error = (shifted / shifted.sum(axis=1, keepdims=True) - onehot) * sample_weight[:, None] / len(labels)
        weights -= STEP_SIZE * (error.T @ x + L2 * weights)
        biases -= STEP_SIZE * error.sum(axis=0)
    folded = weights / scale
    return folded, biases - folded @ mean


def score() -> list[ActReport]:
    """Both readers on the whole set, each language apart too."""
    from infra.embeddings import get_embedder

    found = examples()
    vectors = get_embedder().embed_passages([e.text for e in found])
    reports = [rule_reader(found), learned_baseline(found, vectors), across_writers(found, vectors)]
    for language in ("zh", "en"):
        mine = [i for i, e in enumerate(found) if e.language == language]
        part = [found[i] for i in mine]
        rules, learned = rule_reader(part), learned_baseline(part, vectors[mine])
        rules.name, learned.name = f"{rules.name} [{language}]", f"{learned.name} [{language}]"
        reports += [rules, learned]
    return reports
