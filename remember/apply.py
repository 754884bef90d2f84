"""Steps 3–6 of the write path for one batch of extracted items: each becomes a note
(routed ADD / UPDATE / IGNORE, linked) or persona evidence (docs/write-path.md). Used by the
turn job (``turns``) and by working-memory consolidation (``services.consolidation``)."""
from __future__ import annotations

import logging

from django.db import transaction

from infra.embeddings import get_embedder
from infra.locks import release_if_frozen
from remember.extraction import ExtractedItem
from memory.models import Message, RoutingDecision, SourceType, TurnExtraction
from remember.services.decisions import flush_decisions, record_refusal
from remember.drafts import ItemError, TurnSource, category_slug, draft_for, is_persona_item
from remember.persona import episodic_twins
from remember.services.persona import do_record_persona_statement
from remember.routing import route_and_write
from memory.services.notes import NoteValidationError, content_hash
from memory.transaction_memo import first_time, in_memo_scope

logger = logging.getLogger("legalmem.pipeline")


class TurnGone(Exception):
    """The turn was erased while its job ran (docs/records.md): the job writes nothing more."""


class TurnTakenOver(TurnGone):
    """Another worker took the job over while this one was frozen past its heartbeat
    (docs/operations.md, "Jobs and their recovery"): this one writes nothing more."""


def hold_turn(turn: TurnExtraction | None) -> None:
    """Lock the turn's row for the current write, or stop if an erasure removed it (the erasure
    locks the same rows first, so an item is either written before it collects, or never) or
    another worker claimed it since this one did (each claim counts one more attempt)."""
    if turn is None or not first_time(("turn-lock", turn.pk)):  # held until the transaction ends
        return
    attempts = TurnExtraction.objects.select_for_update().filter(pk=turn.pk).values_list("attempts", flat=True).first()
    if attempts is None:
        raise TurnGone(f"turn {turn.pk} was erased")
    if attempts != turn.attempts:
        raise TurnTakenOver(f"turn {turn.pk} was taken over by another worker (attempt {attempts}; this job held attempt {turn.attempts})")


def reply_speaker(source_type: str, reply: Message) -> str:
    """Who wrote the reply, for the offline engine: in an imported conversation a named
    speaker is a second person; in live chat the reply is the product's assistant
    (whatever engine name it is stored under)."""
    return reply.speaker if source_type == SourceType.IMPORT else ""


def apply_items(
    items: list[ExtractedItem], source: TurnSource, *, actor, turn=None, consolidation=None, vectors=None
) -> list[RoutingDecision]:
    """Embed the items in one batch (unless ``vectors`` already holds the embeddings of the
    items and their twins, as the bulk import computes them), then route each (episodic) or
    record it (persona), one transaction per item. An item the note model refuses is recorded
    as IGNORE with the reason."""
    if not items:
        return []
    items = [*items, *episodic_twins(items, source)]  # persona evidence is also kept as what was said
    if vectors is None:
        vectors = get_embedder().embed_passages([item.content for item in items])
    # The bulk import holds the whole turn in one transaction (memory/transaction_memo.py):
    # there an item needs no savepoint of its own. Either way an item's refusal is found before
    # anything of it is written (docs/performance.md).
    savepoint = not in_memo_scope()
    decisions = []
    for index, (item, vector) in enumerate(zip(items, vectors)):
        try:
            draft = None
            if is_persona_item(item):
                category_slug(item)
            else:
                draft = draft_for(item, source)
                draft.validate()
            with transaction.atomic(savepoint=savepoint):
                release_if_frozen()  # it holds the turn's row: a frozen worker must not hold it for ever
                hold_turn(turn)
                if draft is None:
                    decision = do_record_persona_statement(
                        item, vector, source, actor=actor, item_index=index, turn=turn, consolidation=consolidation
                    )
                else:
                    decision = route_and_write(
                        draft, vector, actor=actor, source_key=source.source_key,
                        item_index=index, turn=turn, consolidation=consolidation,
                    )
        except (NoteValidationError, ItemError) as exc:
            logger.warning("item %d of %s refused: %s", index, source.source_key, exc)
            decision = record_refusal(
                source_key=source.source_key,
                content_hash=content_hash(item.content),
                fields=dict(
                    firm=source.conversation.firm, owner=source.conversation.user, turn=turn,
                    consolidation=consolidation, item_index=index, content=item.content,
                    category=str(item.category)[:20], action=RoutingDecision.Action.IGNORE,
                    reason=f"invalid item: {exc}"[:500],
                ),
            )
        decisions.append(decision)
    flush_decisions()
    return decisions
