"""The navigation page: the layered graph drawn by D3 on a canvas; data comes from the API."""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.models import Matter, MemoryScope
from navigation.selectors import user_firms


@login_required
def navigation_page(request: HttpRequest) -> HttpResponse:
    firms = list(user_firms(request.user))
    matters = Matter.objects.assigned_to(request.user).order_by("firm__name", "reference", "title", "pk")
    return render(request, "navigation/graph.html", {
        "firms": firms,
        "matters": matters,
        "scopes": MemoryScope.choices,
    })
