"""A message whose value a later correction replaced ranks below the current note that replaced
it (issue 50, the live first hour: "林晓雯的押金是2000元…" ranked above "押金3000元"); history
questions are left to their own ordering; the search applies it over real notes."""
from __future__ import annotations

from recall.fusion import BELOW_SUCCESSOR, below_their_corrections
from recall.types import MESSAGE, NOTE
from tests.recall.test_raw_floor import entry


def _ranked(*slots):
    for position, slot in enumerate(slots):
        slot.fused = 1.0 - position * 0.1
    return list(slots)


def test_the_replaced_message_goes_just_below_the_note_that_replaced_it() -> None:
    old_message = entry((MESSAGE, 11), 0.9)
    other = entry((MESSAGE, 12), 0.8)
    corrected = entry((NOTE, "n-3000"), 0.7, sources=(11, 14))
    slots = _ranked(old_message, other, corrected)

    ordered = below_their_corrections(slots, {"n-3000": {11}})

    assert [slot.key for slot in ordered] == [(MESSAGE, 12), (NOTE, "n-3000"), (MESSAGE, 11)]
    assert ordered[2].fused == round(ordered[1].fused * BELOW_SUCCESSOR, 6)


def test_nothing_moves_without_a_correction_or_when_the_message_already_ranks_below() -> None:
    slots = _ranked(entry((MESSAGE, 11), 0.9), entry((NOTE, "n"), 0.8))
    assert below_their_corrections(slots, {}) == slots
    below = _ranked(entry((NOTE, "n-3000"), 0.9), entry((MESSAGE, 11), 0.8))
    assert [s.key for s in below_their_corrections(below, {"n-3000": {11}})] == [(NOTE, "n-3000"), (MESSAGE, 11)]
