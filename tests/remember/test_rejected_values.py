"""A correction that names the value it rejects revises the stored note that states it
(``remember/routing/rejected.py``): no slot word needed, the old note kept in history, the
revised note citing both messages, and what the correction's message says besides kept too."""
from __future__ import annotations

import pytest

from memory.models import Note
from remember.routing import compare
from remember.routing.rejected import says_more_than_the_correction
from tests.remember.factories import ConversationFactory


@pytest.mark.parametrize("said, old, revised", [
    ("不是住院7天，是住院9天。", "左手腕骨折，住院7天，医疗费花了23600元。", "左手腕骨折，住院9天，医疗费花了23600元。"),
    ("刚才说错了，一个月是休息四天，不是两天。", "当事人每天上班12个小时，一个月休息两天，工资5800元。",
     "当事人每天上班12个小时，一个月休息四天，工资5800元。"),
    ("上次说医疗费23600元，我把发票又加了一遍，其实是25180元。", "住院9天，医疗费花了23600元。",
     "住院9天，医疗费花了25180元。"),
    ("另外更正一下，有问题的是2万个，不是3万个。", "今年1月那批货有3万个袋子封口开裂。", "今年1月那批货有2万个袋子封口开裂。"),
    ("Actually, the contract ends on 31 July 2026, not 30 June.", "Amy's contract runs until 30 June 2026.",
     "Amy's contract runs until 31 July 2026."),
    # 88 and 3 are not the room: numbers written with other digits are no rival to the rejected one
    ("刚核对了一下，地址是3幢602室，不是502，我抄错了。", "律师函寄到潘立新家，地址是杭州市拱墅区湖墅南路88号3幢502室。",
     "律师函寄到潘立新家，地址是杭州市拱墅区湖墅南路88号3幢602室。"),
])
def test_the_rejected_value_is_replaced_in_the_stored_note(said, old, revised):
    relation = compare(said, old, said=said)
    assert relation.kind.value == "correction", relation.reason
    assert relation.revised == revised
    assert "rejects" in relation.reason


@pytest.mark.parametrize("said, old", [
    ("不是住院7天，是住院9天。", "医生说至少休息三个月。"),                   # the note holds no 7天
    ("不是住院7天，是住院9天。", "住院7天，其中ICU住院7天。"),              # twice: which one cannot be told
    ("更正：月租金是8500元，不是8000元。", "王磊的月租金从7000元涨到8000元。"),  # two sums in the clause
    ("不是住院7天，是住院9天。", "住院9天，医疗费23600元。"),               # already the new value
    ("我同事李明住院不是7天，是9天。", "王磊住院7天。"),                    # another person
])
def test_nothing_is_revised_when_the_rejected_value_cannot_be_placed(said, old):
    assert compare(said, old, said=said).revised is None


def test_a_correction_that_says_more_is_kept_beside_the_revision():
    assert says_more_than_the_correction("不是住院7天，是住院9天，出院记录上写的是2月27日入院、3月8日出院。")
    assert not says_more_than_the_correction("更正：押金是3000元，不是2000元。")
    assert not says_more_than_the_correction("刚才说错了，一个月是休息四天，不是两天。")


def test_through_the_write_path_the_stay_is_revised_and_the_dates_kept(world, make_turn):
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    assert make_turn(conversation, "左手腕骨折，住院7天，医疗费花了23600元。", "好的。").status == "done"
    assert make_turn(conversation, "不是住院7天，是住院9天，出院记录上写的是2月27日入院、3月8日出院。",
                     "好的。").status == "done"
    notes = {note.content: note for note in Note.objects.filter(conversation=conversation)}
    old = next(note for text, note in notes.items() if "住院7天" in text and "不是" not in text)
    assert old.status == Note.Status.SUPERSEDED
    revised = old.superseded_by
    assert "住院9天" in revised.content and "23600元" in revised.content
    assert set(old.source_message_ids) < set(revised.source_message_ids)  # it cites both messages
    assert any("3月8日" in text and note.status == Note.Status.ACTIVE for text, note in notes.items())


def test_the_clients_own_next_step_is_corrected_too(world, make_turn):
    """The offline engine filed the address as 行动建议 (a plan: "律师函寄到…"); the client's
    correction of it is a fact, and still revises it (dev2 gc07)."""
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, "律师函寄到潘立新家，地址是杭州市拱墅区湖墅南路88号3幢502室。", "好的。")
    old = Note.objects.get(content__contains="3幢502室")
    make_turn(conversation, "刚核对了一下，地址是3幢602室，不是502，我抄错了。", "好的。")

    old.refresh_from_db()
    assert old.status == Note.Status.SUPERSEDED
    assert "3幢602室" in old.superseded_by.content and old.superseded_by.status == Note.Status.ACTIVE


