"""``manage.py rules`` lists every registered rule (memory.rules) with its name and why, in the
operator's language; a refusal recorded with a rule's name reads with its why."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import translation

from memory.rules import explained, load_rules


def said(*args: str) -> str:
    out = io.StringIO()
    call_command("rules", *args, stdout=out)
    return out.getvalue()


def test_every_table_and_rule_is_listed_with_its_why() -> None:
    with translation.override("en"):
        shown = said()
        tables = load_rules()
        assert list(tables)[:3] == ["extraction", "routing", "recall"]
        for table, found in tables.items():
            assert f"{table} ({len(found)})" in shown
            for rule in found:
                assert f"  {rule.name}" in shown and str(rule.why) in shown
    assert "  content-present [content]: A note must say something." in shown
    assert "  correction: A correction of the same point" in shown
    assert "  exact-case-number: A case number names one case" in shown


def test_the_rules_speak_chinese_by_default() -> None:
    with translation.override("zh-hans"):
        shown = said("--table", "extraction")
    assert "content-present [content]: 笔记必须有内容。" in shown
    assert "routing" not in shown


def test_an_unknown_table_is_refused() -> None:
    with translation.override("en"), pytest.raises(CommandError, match="no rule table 'nope'"):
        said("--table", "nope")


def test_a_recorded_refusal_reads_with_its_rules_why() -> None:
    load_rules()
    with translation.override("en"):
        assert explained("item 2: missing content [content-present]") == \
            "item 2: missing content [content-present] — A note must say something."
        assert explained("dropped: over the limit") == "dropped: over the limit"
