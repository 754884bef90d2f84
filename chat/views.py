"""The chat page: conversation list, matter picker, streaming answer, recalled-memory panel.
``/chat/`` opens a new conversation, ``/chat/<id>/`` one of the user's own (404 otherwise),
``/chat/<id>/export.md`` that conversation as Markdown with each answer's numbered sources."""
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from chat import turns
from chat.answering import ENGINE_OFFLINE, engine_name, llm_config
from chat.export import export_conversation
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


@require_GET
@login_required
def conversation_export(request: HttpRequest, conversation_id: int) -> HttpResponse:
    try:
        name, text = export_conversation(request.user, conversation_id, base_url=request.build_absolute_uri("/"))
    except Conversation.DoesNotExist:
        raise Http404 from None
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
