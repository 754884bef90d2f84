"""Who searches, and with which current matter, in the tests that run every user both ways."""
from __future__ import annotations

from typing import Any


def searcher_and_matter(world, who: str, matter: str | None) -> tuple[Any, int | None]:
    """The user named ``who`` (alice, bob, charlie) and the current matter named ``matter`` —
    none when there is no such parameter or the user is not assigned to it (charlie)."""
    user = getattr(world, who)
    matter_id = getattr(world, matter).pk if matter else None
    if matter_id is not None and not getattr(world, matter).assignments.filter(user=user).exists():
        matter_id = None
    return user, matter_id
