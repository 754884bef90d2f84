"""Model roles from settings: the chat, extraction and background clients, their servers,
budgets and priorities; malformed LLM settings are one clear line naming the variable."""
from __future__ import annotations

import pytest

from infra.llm import LLMClient, Priority, Role
from tests.site.test_configuration import run_manage


def test_roles_share_the_chat_server_unless_extraction_has_its_own(settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = "http://chat.test/v1", "big", "k1"
    settings.LLM_EXTRACTION_BASE_URL = settings.LLM_EXTRACTION_MODEL = settings.LLM_EXTRACTION_API_KEY = ""
    settings.LLM_MAX_CONCURRENT_REQUESTS = 2
    settings.LLM_EXTRACTION_MAX_TOKENS = 500

    chat, extraction, background = (LLMClient.from_settings(r) for r in (Role.CHAT, Role.EXTRACTION, Role.BACKGROUND))

    assert {c.config.base_url for c in (chat, extraction, background)} == {"http://chat.test/v1"}
    assert (chat.priority, extraction.priority, background.priority) == (
        Priority.CHAT, Priority.BACKGROUND, Priority.BACKGROUND)
    assert (chat.config.max_tokens, extraction.config.max_tokens, background.config.max_tokens) == (None, 500, None)
    assert chat.gate.slots == 2
    assert chat.gate.key == extraction.gate.key

    settings.LLM_EXTRACTION_BASE_URL, settings.LLM_EXTRACTION_MODEL = "http://small.test/v1", "small"
    own = LLMClient.from_settings(Role.EXTRACTION)
    assert (own.config.base_url, own.config.model, own.config.api_key) == ("http://small.test/v1", "small", "k1")
    assert own.gate.key != chat.gate.key  # another server: its own slots


def test_extraction_can_be_the_only_llm(settings):
    settings.LLM_BASE_URL = settings.LLM_MODEL = ""
    settings.LLM_EXTRACTION_BASE_URL, settings.LLM_EXTRACTION_MODEL = "http://small.test/v1", "small"
    assert LLMClient.from_settings(Role.CHAT) is None
    assert LLMClient.from_settings(Role.EXTRACTION).config.model == "small"


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("env_changes", "variable"),
    [
        ({"LLM_CONTEXT_TOKENS": "4k"}, "LLM_CONTEXT_TOKENS"),
        ({"LLM_CONTEXT_TOKENS": "4096", "LLM_ANSWER_MAX_TOKENS": "5000"}, "LLM_ANSWER_MAX_TOKENS"),
        ({"LLM_MAX_CONCURRENT_REQUESTS": "-1"}, "LLM_MAX_CONCURRENT_REQUESTS"),
        ({"LLM_EXTRACTION_BASE_URL": "ftp://x"}, "LLM_EXTRACTION_BASE_URL"),
        ({"LLM_EXTRACTION_BASE_URL": "http://small.test/v1", "LLM_BASE_URL": None, "LLM_MODEL": None},
         "LLM_EXTRACTION_MODEL"),
        ({"LLM_SLOT_WAIT_SECONDS": "a while"}, "LLM_SLOT_WAIT_SECONDS"),
        ({"LLM_JSON_MODE_REPROBE_SECONDS": "86400"}, "LLM_JSON_MODE_REPROBE_SECONDS"),  # retired: a tuning setting now
    ],
)
def test_malformed_llm_settings_name_the_variable(env_changes, variable):
    result = run_manage(env_changes)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert variable in lines[0], result.stderr
