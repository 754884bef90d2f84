"""One vocabulary on the command line too: what an IT administrator's management commands print,
and the errors they stop with, come from the catalogs — in Chinese (the product's default
language, settings.LANGUAGE_CODE, which a command run from the shell speaks) and in English."""
from __future__ import annotations

import io
import re

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import translation

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")
# Two English words in a row: a sentence left untranslated (identifiers and numbers are single tokens).
ENGLISH_WORDS = re.compile(r"\b[a-z]{2,} [a-z]{2,}\b")


def run(*args: str) -> str:
    """What the command says: its output, or the message it stops with."""
    out = io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=io.StringIO())
    except CommandError as error:
        return out.getvalue() + f"CommandError: {error}"
    return out.getvalue()


def cases(world) -> list[tuple[tuple[str, ...], str, str]]:
    """(command line, what it says in English, what it says in Chinese)."""
    reference = world.matter_laptop.reference
    return [
        (("erase", "--matter", reference, "--firm", "alpha", "--dry-run"),
         f"matter {reference} would be erased: 0 notes", f"案件 {reference} 将被删除"),
        (("erase", "--subject", "王某", "--dry-run"),
         "--subject needs --firm (a subject is named within one firm)", "--subject 需要同时指定 --firm"),
        (("verify_erasure", "999999"), "no audit entry 999999", "没有编号为 999999 的审计记录"),
        (("check_embeddings",), "-d, column agrees", "与数据库列一致"),
        (("purge_expired", "--dry-run"), "nothing is past its retention period", "没有超过保存期限的案件"),
        (("link_contradictions", "--firm", "nope"), "unknown firm 'nope'", "未知律所 'nope'"),
        (("resume_turn_extractions",), "re-enqueued 0 turn extraction job(s)", "已重新排队 0 个轮次抽取任务"),
        (("mcp", "--token-file", "/nonexistent/legalmem-token"),
         "cannot read the token file /nonexistent/legalmem-token: it does not exist",
         "无法读取令牌文件 /nonexistent/legalmem-token：文件不存在"),
    ]


def test_commands_speak_chinese_by_default(world):
    assert settings.LANGUAGE_CODE == "zh-hans"
    with translation.override("zh-hans"):
        for args, english, chinese in cases(world):
            said = run(*args)
            assert chinese in said, (args, said)
            assert CJK.search(said), (args, said)
            assert english not in said, (args, said)
            assert not ENGLISH_WORDS.search(said.replace("CommandError", "")), (args, said)


def test_commands_speak_english_when_asked(world):
    with translation.override("en"):
        for args, english, _chinese in cases(world):
            said = run(*args)
            assert english in said, (args, said)
            assert not CJK.search(said), (args, said)