def test_a_bare_cue_with_two_values_replaces_the_one_the_note_states():
    """"更正一下，他说的12000是到手的，税前月薪是15000": the stored note says 12000, so 15000 replaces it."""
    said = "更正一下，他说的12000是到手的，税前月薪是15000。"
    relation = compare(said, "郑国强2023年7月入职，月薪12000元。", said=said)
    assert relation.revised == "郑国强2023年7月入职，月薪15000元。"
    assert compare(said, "郑国强的月薪是9000元。", said=said).revised is None  # neither value stored


@pytest.mark.parametrize("said, old, revised", [
    # forms written for this rule (not taken from the note-truth set)
    ("我记错了，他已经还了7000元，不是5000元。", "马志红已经还了5000元，剩下的钱约定年底前还清。",
     "马志红已经还了7000元，剩下的钱约定年底前还清。"),
    ("之前说的117600元不对，装修款已付126000元。", "当事人已付装修款117600元。", "当事人已付装修款126000元。"),
    ("车价是126500元，刚才说128000元说错了。", "车价128000元，另付过户费1500元。", "车价126500元，另付过户费1500元。"),
    ("入职日期记错了，应该是2020年3月1日，不是2021年3月1日。", "陈美玲2021年3月1日入职。", "陈美玲2020年3月1日入职。"),
])
def test_other_ways_of_naming_the_wrong_value(said, old, revised):
    assert compare(said, old, said=said).revised == revised


@pytest.mark.parametrize("said, old, revised", [
    # written for the rule: the wrong value named as said before, in the clause after the new one
    ("车最后成交价是12万5，比上次说的13万便宜了五千。", "二手车商报价13万，含过户。", "二手车商报价12万5，含过户。"),
    ("租金最后定在每月4800元，比之前说的5000元少了200。", "房东开价月租5000元，押二付一。", "房东开价月租4800元，押二付一。"),
])
def test_the_wrong_value_named_later_in_the_sentence(said, old, revised):
    assert compare(said, old, said=said).revised == revised


def test_a_value_named_as_said_before_that_the_note_does_not_hold_revises_nothing():
    said = "车最后成交价是12万5，比上次说的13万便宜了五千。"
    assert compare(said, "二手车商报价14万，含过户。", said=said).revised is None


@pytest.mark.parametrize("first, second, old, new", [
    # written for the rule, not taken from the note-truth set
    ("陈美玲2021年3月1日入职，在公司做会计，月薪9200元。", "入职日期记错了，应该是2020年3月1日，不是2021年3月1日。",
     "2021年3月1日", "2020年3月1日"),
    ("装修公司合同总价168000元，我们已付装修款117600元。", "之前说的117600元不对，已付装修款是126000元。", "117600", "126000"),
    ("我买的二手车价格是128000元，另外付了1500元过户服务费。", "车价是126500元，刚才说128000元说错了。", "128000", "126500"),
])
def test_through_the_write_path_a_correction_sentence_is_one_statement(world, make_turn, first, second, old, new):
    """"…记错了，应该是X，不是Y" was cut into three notes (one an 行动建议 "应该是X"), none of which
    could replace the stored value: a correcting sentence is now one unit (``units_of``)."""
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, first, "好的。")
    make_turn(conversation, second, "好的。")
    active = [n.content for n in Note.objects.filter(conversation=conversation, status=Note.Status.ACTIVE)]
    assert not [text for text in active if old in text and new not in text], active
    assert any(new in text for text in active)


# written for the rule, not taken from the note-truth set
@pytest.mark.parametrize("said, old, revised", [
    ("纠正一下，房东公司叫“宏达置业”，宏伟的宏。", "房东是“弘达置业”的员工，姓周。", "房东是“宏达置业”的员工，姓周。"),
    ("更正一下，证人王晓明当时在场。", "证人王小明当时在场，看到了事故经过。", "证人王晓明当时在场，看到了事故经过。"),
    # a two-character name, when the client names the character written wrong (dev3 e03)
    ("还有两处要改：借款人名字是韦栋，栋梁的栋，之前我打成了东。", "到期后韦东只还过一笔1万8。", "到期后韦栋只还过一笔1万8。"),
])
def test_a_name_written_anew_replaces_the_old_spelling(said, old, revised):
    relation = compare(said, old, said=said)
    assert relation.revised == revised
    assert "how a name is written" in relation.reason


