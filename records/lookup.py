"""Finding a firm, matter, conversation or user from the words an operator types (records commands)."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils.translation import gettext

from memory.models import Firm, Matter


class RecordLookupError(ValueError):
    """Nothing, or more than one thing, matches; the message says which and how to narrow it
    (in the operator's language: the commands print it as it is)."""


def firm_by_slug(slug: str | None) -> Firm | None:
    if not slug:
        return None
    firm = Firm.objects.filter(slug=slug).first()
    if firm is None:
        raise RecordLookupError(gettext("no firm with slug %(slug)r") % {"slug": slug})
    return firm


def matter_by_reference(reference: str, firm: Firm | None) -> Matter:
    """A matter by its reference (or numeric id), within the firm when one is given."""
    matters = Matter.objects.select_related("firm")
    if firm is not None:
        matters = matters.filter(firm=firm)
    found = list(matters.filter(reference=reference))
    if not found and reference.isdigit():
        found = list(matters.filter(pk=int(reference)))
    if not found and firm is not None:
        raise RecordLookupError(gettext("no matter with reference %(reference)r in firm %(firm)s") % {
            "reference": reference, "firm": firm.slug})
    if not found:
        raise RecordLookupError(gettext("no matter with reference %(reference)r") % {"reference": reference})
    if len(found) > 1:
        raise RecordLookupError(gettext("%(count)s matters have reference %(reference)r; name the firm with --firm") % {
            "count": len(found), "reference": reference})
    return found[0]


def user_by_name(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise RecordLookupError(gettext("no user %(username)r") % {"username": username})
    return user


def only_firm_of(user, firm: Firm | None) -> Firm:
    """The firm a user-scoped command works in: the given one, or the user's only firm."""
    if firm is not None:
        return firm
    firms = list(Firm.objects.of_user(user))
    if len(firms) != 1:
        raise RecordLookupError(gettext("%(user)s belongs to %(count)s firms; name one with --firm") % {
            "user": user.get_username(), "count": len(firms)})
    return firms[0]
