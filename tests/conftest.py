"""The shared test world: two firms and the named users of every access test.

- alice: firm A admin (staff), assigned to matter_laptop and matter_deposit
- bob: firm A lawyer, assigned to matter_laptop only — walled off from matter_deposit
- charlie: firm B admin (staff) — the outsider to everything of firm A
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from django.utils import timezone

from memory.labels import disagreement_reason
from memory.models import Category, Firm, LinkType, Matter, MemoryScope, Note, Role, SourceType
from memory.services.notes import NoteDraft, create_note, link_notes
from tests.factories import AssignmentFactory, FirmFactory, MatterFactory, MembershipFactory, UserFactory

pytest_plugins = ["tests.fake_llm.fixtures", "tests.search_read_connections", "tests.template_database",
                  "tests.embedding_cache"]


BASE_DIR = Path(__file__).resolve().parent.parent
# The slow kinds that start processes (pytest.ini's markers; `make test-fast` skips them, and end_to_end).
PROCESS_KINDS = ("browser", "live_server", "subprocess", "cluster")
# a fixture that starts something slow → the markers that say so (a browser test's server is part of it)
SLOW_FIXTURES = {"page": ("browser",), "asgi_server": ("live_server", "browser"), "live_daphne": ("live_server", "browser")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses a browser or a live server fixture carries that kind's marker, so
    `make test-fast` never starts one: a missing marker fails the collection, naming the test."""
    missing = [f"{item.nodeid}: uses {name!r}, mark it @pytest.mark.{kinds[0]}"
               for item in items for name, kinds in SLOW_FIXTURES.items()
               if name in getattr(item, "fixturenames", ())
               and not any(item.get_closest_marker(kind) for kind in kinds)]
    if missing:
        raise pytest.UsageError("slow tests without their marker:\n" + "\n".join(missing))


def _started_by_project_code() -> bool:
    """Whether the code that called ``subprocess`` is the project's own (tests, the product), not a
    library's (``platform.processor()`` runs ``uname -p`` for the openai client's headers)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == subprocess.__file__:
        frame = frame.f_back
    caller = Path(frame.f_code.co_filename).resolve() if frame is not None else None
    return caller is not None and caller.is_relative_to(BASE_DIR) and ".venv" not in caller.parts


@pytest.fixture(autouse=True)
def _processes_need_a_slow_marker(request: pytest.FixtureRequest):
    """A test that starts a child process (a server, a worker, a command, a browser) carries one of
    the slow kinds' markers; one without fails after it ran, naming the command it started."""
    if any(request.node.get_closest_marker(kind) for kind in PROCESS_KINDS):
        yield
        return
    started: list[str] = []
    original = subprocess.Popen.__init__

    def recording_init(self, args, *rest, **options):
        if _started_by_project_code():
            started.append(" ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args))
        original(self, args, *rest, **options)

    subprocess.Popen.__init__ = recording_init
    try:
        yield
    finally:
        subprocess.Popen.__init__ = original
    if started:
        pytest.fail(f"started a process without a slow-kind marker ({', '.join(PROCESS_KINDS)}): {started[0][:200]}",
                    pytrace=False)


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the default language (zh-hans), whatever language an earlier test's
    request left active in this thread: labels and recall reasons are built in the active one."""
    from django.conf import settings
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(autouse=True)
def _forget_recent_queries():
    """Each test starts with no remembered query vector (``SEARCH_QUERY_CACHE_SIZE``): a test's
    embeddings server, and its failures, are its own."""
    from infra.embeddings import recent_queries
    from recall.exact_vectors import kept_vectors

    recent_queries.clear()
    kept_vectors.clear()  # and no kept exact-layer vectors: each test's database is its own
    yield


@dataclass
class World:
    firm_a: Firm
    firm_b: Firm
    alice: Any
    bob: Any
    charlie: Any
    matter_laptop: Matter
    matter_deposit: Matter
    matter_secret: Matter  # firm A matter nobody of our users is assigned to
    matter_b: Matter

    def note(self, content: str, *, firm: Firm | None = None, scope: str = MemoryScope.CASE,
             matter: Matter | None = None, owner=None, category: str = Category.FACT,
             actor: Any = "system:test", **extra: Any) -> Note:
        """Store a note through the real service (embedding, audit and all)."""
        return create_note(
            NoteDraft(
                firm=firm or self.firm_a,
                content=content,
                memory_scope=scope,
                category=category,
                source_type=extra.pop("source_type", SourceType.MANUAL),
                matter=matter,
                owner=owner,
                **extra,
            ),
            actor=actor,
        )

    def contradicting_notes(self, old_text: str, new_text: str, values: str, *,
                            actor: str = "system:test") -> tuple[Note, Note, Any]:
        """Two current deposit-matter notes of one slot with other values (said three days and one
        day ago), linked ``contradicts`` as routing links them; returns (older, newer, link)."""
        now = timezone.now()
        old = self.note(old_text, matter=self.matter_deposit, said_at=now - timedelta(days=3))
        new = self.note(new_text, matter=self.matter_deposit, said_at=now - timedelta(days=1))
        link = link_notes(new, old, link_type=LinkType.CONTRADICTS, weight=1.0, actor=actor,
                          reason=disagreement_reason(values))
        return old, new, link


@pytest.fixture
def world(db) -> World:
    firm_a = FirmFactory(name="Alpha 律师事务所", slug="alpha")
    firm_b = FirmFactory(name="Beta Law", slug="beta")
    alice = UserFactory(username="alice", is_staff=True)
    bob = UserFactory(username="bob")
    charlie = UserFactory(username="charlie", is_staff=True)
    MembershipFactory(user=alice, firm=firm_a, role=Role.ADMIN)
    MembershipFactory(user=bob, firm=firm_a, role=Role.LAWYER)
    MembershipFactory(user=charlie, firm=firm_b, role=Role.ADMIN)
    matter_laptop = MatterFactory(firm=firm_a, title="电脑花屏退货纠纷")
    matter_deposit = MatterFactory(firm=firm_a, title="租房押金返还纠纷")
    matter_secret = MatterFactory(firm=firm_a, title="保密并购案")
    matter_b = MatterFactory(firm=firm_b, title="Beta 的案件")
    AssignmentFactory(matter=matter_laptop, user=alice)
    AssignmentFactory(matter=matter_laptop, user=bob)
    AssignmentFactory(matter=matter_deposit, user=alice)
    AssignmentFactory(matter=matter_b, user=charlie)
    return World(firm_a, firm_b, alice, bob, charlie, matter_laptop, matter_deposit, matter_secret, matter_b)


@pytest.fixture
def contradicting_deposit(world) -> tuple[Note, Note]:
    """The deposit deduction said as 2000 and, later, as 3000: (older, newer), both current."""
    old, new, _link = world.contradicting_notes("房东说墙面有污渍，要扣2000元押金。",
                                                "房东今天改口了，房东说墙面有污渍，要扣3000元押金。", "3000 vs 2000")
    return old, new
