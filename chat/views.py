"""The chat page: conversation list, matter picker, streaming answer, recalled-memory panel.
``/chat/`` opens a new conversation, ``/chat/<id>/`` one of the user's own (404 otherwise)."""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from chat import turns
from chat.answering import ENGINE_OFFLINE, engine_name, llm_config
from chat.selectors import conversations_of, matters_for_picker
from memory.models import Conversation


def _render_chat(request: HttpRequest, conversation: Conversation | None) -> HttpResponse:
    engine = engine_name(llm_config())
    return render(
        request,
        "chat/chat.html",
        {
            "conversations": conversations_of(request.user)[:100],
            "matters": matters_for_picker(request.user),
            "conversation": conversation,
            "engine": engine,
            "offline": engine == ENGINE_OFFLINE,
            "max_question_chars": turns.CHAT_MAX_QUESTION_CHARS,
        },
    )


@login_required
def chat_page(request: HttpRequest) -> HttpResponse:
    return _render_chat(request, None)


@login_required
def conversation_page(request: HttpRequest, conversation_id: int) -> HttpResponse:
    return _render_chat(request, get_object_or_404(conversations_of(request.user), pk=conversation_id))
