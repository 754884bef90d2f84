"""The errors the layers under the operator commands raise (records.lookup, the matter export and
bundle, the erasure plan, the transcript importer, retention, tokens) reach the operator in the
command's language: Chinese by default (settings.LANGUAGE_CODE), English when asked — never an
English sentence in the Chinese output. The commands' ``--help`` (description and arguments)
follows the same language."""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class
from django.core.management.base import BaseCommand
from django.utils import translation

from connectors.services import TokenError, create_token
from memory.models import AuditEvent
from memory.services.audit import record
from records.services.retention import RecordsError, set_legal_hold, set_retention
from tests.site.product_packages import left_out, product_packages
from tests.site.test_command_language import CJK, ENGLISH_WORDS, run

pytestmark = pytest.mark.django_db

OPTION_NAME = re.compile(r"(?<![\w-])--?[a-z][\w-]*")  # --source, -h: named as the command takes them


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


# The product's operator commands, by app: every one's --help speaks the operator's language.
# The evaluations are developer tools; the story's generate_story is here because `make run` runs it.
OPERATOR_APPS = {"records", "memory", "remember", "recall", "connectors", "documents", "navigation", "logins", "chronology",
                 "my_memory", "chat", "infra", "legaltext", "legalmem_site"}
#: Apps whose commands are developer tools (the evaluations), not the operator's.
DEVELOPER_APPS = {"showcase", "evaluation"}
RUN_BY_MAKE_RUN = {"generate_story"}


def parser_of(command: str):
    return load_command_class(get_commands()[command], command).create_parser("manage.py", command)


def help_of(command: str) -> str:
    """The --help text with argparse's line wrapping undone (a phrase may straddle a line break)."""
    return " ".join(parser_of(command).format_help().split())


def shared_options() -> list:
    """-h and Django's options of every command (--verbosity, --settings …): their libraries' own words."""
    return BaseCommand().create_parser("manage.py", "any")._actions


def own_texts(command: str) -> list:
    """The command's description and the help of each of its own arguments (db_worker's included)."""
    parser, shared = parser_of(command), {action.dest for action in shared_options()}
    return [parser.description] + [action.help and str(action.help)
                                    for action in parser._actions if action.dest not in shared]


def without_library_words(command: str, shown: str) -> str:
    """The --help as shown minus what argparse and Django wrote: the usage line, the section headings
    and the help of the shared options."""
    shown = shown[shown.index(" ".join(parser_of(command).description.split())):]  # the usage line goes
    shared = [" ".join(str(action.help).split()) for action in shared_options()]
    for text in ["positional arguments:", "options:", *shared]:
        shown = shown.replace(text, " ")
    return shown


