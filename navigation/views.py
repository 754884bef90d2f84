"""The navigation page: the layered graph drawn by D3 on a canvas; data comes from the API.
``?as_of=2026-03-01`` draws the graph of the memory as it stood then (navigation.forms)."""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory.models import Matter, MemoryScope
from memory.as_of import moment_label
from navigation.forms import AsOfForm
from navigation.selectors import user_firms


@login_required
def navigation_page(request: HttpRequest) -> HttpResponse:
    """The page; a refused ``as_of`` is a 400 with the form's error, and no graph is drawn."""
    form = AsOfForm(request.GET or None, user=request.user)
    valid = not form.is_bound or form.is_valid()
    as_of = form.cleaned_data.get("as_of") if form.is_bound and valid else None
    firms = list(user_firms(request.user))
    matters = Matter.objects.assigned_to(request.user).order_by("firm__name", "reference", "title", "pk")
    return render(request, "navigation/graph.html", {
        "firms": firms,
        "matters": matters,
        "scopes": MemoryScope.choices,
        "as_of_form": form,
        "as_of": as_of,
        "as_of_label": moment_label(as_of) if as_of else "",
        "as_of_iso": as_of.isoformat() if as_of else "",
        "refused": not valid,
    }, status=200 if valid else 400)
