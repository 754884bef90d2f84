"""pytest fixtures for the fake LLM server.

Import them into a conftest: ``from tests.fake_llm.fixtures import fake_llm, llm_config  # noqa``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infra.llm.config import LLMConfig

from .profiles import PROFILE_NAMES
from .server import FakeLLMServer

#: Short enough to keep stall tests fast, long enough for a loaded CI box.
TEST_TIMEOUT_SECONDS = 2.0
TEST_MAX_RETRIES = 2


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A running fake OpenAI-compatible server, stopped after the test."""
    server = FakeLLMServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llm_config(fake_llm: FakeLLMServer) -> LLMConfig:
    """An LLMConfig pointing at ``fake_llm`` with a short first-token timeout and stall bound
    (use ``dataclasses.replace`` to tighten it further in a test)."""
    return LLMConfig(
        base_url=fake_llm.base_url,
        api_key="test-key",
        model=fake_llm.model,
        timeout_seconds=TEST_TIMEOUT_SECONDS,
        stall_seconds=TEST_TIMEOUT_SECONDS,
        max_retries=TEST_MAX_RETRIES,
    )


@pytest.fixture
def llm_online(settings, fake_llm: FakeLLMServer) -> FakeLLMServer:
    """The app's LLM_* settings pointed at ``fake_llm``: short first-token and stall bounds, no client retries (each
    scripted failure is seen once). Fixtures that want retries raise ``settings.LLM_MAX_RETRIES``."""
    settings.LLM_BASE_URL = fake_llm.base_url
    settings.LLM_MODEL = fake_llm.model
    settings.LLM_API_KEY = "test-key"
    settings.LLM_TIMEOUT_SECONDS = TEST_TIMEOUT_SECONDS
    settings.LLM_STALL_SECONDS = TEST_TIMEOUT_SECONDS
    settings.LLM_MAX_RETRIES = 0
    return fake_llm


@pytest.fixture
def llm_offline(settings) -> None:
    """No LLM configured: the offline engine answers and extracts."""
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""


@pytest.fixture(params=PROFILE_NAMES)
def llm_profile(request, fake_llm: FakeLLMServer) -> str:
    """Run the test once per server profile (openai, deepseek, vllm, ollama, llamacpp): the
    fake server behaves like that server for the whole test. Returns the profile name."""
    fake_llm.profile = request.param
    return request.param
