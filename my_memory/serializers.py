"""API representations of notes (read-only; writes go through services)."""
from rest_framework import serializers

from memory.disclosure import Viewer, hides_private_trace, redact_note_payload, viewer_of
from infra.http_input import MAX_DB_ID
from memory.models import MemoryScope, Note
from recall import contradictions_payload, hit_source_url


def context_viewer(context: dict) -> Viewer:
    """The viewer of a serializer's request, read once per request (cached in the context)."""
    if "viewer" not in context:
        request = context.get("request")
        context["viewer"] = viewer_of(getattr(request, "user", None))
    return context["viewer"]


class NoteSerializer(serializers.ModelSerializer):
    firm = serializers.CharField(source="firm.slug")
    matter = serializers.SerializerMethodField()
    owner = serializers.SerializerMethodField()
    provenance_hidden = serializers.BooleanField(
        read_only=True, default=False,
        help_text="True when the note comes from a colleague's private conversation: its conversation id, "
                  "source ids, event tags and history details are withheld (docs/memory-model.md).",
    )

    class Meta:
        model = Note
        fields = [
            "id",
            "firm",
            "content",
            "memory_scope",
            "category",
            "memory_type",
            "keywords",
            "tags",
            "context",
            "importance",
            "confidence",
            "mention_count",
            "matter",
            "owner",
            "conversation_id",
            "subject",
            "source_type",
            "source_id",
            "source_message_ids",
            "speaker",
            "said_at",
            "stored_at",
            "updated_at",
            "status",
            "valid_from",
            "valid_to",
            "retired_at",
            "superseded_by_id",
            "evolution_history",
            "provenance_hidden",
        ]
        read_only_fields = fields

    def to_representation(self, note: Note) -> dict:
        """The note, without a colleague's private conversation traces (memory/disclosure.py); at
        an ``as_of`` of the context, in the wording it had then (``Note.content_at``)."""
        data = super().to_representation(note)
        if self.context.get("as_of") is not None:
            data["content"] = note.content_at(self.context["as_of"])
        return redact_note_payload(data, note, context_viewer(self.context))

    def get_matter(self, note: Note) -> dict | None:
        if note.matter is None:
            return None
        return {"id": note.matter_id, "title": note.matter.title, "reference": note.matter.reference}

    def get_owner(self, note: Note) -> str | None:
        return note.owner.get_username() if note.owner else None


# --- Search (POST /api/memory/search) -------------------------------------------------
MAX_ID = MAX_DB_ID


class SearchRequestSerializer(serializers.Serializer):
    """What a client may ask; the view turns it into ``recall.search_memory``."""

    query = serializers.CharField(max_length=2000, trim_whitespace=True, help_text="The question (≤ 2,000 characters).")
    k = serializers.IntegerField(min_value=1, max_value=50, default=10)
    strategy = serializers.CharField(
        max_length=50,
        default="layered",
        help_text="A registered strategy: `semantic`, `layered`, and `layered_nav` when the navigation app is installed.",
    )
    matter = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, allow_null=True,
        help_text="The current matter: its case facts come first (404 when you are not assigned to it).",
    )
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=MemoryScope.choices),
        required=False,
        allow_empty=False,
        max_length=len(MemoryScope.choices),
        help_text="Restrict to these layers.",
    )
    conversation = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, allow_null=True,
        help_text="The current conversation (its archived messages answer explicit references).",
    )
    as_of = serializers.CharField(
        max_length=40, required=False, allow_blank=True,
        help_text="`2026-03-01` (that day's end) or an ISO date and time: search the notes that were current in "
                  "memory then (a value superseded later is returned, with when it was superseded in its reasons); "
                  "messages and document passages are not searched as of a date.",
    )
    valid_at = serializers.CharField(
        max_length=40, required=False, allow_blank=True,
        help_text="`2026-03-01` or an ISO date and time: search the notes whose fact held then, as the memory "
                  "knows it now (world time: said by then and not yet replaced by a later statement).",
    )


class ScoreBreakdownSerializer(serializers.Serializer):
    semantic = serializers.FloatField()
    keyword = serializers.FloatField()
    importance = serializers.FloatField()
    confidence = serializers.FloatField()
    graph = serializers.FloatField()
    recency = serializers.FloatField()
    layer_weight = serializers.FloatField()
    total = serializers.FloatField()


class RecalledMessageSerializer(serializers.Serializer):
    """A raw message recalled as "what was said"."""

    id = serializers.IntegerField()
    conversation_id = serializers.IntegerField()
    role = serializers.CharField()
    speaker = serializers.CharField()
    content = serializers.CharField()
    said_at = serializers.DateTimeField()


class SearchHitSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["note", "message"], help_text="A note, or a raw message (what was said).")
    rank = serializers.IntegerField()
    number = serializers.IntegerField(
        source="rank", help_text="Its number in `system_message` (`- [n] …`): what an answer cites as `[n]` "
                                 "(docs/citations.md). The hits are numbered 1…n by rank, the passages after them.")
    source_url = serializers.SerializerMethodField(
        help_text="Where a marker to it leads: a raw message in its conversation, a note made from a document "
                  "to the viewer at its page, any other note to its page (the turn it came from).")
    layer = serializers.CharField(help_text="The note's layer, or `conversation` for a raw message.")
    note = NoteSerializer(allow_null=True, help_text="Set when kind is `note`.")
    message = RecalledMessageSerializer(allow_null=True, help_text="Set when kind is `message`.")
    partner = RecalledMessageSerializer(
        allow_null=True, help_text="A message hit's turn partner (the reply to it, or the question it answers)."
    )
    source_message_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text="The raw messages this hit stands for (a note's provenance, or the turn: question and reply)."
    )
    score = ScoreBreakdownSerializer(source="breakdown")
    reasons = serializers.ListField(child=serializers.CharField())
    contradictions = serializers.SerializerMethodField(
        help_text="Current notes of the same slot with another value (flagged until one is corrected): "
                  "id, content, said_at, other_is_newer, url."
    )

    def get_contradictions(self, hit) -> list[dict]:
        return contradictions_payload(hit)

    def get_source_url(self, hit) -> str:
        return hit_source_url(hit)

    def to_representation(self, hit) -> dict:
        data = super().to_representation(hit)
        if hit.note is not None and hides_private_trace(hit.note, context_viewer(self.context)):
            data["source_message_ids"] = []
        return data


class SearchMessageSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="message.id")
    conversation_id = serializers.IntegerField(source="message.conversation_id")
    role = serializers.CharField(source="message.role")
    speaker = serializers.CharField(source="message.speaker")
    content = serializers.CharField(source="message.content")
    said_at = serializers.DateTimeField(source="message.said_at")
    rank = serializers.FloatField()


class DocumentPassageSerializer(serializers.Serializer):
    """A passage of a document page the user may see, with its citation and the viewer's link."""

    citation = serializers.CharField(help_text="How to cite it, in the reader's language: 《房屋租赁合同》第 3 页.")
    document_id = serializers.IntegerField()
    matter_id = serializers.IntegerField(allow_null=True)
    title = serializers.CharField(help_text="The document's title.")
    page = serializers.IntegerField(help_text="The page number (1-based).")
    start = serializers.IntegerField(help_text="Where the passage starts in the page's extracted text.")
    end = serializers.IntegerField(help_text="Where it ends (exclusive).")
    heading = serializers.CharField(allow_blank=True, help_text="The heading the passage sits under, if any.")
    text = serializers.CharField(help_text="The passage: the page's text[start:end].")
    chunk_id = serializers.IntegerField()
    score = serializers.FloatField(help_text="Reciprocal-rank fusion of its keyword and embedding ranks.")
    reasons = serializers.ListField(child=serializers.CharField(),
                                    help_text="Its ranks in the reader's language, e.g. `文件关键词第 1 名`.")
    ranks = serializers.DictField(child=serializers.IntegerField(),
                                  help_text="What it was ranked by: `keyword` and / or `dense` -> its rank.")
    url = serializers.CharField(help_text="The viewer at this page with the passage highlighted.")
    number = serializers.SerializerMethodField(
        help_text="Its number in `system_message`: after the hits (the first passage is the number of hits + 1).")
    source_url = serializers.CharField(source="url", help_text="Where a marker to it leads: `url`.")

    def get_number(self, passage) -> int | None:
        return self.context.get("passage_numbers", {}).get(passage.chunk_id)


class SearchPlanSerializer(serializers.Serializer):
    layers = serializers.ListField(child=serializers.CharField())
    layer_weights = serializers.DictField(child=serializers.FloatField())
    matter_id = serializers.IntegerField(allow_null=True)
    conversation_id = serializers.IntegerField(allow_null=True)
    persona_first = serializers.BooleanField()
    search_messages = serializers.BooleanField()
    graph_expansion = serializers.BooleanField()
    history = serializers.BooleanField()
    cues = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    reasons = serializers.ListField(child=serializers.CharField())


class SearchResponseSerializer(serializers.Serializer):
    strategy = serializers.CharField()
    query = serializers.CharField()
    plan = SearchPlanSerializer()
    hits = SearchHitSerializer(many=True)
    messages = SearchMessageSerializer(many=True, help_text="The message hits again (kind `message`), best first.")
    timings = serializers.DictField(child=serializers.FloatField(), help_text="Milliseconds per stage.")
    stats = serializers.DictField(child=serializers.IntegerField())
    nothing_on = serializers.ListField(
        child=serializers.CharField(),
        help_text="Names or identifiers of the query that nothing the user may see holds: no hits, on purpose.")
    passages = DocumentPassageSerializer(
        many=True, help_text="Passages of the documents the user may see (the search's matter, or every matter "
                             "they may see), best first, at most min(k, 5); beside the hits, not among them.")
    system_message = serializers.CharField(
        allow_null=True, help_text="The context injected before an answer, each item under its number `[n]` "
                                   "(the hits, then the passages), for an answer that cites its sources.")

    def to_representation(self, result):
        from recall import build_system_message

        injected = build_system_message(result, with_passages=True, numbered=True)
        passage_numbers = {p.chunk_id: n for n, p in enumerate(result.passages, start=len(result.hits) + 1)}
        return {
            "strategy": result.strategy,
            "query": result.query,
            "plan": result.plan.as_dict(),
            "hits": SearchHitSerializer(result.hits, many=True, context=self.context).data,
            "messages": SearchMessageSerializer(result.messages, many=True).data,
            "timings": result.timings,
            "stats": result.stats,
            "nothing_on": result.nothing_on,
            "passages": DocumentPassageSerializer(result.passages, many=True,
                                                  context={"passage_numbers": passage_numbers}).data,
            "system_message": injected["content"] if injected else None,
        }
