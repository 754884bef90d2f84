"""The name the speaker gave earlier in the matter ("我叫王磊", "I'm Claire Donovan"), so later
notes call them by it.

A turn like "昨天我去鼓楼医院复查了" names nobody; its note would say "用户去鼓楼医院复查了" and a
lawyer reading the matter a month later would not know whom it is about. The extraction engines
replace "用户" (the speaker, never "客户": a lawyer who says "我是范晓，客户孙立强…" is not the
client) with this name (``extraction.grounding.with_names``). Read only from introductions by the
same user in the same matter (or, without a matter, the same conversation), said before the turn:
another user of the matter is another speaker. Two different names mean we cannot tell, and
notes keep "用户".
"""

from __future__ import annotations

from memory.models import Conversation, Message
from remember.extraction.grounding import introduced_names
from remember.extraction.subjects import relayed_clients

#: The phrases of ``grounding.SELF_INTRODUCTION_RE`` and ``ENGLISH_SELF_INTRODUCTION_RE`` for the
#: database, to read only messages holding one ("I'm" / "I am" only before two capitalised words:
#: "I am worried" in every message would fill the read before the introduction).
_INTRODUCTION_SQL = r"我叫|我名叫|我的名字|我是|本人|还是我|[Mm]y name is|I['’]m [A-Z][a-z]+ [A-Z]|I am [A-Z][a-z]+ [A-Z]"
#: Introductions read per turn: a client introduces themselves once or twice, not a hundred times.
_MAX_INTRODUCTIONS = 20


def _one_name_said_before(message: Message, sql: str, names_in) -> str:
    """The one name ``names_in`` reads in the earlier user messages matching ``sql`` of
    ``message``'s user in its matter (its conversation when it has none); "" when none or several."""
    # Read fresh, not ``message.conversation``: an erasure may have removed it under a running job
    # (the job finds that out at its next write and stops: ``TurnGone``).
    conversation = Conversation.objects.filter(pk=message.conversation_id).values("matter_id", "user_id").first()
    if conversation is None:
        return ""
    earlier = Message.objects.filter(role=Message.Role.USER, content__regex=sql)
    if conversation["matter_id"]:
        earlier = earlier.filter(conversation__matter_id=conversation["matter_id"],
                                 conversation__user_id=conversation["user_id"])
    else:
        earlier = earlier.filter(conversation_id=message.conversation_id)
    earlier = earlier.filter(said_at__lt=message.said_at) if message.said_at else earlier.filter(pk__lt=message.pk)
    names: set[str] = set()
    for text in earlier.order_by("said_at", "pk").values_list("content", flat=True)[:_MAX_INTRODUCTIONS]:
        names.update(names_in(text))
    return names.pop() if len(names) == 1 else ""


def client_name_before(message: Message) -> str:
    """The one name ``message``'s user introduced themselves by in its matter before ``message``."""
    return _one_name_said_before(message, _INTRODUCTION_SQL, introduced_names)


#: How a lawyer names their client, for the database (``subjects.CLIENT_WORD_RE`` and
#: ``subjects.MATTER_OF_RE``).
_RELAY_SQL = (r"客户|当事人|委托人|的(事情|事儿|案子|案件|纠纷)|['’]s (case|matter)"
              r"|^\s*[\u4e00-\u9fff]{2,3}(是|说|的|家|那边|这边|今天|昨天|刚|又)")  # a message opening on a name


def relayed_client_before(message: Message) -> str:
    """The one client ``message``'s user (a lawyer) named earlier in its matter ("我的客户林晓雯…"),
    so that "她还想主张利息" three turns later is filed as 林晓雯's."""
    return _one_name_said_before(message, _RELAY_SQL, relayed_clients)
