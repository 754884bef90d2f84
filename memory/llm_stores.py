"""What the LLM client learnt about a server, kept in the database so every process and worker
shares it (``LLMServerMode``, ``LLMServerSpeed``); registered with ``infra.llm.shared`` from
``MemoryConfig.ready``. Reads here, writes in ``memory.services.llm_servers``."""
from __future__ import annotations

from infra.llm.modes import KnownMode
from infra.llm.structured import JSONMode
from memory.models import LLMServerMode, LLMServerSpeed
from memory.services.llm_servers import remember_json_mode, remember_speed


class DatabaseModeStore:
    """Known modes in the ``LLMServerMode`` table, shared by every process."""

    def load(self, base_url: str, model: str) -> KnownMode | None:
        row = LLMServerMode.objects.filter(base_url=base_url, model=model).only("json_mode", "probed_at").first()
        return KnownMode(JSONMode(row.json_mode), row.probed_at) if row else None

    def save(self, base_url: str, model: str, mode: JSONMode, *, error: str = "") -> None:
        remember_json_mode(base_url=base_url, model=model, mode=mode.value, error=error)


class DatabaseSpeedStore:
    """Speeds in the ``LLMServerSpeed`` table, shared by every process."""

    def load(self, base_url: str, model: str) -> float | None:
        row = LLMServerSpeed.objects.filter(base_url=base_url[:500], model=model[:200]).only("tokens_per_second").first()
        return row.tokens_per_second if row else None

    def record(self, base_url: str, model: str, tokens_per_second: float) -> None:
        remember_speed(base_url=base_url, model=model, tokens_per_second=tokens_per_second)
