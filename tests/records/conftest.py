"""Fixtures for records (erasure, retention, export, backup): a matter's memory written by the
real write path, and scanners that look for a string or a vector in every table of the database."""
from __future__ import annotations

import pytest
from django.db import connection
from django.utils import translation

from memory.models import Conversation, Message, Note
from records.verification import text_columns
from tests.remember.conftest import TurnMaker

# Unusual words, so a hit in the scan can only come from these turns.
SECRET_NAME = "欧阳翠花"
SECRET_TURN = f"我的房东{SECRET_NAME}在2024年5月1日拒绝退还押金8000元，还说押金要扣作装修费。"
SECRET_REPLY = f"根据《民法典》第七百零三条，{SECRET_NAME}无正当理由扣押押金，您可以要求返还8000元押金。"
OTHER_TURN = "我在2024年3月5日花5999元买了一台笔记本电脑，笔记本电脑在购买后约两周出现大面积花屏。"
OTHER_REPLY = "根据《消费者权益保护法》第二十四条，您可以要求商家退货。"

SKIPPED_TABLES = ("django_migrations",)


def vector_columns() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND udt_name = 'vector'"
        )
        return cursor.fetchall()


def tables_containing(text: str) -> dict[str, int]:
    """``table.column`` → rows whose value contains ``text`` (bytea: its UTF-8 bytes)."""
    found = {}
    with connection.cursor() as cursor:
        for table, column, data_type in text_columns():
            if table in SKIPPED_TABLES:
                continue
            if data_type == "bytea":
                condition = f'position(convert_to(%s, \'UTF8\') in "{column}") > 0'
            else:
                condition = f'"{column}"::text LIKE \'%%\' || %s || \'%%\''
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE {condition}', [text])
            count = cursor.fetchone()[0]
            if count:
                found[f"{table}.{column}"] = count
    return found


def tables_holding_vectors(vectors: list) -> dict[str, int]:
    """``table.column`` → rows whose vector equals one of ``vectors``."""
    found = {}
    with connection.cursor() as cursor:
        for table, column in vector_columns():
            for vector in vectors:
                literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
                cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}" = %s::vector', [literal])
                count = cursor.fetchone()[0]
                if count:
                    found[f"{table}.{column}"] = found.get(f"{table}.{column}", 0) + count
    return found


def vectors_of(text: str) -> list:
    """The stored embeddings of the notes and messages that contain ``text``."""
    notes = Note.objects.filter(content__contains=text, embedding__isnull=False).values_list("embedding", flat=True)
    messages = Message.objects.filter(content__contains=text, embedding__isnull=False).values_list("embedding", flat=True)
    return [list(v) for v in [*notes, *messages]]


@pytest.fixture(autouse=True)
def english():
    """Messages and command output in English (the product's default language is zh-Hans)."""
    with translation.override("en"):
        yield


@pytest.fixture(autouse=True)
def data_folder(settings, tmp_path):
    """A data folder of the test's own: the erasure journal and the verification scan stay in it."""
    settings.DATA_DIR = tmp_path / "data"
    settings.DATA_DIR.mkdir()
    return settings.DATA_DIR


@pytest.fixture
def make_turn() -> TurnMaker:
    return TurnMaker()


@pytest.fixture
def deposit_memory(world, make_turn):
    """alice's conversation on matter_deposit naming the landlord, run through the turn job
    (notes, routing decisions, audit entries, message embeddings), and her laptop conversation."""
    secret = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit, title="押金")
    other = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_laptop, title="电脑")
    secret_turn = make_turn(secret, SECRET_TURN, SECRET_REPLY)
    other_turn = make_turn(other, OTHER_TURN, OTHER_REPLY)
    assert secret_turn.status == "done"
    assert other_turn.status == "done"
    return secret, other
