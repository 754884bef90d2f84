"""The fingerprints an erasure keeps (records/fingerprints.py): identifiers, clauses and names are
found again in any text, URL-encoded or not, and a date is no identifier (the retention purge's
reason names the closing date)."""
from __future__ import annotations

from urllib.parse import quote

from records.fingerprints import Fingerprints, proper_names
from records.verification import _matches

ERASED = "委托人欧阳翠花的身份证号330102199001011234，于2026-10-21结案，押金八千元至今未退还给委托人。"


def fingerprints() -> Fingerprints:
    return Fingerprints.of([ERASED], ["欧阳翠花"])


def test_an_id_number_a_clause_and_a_name_are_found_inside_other_text():
    found = fingerprints()
    assert found.matches("查询 330102199001011234 的结果") == 1
    assert found.matches("摘录：押金八千元至今未退还给委托人。") == 1
    assert found.matches("她叫欧阳翠花吧") == 1
    assert found.matches("另一位房东的押金纠纷，编号 330102199001019999") == 0


def test_a_date_is_no_identifier_so_a_reason_may_name_it():
    assert fingerprints().matches("retention period of 365 days after closing on 2026-10-21") == 0


def test_a_url_encoded_query_string_in_a_log_line_is_recognised():
    line = f'127.0.0.1 "GET /memory/?q={quote("欧阳翠花 330102199001011234")} HTTP/1.1" 200\n'.encode()
    assert _matches(fingerprints(), line)[0] >= 2


def test_the_stored_form_holds_no_content_and_reads_back_the_same():
    stored = fingerprints().to_json()
    assert "欧阳翠花" not in str(stored) and "330102199001011234" not in str(stored)
    again = Fingerprints.from_json(stored)
    assert again.tokens == fingerprints().tokens and again.names == fingerprints().names


def test_the_people_named_in_a_text_are_names_a_reason_may_not_carry():
    text = "委托人王磊于三月起诉房东。The tenant met Mr Whitfield at the flat."
    names = proper_names(text)
    assert "王磊" in names and "Whitfield" in names and "The" not in names
    found = Fingerprints.of([text], names)
    assert found.matches("erased at the request of Whitfield") == 1
    assert found.matches("王磊本人书面要求") == 1
    assert found.matches("the tenant's written request") == 0


def test_a_common_word_jieba_takes_for_a_name_is_not_one():
    """"明白" is tagged as a person by jieba; a later "明白了" in any reply is no residue."""
    names = proper_names("好的明白了，穆晓岚的案子我来跟进。")
    assert "穆晓岚" in names and "明白" not in names
