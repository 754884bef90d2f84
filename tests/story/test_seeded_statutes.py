"""The shipped demo story seeds whole statutes: every statute the offline engine takes from the
script's replies is a whole sentence of the script (never "…工作日延长工作时间的。", cut mid-sentence)."""
from __future__ import annotations

import json

from remember.extraction.offline.engine import extract_offline
from showcase.story.script import OFFLINE_SCRIPT


def test_every_seeded_statute_is_a_whole_sentence_of_the_script():
    script = json.loads(OFFLINE_SCRIPT.read_text(encoding="utf-8"))
    statutes = []
    for turn in script["turns"]:
        sentences = {sentence + "。" for sentence in turn["assistant"].split("。") if sentence}
        for item in extract_offline(turn["user"], turn["assistant"], user_name="alice", reply_name="assistant"):
            if "《" in item.content and item.content.startswith(("根据", "依据", "依照")):
                statutes.append(item.content)
                assert item.content in sentences, f"cut statute: {item.content}"
    assert len(statutes) >= 10
