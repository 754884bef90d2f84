"""Fixtures for the story: the demo firm as ``make run`` seeds it, LLM settings for the fake server."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from memory.models import Firm


@pytest.fixture
def demo_firm(db) -> Firm:
    """demo-firm (alice on M-001…M-005) and other-firm (charlie), exactly as seed_demo makes them."""
    call_command("seed_demo")
    return Firm.objects.get(slug="demo-firm")


@pytest.fixture
def no_llm(llm_offline) -> None:
    """The offline engine runs the shipped story script."""


@pytest.fixture
def story_llm(llm_online, settings) -> None:
    """Story generation and extraction both talk to the fake OpenAI-compatible server (one retry)."""
    settings.LLM_MAX_RETRIES = 1
