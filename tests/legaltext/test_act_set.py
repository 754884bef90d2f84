"""The act set (evaluation/acts/) and its scoring: the sentences load whole, the rule
reader and the learned baseline are scored on them, and a missing set fails loudly."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from evaluation import acts_scoring


def test_the_set_holds_every_act_in_both_languages_from_both_writers():
    found = acts_scoring.examples()
    by_act = Counter(e.act for e in found)
    assert set(by_act) == set(acts_scoring.ACTS) and min(by_act.values()) >= 100
    assert {e.language for e in found} == {"zh", "en"}
    assert {e.writer for e in found} == {"a", "b"}
    assert len({e.text for e in found}) == len(found)  # no sentence twice


def test_a_missing_set_fails_loudly(tmp_path):
    with pytest.raises(FileNotFoundError):
        acts_scoring.examples(tmp_path)


def test_a_bad_label_names_its_line(tmp_path):
    (tmp_path / "zh_x.jsonl").write_text('{"text": "想要回押金", "act": "wish"}\n{"text": "x", "act": "hope"}\n',
                                         encoding="utf-8")
    with pytest.raises(ValueError, match="zh_x.jsonl:2"):
        acts_scoring.examples(tmp_path)


def test_the_rule_reader_is_scored_per_act():
    found = [acts_scoring.Example("我希望房东把押金退给我。", "wish", "zh", "a"),
             acts_scoring.Example("房东扣了我3000元押金。", "fact", "zh", "a")]
    report = acts_scoring.rule_reader(found)
    assert report.said[("wish", "wish")] == 1 and report.said[("fact", "fact")] == 1
    assert report.lines()[0].endswith("accuracy 1.000 (2/2)")


def test_the_regression_separates_what_its_vectors_separate():
    rng = np.random.default_rng(7)
    centres = np.eye(len(acts_scoring.ACTS), 8) * 3
    labels = np.repeat(np.arange(len(acts_scoring.ACTS)), 20)
    vectors = centres[labels] + rng.normal(scale=0.3, size=(len(labels), 8))
    weights, biases = acts_scoring.fit(vectors, labels)
    assert ((vectors @ weights.T + biases).argmax(axis=1) == labels).mean() == 1.0
