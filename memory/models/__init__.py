"""Memory models: tenancy, working memory (conversations), notes and links, the audit log."""
from memory.models.audit import AuditEvent, AuditLog
from memory.models.conversations import Conversation, ConversationTerm, Message
from memory.models.embeddings import EmbeddingGeneration
from memory.models.llm import LLMServerMode, LLMServerSpeed
from memory.models.notes import (
    Category,
    LinkType,
    MemoryScope,
    MemoryType,
    Note,
    NoteLink,
    SourceType,
)
from memory.models.pipeline import (
    ConsolidatedMessage,
    Consolidation,
    PersonaEvidence,
    PersonaTrait,
    RoutingDecision,
    TurnExtraction,
)
from memory.models.tenancy import Firm, Matter, MatterAssignment, Membership, Role

__all__ = [
    "AuditEvent",
    "AuditLog",
    "Category",
    "ConsolidatedMessage",
    "Consolidation",
    "Conversation",
    "ConversationTerm",
    "EmbeddingGeneration",
    "Firm",
    "LLMServerMode",
    "LLMServerSpeed",
    "LinkType",
    "Matter",
    "MatterAssignment",
    "MemoryScope",
    "MemoryType",
    "Membership",
    "Message",
    "Note",
    "NoteLink",
    "PersonaEvidence",
    "PersonaTrait",
    "Role",
    "RoutingDecision",
    "SourceType",
    "TurnExtraction",
]
