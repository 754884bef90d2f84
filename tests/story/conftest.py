"""Fixtures for the story: the demo firm as ``make run`` seeds it, LLM settings for the fake server."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.test import override_settings

from memory.models import Firm


@pytest.fixture
def demo_firm(db) -> Firm:
    """demo-firm (alice on M-001…M-005) and other-firm (charlie), exactly as seed_demo makes them."""
    call_command("seed_demo")
    return Firm.objects.get(slug="demo-firm")


@pytest.fixture
def no_llm() -> Iterator[None]:
    with override_settings(LLM_BASE_URL="", LLM_MODEL=""):
        yield


@pytest.fixture
def story_llm(fake_llm) -> Iterator[None]:
    """Story generation and extraction both talk to the fake OpenAI-compatible server."""
    with override_settings(
        LLM_BASE_URL=fake_llm.base_url, LLM_MODEL=fake_llm.model, LLM_API_KEY="test-key",
        LLM_TIMEOUT_SECONDS=2.0, LLM_MAX_RETRIES=1,
    ):
        yield
