"""The errors the layers under the operator commands raise (records.lookup, the matter export and
bundle, the erasure plan, the transcript importer, retention, tokens) reach the operator in the
command's language: Chinese by default (settings.LANGUAGE_CODE), English when asked — never an
English sentence in the Chinese output. The commands' ``--help`` (description and arguments)
follows the same language."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import load_command_class
from django.utils import translation

from connectors.services import TokenError, create_token
from memory.models import AuditEvent
from memory.services.audit import record
from records.services.retention import RecordsError, set_legal_hold, set_retention
from tests.site.test_command_language import CJK, ENGLISH_WORDS, run

pytestmark = pytest.mark.django_db


def cases(world, folder: Path) -> list[tuple[tuple[str, ...], str, str]]:
    """(command line, what it says in English, what it says in Chinese); each failure is raised
    below the command (records.lookup, matter_transfer, matter_bundle, erasure_plan, ingest)."""
    not_an_export = folder / "not-an-export.json"
    not_an_export.write_text(json.dumps({"hello": "world"}), encoding="utf-8")
    empty_bundle = folder / "empty-bundle.zip"
    with zipfile.ZipFile(empty_bundle, "w") as bundle:
        bundle.writestr("readme.txt", "x")
    transcript = folder / "transcript.json"
    transcript.write_text(json.dumps({"firm": "alpha", "conversations": [{"id": "conv-1", "user": "mallory", "messages": [
        {"id": "m1", "role": "user", "timestamp": "2026-03-01T10:00:00+08:00", "content": "押金"}]}]}), encoding="utf-8")
    entry = record(actor=world.alice, event=AuditEvent.MATTER_CREATED, firm=world.firm_a, object_type="matter",
                   object_id=world.matter_laptop.pk)
    return [
        (("verify_erasure", str(entry.pk), "--no-data-folder"),
         f"audit entry {entry.pk} is not an erasure tombstone", f"审计记录 {entry.pk} 不是删除的墓碑记录"),
        (("export_matter", "NOPE-1"), "no matter with reference 'NOPE-1'", "没有编号为 'NOPE-1' 的案件"),
        (("export_matter", "NOPE-1", "--firm", "alpha"),
         "no matter with reference 'NOPE-1' in firm alpha", "律所 alpha 中没有编号为 'NOPE-1' 的案件"),
        (("export_matter", world.matter_laptop.reference, "--firm", "nope"),
         "no firm with slug 'nope'", "没有标识为 'nope' 的律所"),
        (("import_matter", str(not_an_export), "--firm", "alpha", "--user", "alice"),
         'not a LegalMem matter export (expected "format": "legalmem-matter")',
         '不是 LegalMem 案件导出文件（应含 "format": "legalmem-matter"）'),
        (("import_matter", str(empty_bundle), "--firm", "alpha", "--user", "alice"),
         "unexpected member 'readme.txt' (a bundle holds matter.json and documents/<sha256>)",
         "意外的成员 'readme.txt'（导出包只包含 matter.json 和 documents/<sha256>）"),
        (("import_matter", str(not_an_export), "--firm", "alpha", "--user", "mallory"),
         "no user 'mallory'", "没有用户 'mallory'"),
        (("erase", "--subject", "王", "--firm", "alpha", "--dry-run"),
         "the subject must be at least two characters (a name, not a letter)", "当事人至少需要两个字符"),
        (("erase", "--user", "mallory", "--dry-run"), "no user 'mallory'", "没有用户 'mallory'"),
        (("import_conversation", str(transcript), "--no-progress"),
         "conversation 'conv-1': unknown user 'mallory'", "对话 'conv-1'：未知用户 'mallory'"),
    ]


def test_lower_layer_errors_reach_the_operator_in_chinese_by_default(world, tmp_path):
    assert translation.get_language() == "zh-hans"  # what a command run from the shell speaks
    for args, english, chinese in cases(world, tmp_path):
        said = run(*args)
        assert "CommandError: " in said, (args, said)
        assert chinese in said, (args, said)
        assert english not in said, (args, said)
        assert not ENGLISH_WORDS.search(said.replace("CommandError", "")), (args, said)


def test_lower_layer_errors_reach_the_operator_in_english_when_asked(world, tmp_path):
    with translation.override("en"):
        for args, english, _chinese in cases(world, tmp_path):
            said = run(*args)
            assert english in said, (args, said)
            assert not CJK.search(said.replace(str(tmp_path), "")), (args, said)


def service_failures(world) -> list:
    """What the admin and the token page / MCP show as it is: a retention or token refusal."""
    return [
        lambda: set_legal_hold(world.matter_laptop, actor=world.alice, reason=" "),
        lambda: set_retention(world.firm_a, -1, actor=world.alice),
        lambda: create_token(world.alice, firm=world.firm_a, name="x", scope="read", days=0),
        lambda: create_token(world.charlie, firm=world.firm_a, name="x", scope="read", days=30),
    ]


@pytest.mark.parametrize("language", ["zh-hans", "en"])
def test_retention_and_token_refusals_speak_the_readers_language(world, language):
    with translation.override(language):
        for failure in service_failures(world):
            with pytest.raises((RecordsError, TokenError)) as refused:
                failure()
            message = str(refused.value)
            if language == "en":
                assert not CJK.search(message), message
            else:
                assert CJK.search(message) and not ENGLISH_WORDS.search(message), message


def help_of(command: str) -> str:
    return load_command_class("records" if command != "import_conversation" else "remember",
                              command).create_parser("manage.py", command).format_help()


@pytest.mark.parametrize("command, english, chinese", [
    ("export_matter", ["Export a matter's notes, links", "the matter's reference (or id)",
                       "file to write (default: standard output)"],
     ["导出案件的笔记、关联", "案件编号（或 ID）", "写入的文件（默认：标准输出）"]),
    ("erase", ["(GDPR/PIPL erasure)", "print what would be erased; change nothing"],
     ["（GDPR/PIPL 删除）", "列出将被删除的内容，不做任何改动"]),
    ("import_conversation", ["from a JSON transcript", "no progress bar"], ["从 JSON 对话记录导入对话", "不显示进度条"]),
])
def test_help_speaks_the_operators_language(command, english, chinese):
    """The command's own description and argument help; argparse's headings ("usage:", "options:")
    and Django's common options (--verbosity, --settings …) stay as their libraries wrote them."""
    shown = help_of(command)  # the default language, as from the shell
    assert all(text in shown for text in chinese), shown
    assert not any(text in shown for text in english), shown
    with translation.override("en"):
        shown = help_of(command)
    assert all(text in shown for text in english), shown
    assert not CJK.search(shown), shown