HELP_CASES = [
    ("export_matter", ["Export a matter's notes, links", "the matter's reference (or id)",
                       "file to write (default: standard output)"],
     ["导出案件的笔记、关联", "案件编号（或 ID）", "写入的文件（默认：标准输出）"]),
    ("import_matter", ["Import a matter exported with export_matter", "the firm's slug to import into"],
     ["导入用 export_matter --format json 或 bundle 导出的案件", "导入到的律所的标识"]),
    ("erase", ["(GDPR/PIPL erasure)", "print what would be erased; change nothing"],
     ["（GDPR/PIPL 删除）", "列出将被删除的内容，不做任何改动"]),
    ("purge_expired", ["Purge closed matters past their firm's retention period", "enqueue the periodic purge job"],
     ["清理已结案且超过本所保存期限的案件", "将定期清理任务加入队列后退出"]),
    ("import_conversation", ["from a JSON transcript", "no progress bar"],
     ["从 JSON 对话记录导入对话", "不显示进度条"]),
    ("replay_erasures", ["what the erasure journal says was erased", "a journal file besides the data folder's"],
     ["按删除日志重新删除", "除数据文件夹中的 erasures.jsonl 外的删除日志文件"]),
    ("verify_erasure", ["Check that nothing of an erasure's content remains",
                        "the erasure's audit entry id (its tombstone)"],
     ["已无任何残留", "该次删除的审计记录 ID（即其墓碑记录）"]),
    ("clean_echo_notes", ["notes made from the assistant's echoes", "delete them (each deletion is in the audit log)"],
     ["由助手复述召回的记忆而生成的笔记", "删除这些笔记（每次删除都记入审计日志）"]),
    ("import_documents", ["to a matter's documents", "the files to upload", "leave extraction to the worker"],
     ["上传为案件的文书", "要上传的文件", "文书提取交由工作进程完成"]),
    ("index_messages", ["Embed the messages that have no embedding yet", "embed at most this many now"],
     ["为尚无嵌入向量的消息生成嵌入向量", "本次最多嵌入的消息条数"]),
    ("link_contradictions", ["with other values 'contradicts'", "only this firm (its short name)"],
     ["关联为“矛盾”", "只处理该律所（律所标识）"]),
    ("resume_turn_extractions", ["Re-enqueue turn extraction jobs",
                                 "re-enqueue at most this many jobs (default 1000)"],
     ["轮次抽取任务重新排队", "最多重新排队的任务数（默认 1000）"]),
    ("run_worker", ["take over turn jobs left by dead workers", "Queues to exclude.", "Don't add a small delay"],
     ["接管已终止的工作进程留下的轮次抽取任务", "要排除的队列", "启动时不稍作延迟"]),
    ("mcp", ["Serve LegalMem's MCP server over stdio", "readable only by you"],
     ["通过 stdio 提供 LegalMem 的 MCP 服务器", "只有您本人可读"]),
    ("mcp_config", ["Print a desktop client's configuration", "readable only by you"],
     ["输出桌面客户端配置", "仅您本人可读"]),
    ("token_blocks", ["current blocks, or lift one", "lift the block of one address"],
     ["当前的封锁，或解除其中一项", "解除某个地址的封锁"]),
    ("check_embeddings", ["Check that the configured embedding backend fits the database column."],
     ["检查配置的嵌入后端与数据库列是否一致"]),
    ("reembed", ["Re-encode every stored vector", "switch search to the new vectors"],
     ["重新编码所有已存向量", "将检索切换到新向量"]),
    ("seed_demo", ["Create the demo firm (alice: firm admin"], ["创建示例律所（alice：律所管理员"]),
    ("rules", ["List the named rules the write and read paths apply", "only this table"],
     ["列出写入与读取路径所用的具名规则", "只列出该表"]),
    ("generate_story", ["Generate the month-long story", "at most N turns per request"],
     ["为一名用户生成为期一个月的示例故事", "每次请求最多 N 个轮次"]),
]


def test_every_operator_command_has_its_help_checked():
    """A new command in a product app (or one `make run` runs) joins HELP_CASES, translated."""
    operator_commands = {name for name, app in get_commands().items()
                         if app in OPERATOR_APPS or name in RUN_BY_MAKE_RUN}
    assert operator_commands == {command for command, _english, _chinese in HELP_CASES}


def test_every_app_is_an_operator_app_or_a_developer_app():
    """A new app's commands are checked unless it is named a developer tool (tests/site/product_packages.py)."""
    assert not OPERATOR_APPS & DEVELOPER_APPS
    assert left_out(OPERATOR_APPS | DEVELOPER_APPS) == set(), "a new app joins OPERATOR_APPS or DEVELOPER_APPS"
    assert product_packages() >= OPERATOR_APPS | DEVELOPER_APPS, "an app named here is gone"


@pytest.mark.parametrize("command, english, chinese", HELP_CASES)
def test_help_speaks_the_operators_language(command, english, chinese):
    """The command's own description and argument help; argparse's headings ("usage:", "options:")
    and Django's common options (--verbosity, --settings …) stay as their libraries wrote them."""
    shown = help_of(command)  # the default language, as from the shell
    assert all(text in shown for text in chinese), shown
    assert not any(text in shown for text in english), shown
    for text in own_texts(command):  # each in Chinese; option names, settings and values may stay
        assert text and CJK.search(text) and not ENGLISH_WORDS.search(OPTION_NAME.sub(" ", text)), (command, text)
    left = OPTION_NAME.sub(" ", without_library_words(command, shown))
    assert not ENGLISH_WORDS.search(left), left
    with translation.override("en"):
        shown = help_of(command)
    assert all(text in shown for text in english), shown
    assert not CJK.search(shown), shown
