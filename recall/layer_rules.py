"""The layer rules: which notes of each layer a search reads, on top of ``visible_to(user)``.

Declared once, as data (``layer_rule``: ``Cond``s), and rendered twice: as a Django ``Q``
(``layer_filter``, ``searchable_notes``: the ORM reads — semantic strategy, history, graph,
provenance) and as SQL (``_rule_sql``, ``_layers_condition``: the hand-built statements of
recall/candidate_sql.py and recall/note_loading.py). tests/recall/test_layer_rule.py checks that
both select the same notes for every layer and user.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from django.db.models import Q, QuerySet

from memory.models import MemoryScope, Note
from recall.note_candidate import CANDIDATE_FIELDS
from recall.plan import RetrievalPlan
from recall.reach import Reach


# --- the layer rule: declared once, rendered as a Q (ORM reads) and as SQL (the hot path) ---


@dataclass(frozen=True)
class Cond:
    """One condition on a ``memory_note`` column: ``value`` None means IS NULL, a tuple means
    IN, anything else equality."""

    column: str  # attname: memory_scope, matter_id, owner_id
    value: object = None


#: A layer's notes: an OR of alternatives, each an AND of conditions.
LayerRule = tuple[tuple[Cond, ...], ...]


def layer_rule(layer: str, plan: RetrievalPlan, reach: Reach) -> LayerRule:
    """Which notes of ``layer`` a search reads, on top of ``visible_to(user)`` — the only place
    this is stated: ``layer_filter`` (Q) and ``_vector_parts`` / ``_layers_condition`` (SQL)
    are generated from it (docs/architecture.md). The case layer is narrowed to the current
    matter when there is one."""
    scope = Cond("memory_scope", str(layer))
    if layer == MemoryScope.CASE and plan.matter_id is not None:
        return ((scope, Cond("matter_id", plan.matter_id)),)
    if layer == MemoryScope.CASE:
        return (
            (scope, Cond("matter_id", tuple(reach.matter_ids))),
            (scope, Cond("matter_id", None), Cond("owner_id", reach.user_id)),
        )
    if layer == MemoryScope.USER_PROFILE:
        return ((scope, Cond("owner_id", reach.user_id)),)
    return ((scope,),)


def _rule_q(rule: LayerRule) -> Q:
    """The rule as a Django ``Q``."""
    condition = Q(pk__in=[])
    for alternative in rule:
        both = Q()
        for cond in alternative:
            if cond.value is None:
                both &= Q(**{f"{cond.column}__isnull": True})
            elif isinstance(cond.value, tuple):
                both &= Q(**{f"{cond.column}__in": list(cond.value)})
            else:
                both &= Q(**{cond.column: cond.value})
        condition |= both
    return condition


def _rule_sql(rule: LayerRule) -> tuple[str, list]:
    """The rule as a parenthesised SQL condition on ``memory_note`` and its params."""
    alternatives, params = [], []
    for alternative in rule:
        pieces = []
        for cond in alternative:
            column = f'"memory_note"."{cond.column}"'
            if cond.value is None:
                pieces.append(f"{column} IS NULL")
            elif isinstance(cond.value, tuple) and not cond.value:
                pieces.append("FALSE")
            elif isinstance(cond.value, tuple):
                pieces.append(f"{column} IN ({', '.join(['%s'] * len(cond.value))})")
                params += cond.value
            else:
                pieces.append(f"{column} = %s")
                params.append(cond.value)
        alternatives.append("(" + " AND ".join(pieces) + ")")
    return "(" + (" OR ".join(alternatives) or "FALSE") + ")", params


def _rules(plan: RetrievalPlan, reach: Reach, layers: Iterable[str]) -> LayerRule:
    """The OR of the rules of ``layers``."""
    return tuple(alternative for layer in layers for alternative in layer_rule(layer, plan, reach))


def layer_filter(plan: RetrievalPlan, reach: Reach, layers: Iterable[str] | None = None) -> Q:
    """Notes of the planned layers (``layer_rule``) in the user's firms."""
    return Q(firm_id__in=reach.firm_ids) & _rule_q(_rules(plan, reach, layers if layers is not None else plan.layers))


def searchable_notes(user, plan: RetrievalPlan, reach: Reach) -> QuerySet[Note]:
    """The only note set a search may read: visible, active, in the planned layers."""
    return (
        Note.objects.visible_to(user, **reach.literals())
        .active()
        .filter(layer_filter(plan, reach))
        .only(*CANDIDATE_FIELDS)
    )


def _layers_condition(plan: RetrievalPlan, reach: Reach, layers: Sequence[str]) -> tuple[str, list]:
    """The OR of the rules of ``layers`` as SQL (the keyword read)."""
    return _rule_sql(_rules(plan, reach, layers))
