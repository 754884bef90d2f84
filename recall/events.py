"""When the firm did something a question names: "我们第一次建议韩立军别签离职协议的时候…", "when you
first advised me to hold back the third instalment…" (``legaltext.as_of.past_event_in`` reads the
words; this finds the message).

The act is looked for as the raw-turn search looks for anything (``raw_turn_search``: the same
walls, the same dense and keyword fusion), among messages that tell or advise — not the question
being asked, not another question, not an answer the offline engine composed from memory. With
"第一次 / first" the earliest of the best few is taken (advice given twice is found twice); an act
of the firm's found at the client's account is the reply to it. The moment is that message's
``said_at``: what held then is what the advice rested on (docs/memory-model.md, "Two times").
"""
from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from legaltext.as_of import EVENT_RULES, RULES, as_of_in, past_event_in
from memory.models import Message
from memory.rules import Rule, register
from recall.plan import MESSAGES
from recall.scoring import score_message
from recall.search import raw_turn_search, renumbered
from recall.types import Hit, SearchResult

#: With "第一次 / first": the earliest of this many best matches is the first time it was done.
FIRST_OF_BEST = 3

#: The ways a question names the moment memory is read at (``legaltext.as_of``): the "recall"
#: table of ``memory.rules`` (``manage.py rules``), stage "moment", in a lawyer's words.
_WHY = {
    "zh-jiezhi": gettext_lazy("\"As of\" a date (截至 / 截止到): memory is read as it held at the end of that day."),
    "zh-then": gettext_lazy("A date followed by \"then\" (那会儿 / 的时候): memory is read as it held that day."),
    "en-as-of": gettext_lazy("\"As of\" / \"as at\" a date: memory is read as it held at the end of that day."),
    "zh-when-we-did": gettext_lazy(
        "\"When we (first) advised…\" in Chinese: memory is read as it held when that advice was given, the advice first."),
    "zh-first-time-did": gettext_lazy(
        "\"The first time (we) worked out…\" in Chinese: memory is read as it held the first time it was done."),
    "en-when-you-did": gettext_lazy(
        "\"When you (first) advised / sent…\": memory is read as it held at that moment, the advice first."),
    "en-your-advice": gettext_lazy(
        "\"Your (first) advice on…\": memory is read as it held when that advice was given, the advice first."),
}
for _rule in RULES:
    register(Rule("recall", _rule.name, _WHY[_rule.name],
                  lambda text, _name=_rule.name: getattr(as_of_in(text or ""), "rule", None) == _name, stage="moment"))
for _event in EVENT_RULES:
    register(Rule("recall", _event.name, _WHY[_event.name],
                  lambda text, _name=_event.name: getattr(past_event_in(text or ""), "rule", None) == _name,
                  stage="moment"))


def message_of_event(user, event: str, *, first: bool, by_firm: bool = True, matter_id: int | None = None,
                     exclude_message_ids: Iterable[int] = ()) -> Message | None:
    """The visible message where ``event`` happened — the best match, or with ``first`` the
    earliest of the ``FIRST_OF_BEST`` best — or None when nothing the user may see tells of it.
    An act of the firm's (``by_firm``: advice given, a sum worked out) found at the client's
    message is the assistant's reply to it. Raises what ``search_memory`` raises for a matter
    the user may not see."""
    excluded = tuple(exclude_message_ids)
    ranked = raw_turn_search(user, event, k=FIRST_OF_BEST * 2, matter_id=matter_id, exclude_message_ids=excluded)
    telling = [m for m in Message.objects.filter(pk__in=ranked, repeats_memory=False) if not _asks(m)]
    best = sorted(telling, key=lambda m: ranked.index(m.pk))[:FIRST_OF_BEST]
    if not best:
        return None
    found = min(best, key=lambda m: (m.said_at, m.pk)) if first else best[0]
    if by_firm and found.role != Message.Role.ASSISTANT:
        return _reply_to(found, excluded) or found
    return found


def _asks(message: Message) -> bool:
    """A user's question tells of no act: asking "when did you advise…" twice must not find itself."""
    return message.role == Message.Role.USER and message.content.rstrip().endswith(("?", "？"))


def _reply_to(message: Message, excluded: tuple[int, ...]) -> Message | None:
    """The assistant's next message in the same conversation: the advice given on that account."""
    return (Message.objects.filter(conversation_id=message.conversation_id, role=Message.Role.ASSISTANT,
                                   status=Message.Status.COMPLETE, said_at__gte=message.said_at)
            .exclude(pk__in=excluded).exclude(repeats_memory=True).order_by("said_at", "pk").first())


def moment_first(result: SearchResult, message: Message, k: int) -> SearchResult:
    """``result`` (the search at the moment) with the message the moment was read from first: the
    advice itself states what it rested on ("按15万元算出一年利息9000元"), whatever was corrected
    since. At most ``k`` hits, renumbered."""
    said = f"{timezone.localtime(message.said_at):%Y-%m-%d %H:%M}"
    hit = Hit(message=message, layer=MESSAGES, rank=1,
              breakdown=score_message(message, distance=None, keyword=0.0, layer_weight=1.0),
              reasons=[gettext("the moment the question names, said on %(when)s") % {"when": said}])
    rest = [h for h in result.hits if h.message is None or h.message.pk != message.pk]
    result.hits = renumbered([hit, *rest])[:k]
    return result
