"""The chat page: conversation list, matter picker, streaming answer, recalled-memory panel."""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from chat.answering import ENGINE_OFFLINE, engine_name, llm_config
from chat.selectors import conversations_of, matters_for_picker


@login_required
def chat_page(request: HttpRequest) -> HttpResponse:
    engine = engine_name(llm_config())
    return render(
        request,
        "chat/chat.html",
        {
            "conversations": conversations_of(request.user)[:100],
            "matters": matters_for_picker(request.user),
            "engine": engine,
            "offline": engine == ENGINE_OFFLINE,
        },
    )
