"""Pages of the memory app: the home page the chat and graph pages hang from."""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.selectors import home_summary


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "memory/home.html", {"summary": home_summary(request.user)})
