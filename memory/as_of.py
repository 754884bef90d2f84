"""An "as of" moment as people and clients write it, parsed in one place for every page, API and
tool that shows the memory as it stood then (docs/memory-model.md, "Two times")."""
from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext


class BadDate(ValueError):
    """An ``as_of`` that names no moment the memory had: the message says why, in words."""


def end_of_day(day: date) -> datetime:
    """A day as a moment: its last instant in the site's time zone (what "as of 1 March" means)."""
    return timezone.make_aware(datetime.combine(day, datetime.max.time()))


def parse_as_of(text: str | None, *, began: datetime | None, world: bool = False) -> datetime | None:
    """A day (``2026-03-01``: the memory at that day's end, in the site's time zone) or an ISO date
    and time; None for none. ``began``: when this memory began (the firm's creation). Raises
    ``BadDate`` for a malformed value, a moment in the future, or a day before ``began``. With
    ``world`` (a ``valid_at``: when a fact held) neither the future nor the past is refused: a
    lease of 2019 held before the firm kept a memory, and one ending in 2027 holds then."""
    text = (text or "").strip()
    if not text:
        return None
    moment: datetime | None = None
    if len(text) <= 10:
        try:
            moment = end_of_day(date.fromisoformat(text))
        except ValueError:
            moment = None
    else:
        try:
            moment = parse_datetime(text)
        except ValueError:
            moment = None
        if moment is not None and timezone.is_naive(moment):
            moment = timezone.make_aware(moment)
    if moment is None:
        raise BadDate(gettext("“%(value)s” is not a date: write it as 2026-03-01.") % {"value": text[:40]})
    if world:
        return moment
    if moment > timezone.now() + timedelta(days=1):
        raise BadDate(gettext("%(value)s is in the future: the memory can only be shown as it stood until now.")
                      % {"value": text[:40]})
    if began is not None and timezone.localtime(moment).date() < timezone.localtime(began).date():
        raise BadDate(gettext("%(value)s is before the firm's memory began (%(start)s).")
                      % {"value": text[:40], "start": f"{timezone.localtime(began):%Y-%m-%d}"})
    return moment


def memory_began(user) -> datetime:
    """When the memory ``user`` reads began: the creation of the first of their firms (now when
    they belong to none — any ``as_of`` then reads nothing)."""
    from memory.models import Firm

    first = (Firm.objects.filter(memberships__user=user).order_by("created_at")
             .values_list("created_at", flat=True).first()) if user.is_authenticated else None
    return first or timezone.now()


def moment_label(moment: datetime) -> str:
    """How a page's "as of" chip names a moment: the day for a day's end (what a date field asks),
    else the day and the minute."""
    local = timezone.localtime(moment)
    if local.time() == time.max:
        return f"{local:%Y-%m-%d}"
    return f"{local:%Y-%m-%d %H:%M}"
