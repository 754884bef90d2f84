"""Questions arriving at the same moment (on several servers, each in its own connection) count
one after the other: the rate limit lets exactly CHAT_RATE_LIMIT_PER_MINUTE through, per user.
Over two real servers: tests/site/test_scale_out.py."""
from __future__ import annotations

import pytest

from chat.turns import TurnRejected, begin_turn
from memory.models import Message
from tests.concurrency import all_at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_simultaneous_questions_are_limited_exactly(world, settings):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 3

    def ask(user):
        return lambda: begin_turn(user, question="押金什么时候退？", conversation_id=None, matter_id=None)

    outcomes = all_at_once(ask(world.bob), times=8)
    rejected = [outcome for outcome in outcomes if isinstance(outcome, TurnRejected)]
    assert len(outcomes) - len(rejected) == 3, outcomes
    assert {outcome.code for outcome in rejected} == {"rate_limited"}
    assert Message.objects.filter(conversation__user=world.bob).count() == 3
    # another user, and the outsider of another firm, have their own count
    begin_turn(world.charlie, question="Beta 的案件进展？", conversation_id=None, matter_id=None)
    assert Message.objects.filter(conversation__user=world.charlie).count() == 1