@pytest.mark.parametrize("said, old", [
    ("房东公司叫“宏达置业”。", "房东是“弘达置业”的员工。"),  # no correction said: another company, maybe
    ("更正一下，房东公司叫“宏达”。", "房东是“弘达”的员工。"),  # two characters differ in one all the time
    ("更正一下，房东公司叫“宏达置业”。", "房东是“弘达置业”的员工，中介是“宏远置业”。"),  # the new name is one letter off two words
    ("更正一下，证人王晓明当时在场。", "小王晓得这件事。"),  # a word that looks alike is no name
    ("更正一下，借款人名字是韦栋。", "到期后韦东只还过一笔1万8。"),  # two characters, the wrong one not named
    ("借款人名字是韦栋，之前我打成了冬。", "到期后韦东只还过一笔1万8。"),  # the character named is not the note's
])
def test_no_name_is_respelled_without_a_cue_a_long_enough_name_and_one_fit(said, old):
    relation = compare(said, old, said=said)
    assert relation.revised is None or "how a name is written" not in relation.reason


def test_the_assistants_figure_worked_out_from_a_corrected_price_is_retired(world, make_turn):
    """dev3 (judged): "3 × 138,000 = 414,000" stayed current after the price was corrected to
    128,000. The assistant's figure resting on the old value is superseded by the correction; one
    that does not state it stays."""
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, "许文博今年1月在车行买了一辆二手车，价格138000元，后来查出是泡水车。",
              "经营者有欺诈行为的，可以要求三倍赔偿，即138000×3=414000元（《消费者权益保护法》第五十五条）。"
              "建议尽快做证据保全公证。")
    figure = Note.objects.get(conversation=conversation, content__contains="414000")
    other = Note.objects.filter(conversation=conversation, content__contains="证据保全").first()
    make_turn(conversation, "刚才说错了，车价是128000元，不是138000。", "好的。")

    figure.refresh_from_db()
    assert figure.status == Note.Status.SUPERSEDED
    assert "128000" in figure.superseded_by.content
    if other is not None:
        other.refresh_from_db()
        assert other.status == Note.Status.ACTIVE


def test_a_correction_of_two_points_revises_both():
    """"月租是5400不是5200，所以押金是两个月10800": the rent by its rejected value, the deposit by
    its slot (dev3 e08: the deposit stayed 10400)."""
    said = "我记错了，月租是5400不是5200，所以押金是两个月10800。"
    old = "2024年3月刘佳怡在上海徐汇区租了一套一居室，月租5200，押二付一，押金10400。"
    relation = compare("更正：月租是5400元，不是5200元，押金是两个月10800。", old, said=said)
    assert relation.revised == "2024年3月刘佳怡在上海徐汇区租了一套一居室，月租5400，押二付一，押金10800。"


def test_the_second_pass_never_brings_the_rejected_value_back():
    said = "上次说医疗费23600元，我把发票又加了一遍，其实是25180元，漏了一张复查的发票。"
    relation = compare(said, "左手腕骨折，住院9天，医疗费花了23600元。", said=said)
    assert relation.revised == "左手腕骨折，住院9天，医疗费花了25180元。"


@pytest.mark.parametrize("said, old, revised", [
    ("刚才比例说反了：签约时付的是70%，验收后付30%。", "合同约定签约时付30%，到货验收后30日内付70%。",
     "合同约定签约时付70%，到货验收后30日内付30%。"),
])
def test_two_values_said_the_wrong_way_round_trade_places(said, old, revised):
    relation = compare(said, old, said=said)
    assert relation.kind.value == "correction" and relation.revised == revised


@pytest.mark.parametrize("said, old", [
    ("签约时付70%，验收后付30%。", "合同约定签约时付30%，到货验收后30日内付70%。"),  # no word of a swap
    ("说反了，是原告不是被告。", "合同约定签约时付30%，到货验收后30日内付70%。"),     # not these values
])
def test_no_swap_without_its_cue_and_both_values(said, old):
    from remember.routing.swapped import revised_by_swap
    assert revised_by_swap(said, old) is None


def test_a_rescheduled_day_replaces_the_day_and_its_words():
    """"哦不对，约的是下周四下午" for "下周三约了店长当面谈" (dev3 e12): the note written from the turn
    holds the resolved day, the turn itself only "下周四"."""
    relation = compare("不对，约的是下周四（2026年2月26日）下午，店长周三轮休。", "下周三（2026年2月25日）约了店长当面谈。",
                       said="哦不对，约的是下周四下午，店长周三轮休。")
    assert relation.revised == "下周四（2026年2月26日）下午约了店长当面谈。"


