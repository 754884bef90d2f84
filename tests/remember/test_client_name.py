"""Notes call the client by the name they gave earlier in the matter (issue 30, docs/write-path.md
"The client's name"), never by a name said in another matter or another firm."""
from __future__ import annotations

from memory.models import Note
from remember.client_name import client_name_before
from remember.extraction.grounding import introduced_names
from tests.remember.factories import ConversationFactory

INTRODUCTION = "你好，我叫王磊，2025年3月租了鼓楼区的一套房子，月租金8000元，押金16000元。"
CHECK_UP = "昨天我去鼓楼医院复查了，医生让我再休息两周，病历和发票我都留着。"


def fact_notes(conversation) -> list[str]:
    return list(Note.objects.filter(conversation=conversation, status="active").values_list("content", flat=True))


def test_introductions_name_people_not_companies() -> None:
    assert introduced_names(INTRODUCTION) == ["王磊"]
    assert introduced_names("本人刘晓梅，在公司做财务。") == ["刘晓梅"]
    assert introduced_names("我是宁波峰华公司的法务，想问合同的事。") == []
    assert introduced_names("我是被告，怎么办？") == []


def test_english_introductions_name_people_not_titles_roles_or_nationalities() -> None:
    assert introduced_names("Hi, I'm Claire Donovan, Canadian, Senior Product Design Manager at Hongbo.") == [
        "Claire Donovan"]
    assert introduced_names("My name is Claire and I rent a flat in Futian.") == ["Claire"]
    assert introduced_names("I’m Claire Donovan.") == ["Claire Donovan"]
    assert introduced_names("I'm Senior Counsel at Hongbo, writing for the company.") == []
    assert introduced_names("I'm Canadian, and my permit was cancelled.") == []
    assert introduced_names("I'm Claire Donovan's assistant, writing on her behalf.") == []
    assert introduced_names("I'm not sure the notice is valid. My name is on the lease.") == []


def test_a_later_english_session_names_the_client(world, make_turn) -> None:
    """An English note says "Claire Donovan", the name she gave, not "the user" or her login."""
    first = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="intake")
    make_turn(first, "Hello, I'm Claire Donovan, a design manager in Shenzhen. My landlord keeps the deposit.", "",
              day=1)
    later = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="follow-up")
    turn = make_turn(later, "Yesterday I sent the landlord a demand letter for the 12,000 yuan deposit.", "", day=3)

    assert turn.status == "done", turn.last_error
    assert client_name_before(turn.user_message) == "Claire Donovan"
    notes = fact_notes(later)
    assert any("Claire Donovan sent the landlord a demand letter" in note for note in notes), notes
    assert not any("the user" in note.lower() or "alice" in note for note in notes), notes


def test_a_later_session_of_the_matter_names_the_client(world, make_turn) -> None:
    """alice's first session introduces 王磊; the next session, another conversation of the same
    matter, says only "我": its note is about 王磊."""
    first = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="第一次")
    make_turn(first, INTRODUCTION, "", day=1)
    second = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="第二次")
    turn = make_turn(second, CHECK_UP, "", day=3)

    assert turn.status == "done", turn.last_error
    assert any(note.startswith("王磊，2025年3月") for note in fact_notes(first))  # not "用户叫王磊，…"
    notes = fact_notes(second)
    assert notes and all("用户" not in note for note in notes), notes
    assert any("王磊去鼓楼医院复查" in note for note in notes), notes


def test_a_name_from_another_matter_or_firm_is_not_used(world, make_turn) -> None:
    """bob's laptop matter and charlie's firm never heard 王磊: their "我" is "当事人"."""
    introduced = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(introduced, INTRODUCTION, "", day=1)
    bobs = ConversationFactory(user=world.bob, firm=world.firm_a, matter=world.matter_laptop)
    charlies = ConversationFactory(user=world.charlie, firm=world.firm_b, matter=world.matter_b)
    unnamed = [make_turn(bobs, CHECK_UP, "", day=3), make_turn(charlies, CHECK_UP, "", day=3)]

    for turn in unnamed:
        assert client_name_before(turn.user_message) == ""
        notes = fact_notes(turn.conversation)
        assert notes and all("王磊" not in note for note in notes), notes


def test_two_names_in_one_matter_name_nobody(world, make_turn) -> None:
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, INTRODUCTION, "", day=1)
    make_turn(conversation, "我叫李娅楠，是王磊的室友，押金是我们一起交的。", "", day=2)
    turn = make_turn(conversation, CHECK_UP, "", day=3)
    assert client_name_before(turn.user_message) == ""
    assert any("当事人去鼓楼医院复查" in note for note in fact_notes(conversation) if "复查" in note)


def test_a_lawyer_who_introduces_themselves_is_named_and_their_client_is_not_renamed(world, make_turn) -> None:
    """"我是范晓，客户孙立强…": later "我" is 范晓, and "客户" stays the client, not 范晓."""
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, "我是范晓，客户孙立强是顺川物流的仓储主管，2026年3月20日被公司解除劳动合同。", "", day=1)
    turn = make_turn(conversation, "客户昨天又收到公司的英文邮件了，我下午去余杭仲裁委递交了仲裁申请书。", "", day=2)

    assert client_name_before(turn.user_message) == "范晓"
    notes = [note for note in fact_notes(conversation) if "仲裁" in note or "邮件" in note]
    assert notes, fact_notes(conversation)
    assert not any("范晓昨天" in note for note in notes), notes
    assert any("范晓下午去余杭仲裁委" in note for note in notes), notes


def test_a_client_who_says_it_is_them_again_is_named() -> None:
    """"还是我，周婷婷" names its speaker, though jieba does not know the name (dev5)."""
    assert introduced_names("你好，还是我，周婷婷，婚纱照那件事。") == ["周婷婷"]
    assert introduced_names("还是我，先问一下合同的事。") == []
