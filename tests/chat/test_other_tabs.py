"""A turn finished in one tab reaches the user's other open chat sockets through the channel layer
(``conversation_updated``), never the socket that asked and never another user's — bob of the same
firm or the outsider charlie. Across two servers with Redis: tests/site/test_scale_out.py."""
from __future__ import annotations

import pytest

from tests.chat.test_consumer import ANSWER, connected, frames_until
from tests.fake_llm.replies import text_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_a_finished_turn_reaches_the_users_other_tabs_only(world, llm_online):
    llm_online.script(text_reply(ANSWER))
    asking, _ = await connected(world.alice)
    other_tab, _ = await connected(world.alice)
    bob, _ = await connected(world.bob)
    charlie, _ = await connected(world.charlie)
    await asking.send_json_to({"type": "ask", "question": "电脑花屏了怎么办？", "matter_id": world.matter_laptop.pk})
    frames = await frames_until(asking, "done")
    done = frames[-1]
    assert "conversation_updated" not in [frame["type"] for frame in frames]

    notice = await other_tab.receive_json_from(timeout=10)
    assert notice == {
        "type": "conversation_updated", "conversation_id": done["conversation_id"], "message_id": done["message_id"],
        "title": frames[0]["title"], "matter_id": world.matter_laptop.pk,
    }
    for socket in (asking, other_tab, bob, charlie):
        assert await socket.receive_nothing(timeout=0.5)
        await socket.disconnect()