def test_a_count_of_another_measure_is_another_point():
    """"私教课我其实只上了5次" corrects the sessions attended, not the 24节 bought (dev3 e12, judged)."""
    from remember.routing.cued_slot import revised_by_slot

    said = "更正一下，私教课我其实只上了5次，那8次里有3次是免费体测。"
    assert revised_by_slot(said, said, "在FitZone办了年卡，还买了私教课24节，每节300，一共7200。") is None
    assert revised_by_slot(said, said, "私教课徐晓敏上了8次。")[0] == "私教课徐晓敏上了5次。"


def test_a_rejected_value_in_the_stored_note_is_no_point_of_a_later_change():
    """"更正：月租是5400元，不是5200元" keeps its 5200 when the landlord "改成只扣…2500" (dev3 e09)."""
    from remember.routing.cued_slot import revised_by_slot

    said = "昨天跟房东见了面。他现在改成只扣刷墙的钱，2500，冰箱那部分不提了。"
    assert revised_by_slot(said, said, "更正：月租是5400元，不是5200元，押金是两个月10800。") is None


def test_the_double_of_a_corrected_deposit_is_retired_with_it(world, make_turn):
    """dev2 v04 (judged): "应当双倍返还定金…即40万元" stayed current after the 定金 20万 was corrected
    to 15万. A sum the note says is a double of the corrected one rests on it."""
    conversation = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    make_turn(conversation, "客户钱美华买二手房，总价三百二十万，付了定金20万。卖家现在不想卖了。",
              "卖家无正当理由拒绝履行，适用定金罚则：收受定金的一方不履行债务的，应当双倍返还定金"
              "（《民法典》第五百八十七条），即40万元。")
    double = Note.objects.get(conversation=conversation, content__contains="40万元")
    make_turn(conversation, "等一下，我看了合同，定金是15万，不是20万。", "好的。")

    double.refresh_from_db()
    assert double.status == Note.Status.SUPERSEDED


def test_a_sum_that_only_happens_to_be_a_double_stays():
    from legaltext.values import values
    from remember.routing.write import _worked_from

    deposit = values("定金20万")[0]
    assert _worked_from(values("应当双倍返还定金，即40万元")[0], deposit, "应当双倍返还定金，即40万元")
    assert not _worked_from(values("首付40万元")[0], deposit, "首付40万元")


def test_the_whole_sentence_is_read_only_for_the_cue_clauses_words():
    """The sentence around a sum is a point only through the words the cue clause names; an English
    note is never read whole this way (its sentences end at a full stop the plain cut ignores)."""
    from remember.routing.cued_slot import revised_by_slot

    said = ("And I got the deposit wrong last time: my card statement shows RMB 25,000, so the bank transfer "
            "was 103,000.")
    old = ("On 10 January 2026 Tom Becker signed a contract with a used-car dealer for a Tiguan at RMB 128,000, "
           "and paid a deposit of RMB 25,000 by card the same day.")
    revised = revised_by_slot(said, said, old)
    assert revised is None or "128,000" in revised[0]


def test_a_swap_names_its_months():
    said = "还有，两笔还款的金额说反了：春节前还的是3000，7月那次才是5000。"
    relation = compare(said, "2025年春节前邓浩还了5000，7月又还了3000。", said=said)
    assert relation.revised == "2025年春节前邓浩还了3000，7月又还了5000。"


def test_a_turn_with_its_own_days_is_not_read_through_the_notes_resolution():
    """"还款期限是2025年6月30日，不是5月31日": the resolved "5月31日（2025年5月31日）" of the note must
    not turn the rejected day into a new one (dev4 w02: the loan's date became 2025年5月31日)."""
    said = "另外我上次写错了，借条上约定的还款期限是2025年6月30日，不是5月31日，刚核对了借条照片。"
    new = "上次写错了，借条上约定的还款期限是2025年6月30日，不是5月31日（2025年5月31日），刚核对了借条照片。"
    relation = compare(new, "客户孟雪说，她2024年5月借给大学同学邓浩9万元。", said=said)
    assert relation.revised is None or "2024年5月" in relation.revised


def test_the_swap_is_a_named_routing_rule():
    import remember.routing.rules  # noqa: F401  (registers the routing table)
    from memory.rules import rule

    swapped = rule("routing", "swapped-values")
    assert swapped is not None and str(swapped.why)
    assert swapped.check(("刚才比例说反了：签约时付的是70%，验收后付30%。", "合同约定签约时付30%，到货验收后30日内付70%。"))
    assert not swapped.check(("签约时付70%，验收后付30%。", "合同约定签约时付30%，到货验收后30日内付70%。"))


