"""Request validation for the navigation API (bad input → 400 with a clear message)."""
from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from memory.http_input import MAX_DB_ID
from memory.models import MemoryScope


class GraphFilterSerializer(serializers.Serializer):
    firm = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    matter = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    scope = serializers.ChoiceField(choices=MemoryScope.choices, required=False)
    event = serializers.CharField(required=False, max_length=300)


class GraphQuerySerializer(GraphFilterSerializer):
    l0_offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=MAX_DB_ID)
    l0_limit = serializers.IntegerField(required=False, default=1500, min_value=0)

    def validate_l0_limit(self, value: int) -> int:
        if value > settings.NAV_L0_PAGE_MAX:
            raise serializers.ValidationError(f"l0_limit must be at most {settings.NAV_L0_PAGE_MAX}")
        return value


class TraceQuerySerializer(GraphFilterSerializer):
    k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=100)


class NavSearchRequestSerializer(serializers.Serializer):
    query = serializers.CharField(max_length=2000, trim_whitespace=True)
    k = serializers.IntegerField(required=False, default=10, min_value=1, max_value=100)
    strategy = serializers.ChoiceField(choices=["layered_nav"], required=False, default="layered_nav")
    firm = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    matter = serializers.IntegerField(required=False, min_value=1, max_value=MAX_DB_ID)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=MemoryScope.choices), required=False, max_length=5
    )


class NodeSerializer(serializers.Serializer):
    i = serializers.IntegerField(help_text="Index of the node in this graph (edges refer to it).")
    id = serializers.UUIDField()
    level = serializers.IntegerField(help_text="Top HNSW level; the node is on every level below too.")
    x = serializers.FloatField()
    y = serializers.FloatField()
    scope = serializers.CharField()
    label = serializers.CharField(help_text="The first 40 characters of the content.")


class EdgeSerializer(serializers.Serializer):
    s = serializers.IntegerField()
    t = serializers.IntegerField()
    levels = serializers.ListField(child=serializers.IntegerField())
    w = serializers.FloatField(help_text="Edge score (1-λ)·cos + λ·Jaccard.")
    bridge = serializers.BooleanField(required=False, help_text="Present (true) on connectivity bridges only.")


class LayerSerializer(serializers.Serializer):
    level = serializers.IntegerField()
    count = serializers.IntegerField()
    top_count = serializers.IntegerField()


class EventSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    count = serializers.IntegerField()


class PageSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    returned = serializers.IntegerField()
    total = serializers.IntegerField()
    next_offset = serializers.IntegerField(allow_null=True)


class GraphResponseSerializer(serializers.Serializer):
    params = serializers.DictField()
    version = serializers.CharField()
    truncated = serializers.BooleanField()
    total_nodes = serializers.IntegerField()
    entry = serializers.UUIDField(allow_null=True)
    layers = LayerSerializer(many=True)
    events = EventSerializer(many=True)
    nodes = NodeSerializer(many=True)
    edges = EdgeSerializer(many=True)
    l0_page = PageSerializer()


class StepSerializer(serializers.Serializer):
    source = serializers.UUIDField()
    target = serializers.UUIDField()
    level = serializers.IntegerField()
    phase = serializers.ChoiceField(choices=["descent", "beam"])


class CandidateSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    score = serializers.FloatField()
    rank = serializers.IntegerField()


class VisitSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    level = serializers.IntegerField()
    score = serializers.FloatField()


class TraceSerializer(serializers.Serializer):
    entry = serializers.UUIDField(allow_null=True)
    l0_start = serializers.UUIDField(allow_null=True)
    goal = serializers.UUIDField(required=False)
    path = StepSerializer(many=True)
    path_nodes = serializers.ListField(child=serializers.UUIDField())
    hit = serializers.BooleanField(help_text="Target among the ef results of the standard search.")
    reached = serializers.BooleanField(help_text="Target reached, possibly after expanding past the ef stop.")
    extra_expansions = serializers.IntegerField()
    ef = serializers.IntegerField(required=False)
    visited = VisitSerializer(many=True)
    visited_total = serializers.IntegerField()
    candidates = CandidateSerializer(many=True)
    nodes = NodeSerializer(many=True)


class NoteDetailSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    content = serializers.CharField()
    level = serializers.IntegerField()
    memory_scope = serializers.CharField()
    category = serializers.CharField()
    source_type = serializers.CharField()
    source_id = serializers.CharField()
    matter = serializers.DictField(allow_null=True)
    event = serializers.CharField()
    importance = serializers.FloatField()
    confidence = serializers.FloatField()


class TraceResponseSerializer(serializers.Serializer):
    note = NoteDetailSerializer()
    query = serializers.CharField()
    params = serializers.DictField()
    version = serializers.CharField()
    trace = TraceSerializer()


class NavHitSerializer(serializers.Serializer):
    note_id = serializers.UUIDField()
    score = serializers.FloatField()
    similarity = serializers.FloatField()
    graph_rank = serializers.IntegerField(allow_null=True)
    vector_rank = serializers.IntegerField(allow_null=True)
    level = serializers.IntegerField()
    memory_scope = serializers.CharField()
    label = serializers.CharField()


class NavSearchResponseSerializer(serializers.Serializer):
    strategy = serializers.CharField()
    query = serializers.CharField()
    k = serializers.IntegerField()
    graph_version = serializers.CharField()
    hits = NavHitSerializer(many=True)
    trace = TraceSerializer()