def test_a_sum_paid_corrects_no_price():
    """"前面的数有误，华纶已经付了86万" corrects the 80万 paid, not the 合同价126万 (dev4 w06, judged)."""
    from remember.routing.cued_slot import revised_by_slot

    said = "前面的数有误，华纶已经付了86万，蒋卫东漏说了。"
    assert revised_by_slot(said, said, "蒋卫东2025年3月承包了嘉兴华纶纺织有限公司的厂房改造工程，合同价126万。") is None
    assert revised_by_slot(said, said, "工程2025年10月竣工验收合格，华纶到现在只付了80万。")[0] == \
        "工程2025年10月竣工验收合格，华纶到现在只付了86万。"


def test_a_moved_appointment_is_read_in_a_turn_that_names_other_days():
    """The turn names a day of its own elsewhere (入职时间其实是2021年3月), yet the statement that restates
    "约谈改到这周五下午3点" is read with the day its weekday was resolved to (dev4 wc06)."""
    said = ("韩立军的事有几个变化：一是厂里约谈改到这周五下午3点了，原来的周三上午取消；二是入职时间其实是2021年3月，"
            "之前他自己记错了。")
    new = "韩立军的事有几个变化：一是厂里约谈改到这周五（2026年1月23日）下午3点了，原来的周三上午取消。"
    relation = compare(new, "人事约他下周三（2026年1月21日）上午去厂里当面谈。", said=said)
    assert relation.revised == "人事约他这周五（2026年1月23日）下午去厂里当面谈。", relation.reason


def test_a_month_of_the_turns_story_moves_no_other_month():
    """"还有一笔6万是去年12月付的" resolved to 2025年12月 is a payment's month, not a correction of
    another note's "去年10月" (dev4: it moved another client's unpaid-wage month)."""
    said = "前面的数有误，华纶已经付了86万，还有一笔6万是去年12月付的。哦不对，竣工验收是2025年11月。"
    relation = compare("还有一笔6万是去年12月（2025年12月）付的。",
                       "公司从去年10月（2025年10月）起就没发过工资，10月、11月、12月三个月全欠着。", said=said)
    assert relation.revised is None


def test_a_year_said_alone_is_corrected_by_a_month_of_another_year():
    """"是他2018年买的" then "房子其实是2020年5月买的…我之前一直以为是2018年" (dev4 wc16): a year alone is
    a value; "2025年" is no point of "2025年10月15日" (the same year: nothing moved)."""
    said = "等一下，我刚查了购房合同，房子其实是2020年5月买的，是婚后买的，我之前一直以为是2018年。"
    old = "潘婷和周凯2019年10月登记结婚，房子是他2018年买的，首付90万是他爸妈出的。"
    assert compare(said, old, said=said).revised == old.replace("2018年", "2020年5月")
    said = "更正一下，合同其实是2025年签的。"
    assert compare(said, "货是2025年10月15日送到的，对方验收签了字。", said=said).revised is None


def test_a_rejected_value_revises_a_note_that_names_someone_else_too():
    """"…审计报告上写的是760万，不是之前说的800万" names nobody in its own words: the note that says 800万
    once is revised though it names 孙立强 and the turn 郑国栋 (dev5)."""
    said = "郑国栋的公司那边有进展了。他拿到了2024年度的审计报告，净利润审计报告上写的是760万，不是之前说的800万。"
    old = "公司这几年效益不错，2024年度净利润大概800万，但孙立强每年给自己发一百多万的工资奖金。"
    assert compare(said, old, said=said).revised == old.replace("800万", "760万")


def test_a_rejected_day_goes_with_the_day_it_was_resolved_to():
    """"the cancellation call was on 6 April, not 20 March" against "said on 20 March (20 March 2026) the
    agency called": the day and its resolution are one value (dev5 yc14)."""
    said = "Actually, I checked my phone log — the cancellation call was on 6 April, not 20 March."
    old = "Emma Larsen said on 20 March (20 March 2026) the agency called and said the tour was cancelled."
    assert compare(said, old, said=said).revised == (
        "Emma Larsen said on 6 April the agency called and said the tour was cancelled.")


def test_a_resolved_day_is_not_revised_by_a_rejection_that_does_not_name_it():
    """"住院应该是15天，1月8号进去，1月23号出院" corrects the stay, not the day of the accident (dev2)."""
    said = "我刚跟客户核实了，住院应该是15天，1月8号进去，1月23号出院，他把出院那天算错了。"
    old = "客户冯建国1月8日（2026年1月8日）晚上在文一西路被一辆电动车撞了，住院12天。"
    revised = compare(said, old, said=said).revised
    assert revised is None or "1月23" not in revised
