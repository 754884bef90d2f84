"""Keeping the navigation graph current as notes change (real PostgreSQL, the real services and
the real task queue): the next page after a write is an incremental update or the stored graph
the background refresh made, never a full build, and never wider than what the user may see."""
from __future__ import annotations

from collections import defaultdict

import pytest
from django_tasks_db.models import DBTaskResult

from memory.models import Category, MatterAssignment, MemoryScope
from memory.services.notes import correct_note, delete_note, record_mention, supersede_note
from navigation import cache, snapshots
from navigation.graph import connected_components
from navigation.models import NavigationGraphSnapshot
from navigation.tasks import refresh_navigation_graphs_task
from tests.clients import client_for
from tests.task_worker import run_worker_once

GRAPH = "/api/navigation/graph"

PADDING = [
    "消费者权益保护法第二十四条规定了退货条件", "民法典规定出租人应当履行维修义务", "律师函应当写明事实和请求",
    "诉讼时效一般为三年，自知道权利受损之日起算", "调解协议经司法确认后具有强制执行力", "网购商品七日无理由退货不适用定制商品",
    "加班费的计算基数一般为劳动合同约定的工资", "工伤认定申请应在事故发生之日起一年内提出", "借条应当写明借款金额、利率和还款日期",
    "交通事故责任认定书是划分赔偿责任的重要依据", "物业服务合同约定的维修义务应当履行", "押金条是证明押金数额的重要证据",
    "培训机构预收费用应当按约定退还", "电子证据需要保存原始载体", "小额诉讼程序实行一审终审",
    "消费者协会可以调解消费纠纷", "合同约定不明时按交易习惯确定", "违约金过高可以请求法院调整",
    "举证责任一般由主张方承担", "微信聊天记录可以作为证据使用", "起诉状应写明诉讼请求和事实理由",
    "支付令适用于金钱给付请求", "仲裁裁决书自作出之日起生效", "房屋租赁合同应当采用书面形式",
]


def page(user, **params) -> dict:
    response = client_for(user).get(GRAPH, {"l0_limit": 5000, **params})
    assert response.status_code == 200, response.content
    return response.json()


def node_ids(payload: dict) -> set[str]:
    return {n["id"] for n in payload["nodes"]}


def assert_page_invariants(payload: dict) -> None:
    """Degree ≤ M (M0 on L0), every level non-empty and connected, one edge per pair."""
    params = payload["params"]
    level_of = {n["i"]: n["level"] for n in payload["nodes"]}
    assert len(level_of) == payload["total_nodes"]
    pairs = [(e["s"], e["t"]) for e in payload["edges"]]
    assert len(pairs) == len({tuple(sorted(p)) for p in pairs})
    for level in range(params["max_level"] + 1):
        members = {i for i, top in level_of.items() if top >= level}
        assert members, f"level {level} is empty"
        adjacency: dict[int, set[int]] = defaultdict(set)
        for e in payload["edges"]:
            if level in e["levels"]:
                assert e["s"] in members
                assert e["t"] in members
                adjacency[e["s"]].add(e["t"])
                adjacency[e["t"]].add(e["s"])
        cap = params["M0"] if level == 0 else params["M"]
        assert all(len(others) <= cap for others in adjacency.values())
        assert len(connected_components(members, adjacency.__getitem__)) == 1, f"L{level} is not connected"


@pytest.fixture
def firm_memory(world):
    """Firm A: firm-wide law notes (enough that one note is a small change), the laptop matter
    (alice + bob) and the deposit matter behind bob's wall (alice only); firm B for charlie."""
    law = [world.note(text, scope=MemoryScope.GENERAL_LAW, category=Category.LAW) for text in PADDING]
    laptop = [world.note("笔记本电脑购买七天后屏幕出现花屏，商家拒绝退货", matter=world.matter_laptop),
              world.note("张三保留了电脑花屏的视频和购物小票", matter=world.matter_laptop)]
    deposit = [world.note("房东以墙面污损为由扣留全部押金三千元", matter=world.matter_deposit)]
    firm_b = [world.note("Beta 所客户的押金纠纷证据", firm=world.firm_b, matter=world.matter_b),
              world.note("Beta 所的内部流程", firm=world.firm_b, scope=MemoryScope.GLOBAL)]
    return {"law": law, "laptop": laptop, "deposit": deposit, "firm_b": firm_b}


def counts() -> dict[str, int]:
    return dict(cache.stats)


@pytest.mark.django_db
def test_added_deleted_and_superseded_notes_reach_the_next_page_without_a_full_build(world, firm_memory):
    first = page(world.alice)
    assert cache.stats["builds"] == 1
    assert_page_invariants(first)

    added = world.note("商家客服承认该批次屏幕存在缺陷", matter=world.matter_laptop)
    after_add = page(world.alice)
    assert str(added.pk) in node_ids(after_add)
    assert node_ids(after_add) == node_ids(first) | {str(added.pk)}
    assert (cache.stats["builds"], cache.stats["incremental"]) == (1, 1)
    assert_page_invariants(after_add)

    gone = firm_memory["law"][3]
    delete_note(gone, actor="system:test")
    after_delete = page(world.alice)
    assert str(gone.pk) not in node_ids(after_delete)
    assert (cache.stats["builds"], cache.stats["incremental"]) == (1, 2)
    assert_page_invariants(after_delete)

    old = firm_memory["laptop"][0]
    new = world.note("笔记本电脑购买五天后屏幕出现花屏，商家同意换货", matter=world.matter_laptop)
    supersede_note(old, new, actor="system:test", reason="张三更正了购买时间")
    after_supersede = page(world.alice)
    assert str(old.pk) not in node_ids(after_supersede)
    assert str(new.pk) in node_ids(after_supersede)
    assert (cache.stats["builds"], cache.stats["incremental"]) == (1, 3)
    assert_page_invariants(after_supersede)

    # The trace to the new note runs on the updated graph and reaches it.
    trace = client_for(world.alice).get(f"/api/navigation/trace/{new.pk}").json()["trace"]
    assert trace["reached"]
    assert trace["path_nodes"][-1] == str(new.pk)


@pytest.mark.django_db
def test_a_correction_is_reinserted_and_a_mention_changes_nothing(world, firm_memory):
    page(world.alice)
    note = firm_memory["laptop"][1]
    record_mention(note, actor="system:test", source="test", confidence=0.9)
    page(world.alice)
    assert (cache.stats["builds"], cache.stats["incremental"], cache.stats["unchanged"]) == (1, 0, 1)
    correct_note(note, {"content": "张三保留了电脑花屏的视频、购物小票和维修单"}, actor="system:test")
    corrected = page(world.alice)
    assert (cache.stats["builds"], cache.stats["incremental"]) == (1, 1)
    label = next(n["label"] for n in corrected["nodes"] if n["id"] == str(note.pk))
    assert label.startswith("张三保留了电脑花屏的视频、购物小票和维修单"[:20])
    assert_page_invariants(corrected)


@pytest.mark.django_db
def test_bob_never_gets_the_walled_matter_through_an_incremental_update(world, firm_memory):
    bob_first = page(world.bob)
    charlie_first = page(world.charlie)
    walled = {str(n.pk) for n in firm_memory["deposit"]}
    walled.add(str(world.note("押金案：房东提供了退租时的照片", matter=world.matter_deposit).pk))
    walled.add(str(world.note("押金案：租客要求返还押金并支付利息", matter=world.matter_deposit).pk))
    shared = world.note("电脑花屏案：商家同意检测", matter=world.matter_laptop)
    bob = page(world.bob)
    assert cache.stats["builds"] == 2
    assert cache.stats["incremental"] == 1
    assert node_ids(bob) == node_ids(bob_first) | {str(shared.pk)}
    assert not walled & node_ids(bob)
    assert bob["total_nodes"] == len(node_ids(bob_first)) + 1
    assert sum(layer["top_count"] for layer in bob["layers"]) == bob["total_nodes"]
    assert all(str(world.matter_deposit.pk) not in e["key"] for e in bob["events"])
    assert "押金三千" not in str(bob)
    assert "退租时的照片" not in str(bob)
    trace = client_for(world.bob).get(f"/api/navigation/trace/{shared.pk}").json()["trace"]
    mentioned = {v["id"] for v in trace["visited"]} | {n["id"] for n in trace["nodes"]} | set(trace["path_nodes"])
    assert not walled & mentioned
    # Charlie's firm did not change: his graph is the cached one, and none of firm A is in it.
    charlie = page(world.charlie)
    assert charlie == charlie_first
    assert node_ids(charlie) == {str(n.pk) for n in firm_memory["firm_b"]}
    # Bob's stored graph (written after his full build) holds nothing of the walled matter either.
    for row in NavigationGraphSnapshot.objects.filter(user=world.bob):
        assert not walled & set(snapshots.decode(row.data, matter_titles={}).graph.ids)


@pytest.mark.django_db
def test_a_lost_assignment_is_a_new_key_and_no_stored_graph_serves_the_wider_set(world, firm_memory):
    deposit = {str(n.pk) for n in firm_memory["deposit"]}
    assert deposit <= node_ids(page(world.alice))
    assert NavigationGraphSnapshot.objects.filter(user=world.alice).count() == 1
    MatterAssignment.objects.filter(matter=world.matter_deposit, user=world.alice).delete()
    cache.clear()  # another process, or a restart: only the stored graphs are left
    after = page(world.alice)
    assert not deposit & node_ids(after)
    assert cache.stats["snapshots"] == 0, "the old key's graph is never a base"
    assert cache.stats["incremental"] == 0, "the old key's graph is never a base"
    assert cache.stats["builds"] == 1
    rows = NavigationGraphSnapshot.objects.filter(user=world.alice)
    assert rows.count() == 1, "the old key's graph is dropped when the new one is stored"
    assert not deposit & set(snapshots.decode(rows.get().data, matter_titles={}).graph.ids)


@pytest.mark.django_db
def test_the_background_refresh_has_the_graph_ready_before_the_next_page(
    world, firm_memory, settings, django_capture_on_commit_callbacks,
):
    settings.NAV_REFRESH_DELAY_SECONDS = 0
    alice_first, bob_first = page(world.alice), page(world.bob)
    assert NavigationGraphSnapshot.objects.count() == 2
    assert not DBTaskResult.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        added = world.note("房东同意先退还一半押金", matter=world.matter_deposit)
    with django_capture_on_commit_callbacks(execute=True):
        law = world.note("押金返还纠纷可以申请小额诉讼", scope=MemoryScope.GENERAL_LAW, category=Category.LAW)
    task = DBTaskResult.objects.get()  # debounced: one refresh for both writes
    assert task.task_path == refresh_navigation_graphs_task.module_path
    assert task.args_kwargs["args"] == [world.firm_a.pk]

    result = run_worker_once()
    assert result.status == "SUCCESSFUL", result.traceback
    assert result.return_value == {"incremental": 2}
    alice_rows = NavigationGraphSnapshot.objects.filter(user=world.alice)
    bob_rows = NavigationGraphSnapshot.objects.filter(user=world.bob)
    assert alice_rows.count() == bob_rows.count() == 1, "older versions are dropped"
    assert str(added.pk) in snapshots.decode(alice_rows.get().data, matter_titles={}).graph.ids
    assert str(added.pk) not in snapshots.decode(bob_rows.get().data, matter_titles={}).graph.ids

    cache.clear()  # a fresh process: no graph in memory
    alice, bob = page(world.alice), page(world.bob)
    assert (cache.stats["builds"], cache.stats["incremental"], cache.stats["snapshots"]) == (0, 0, 2)
    assert node_ids(alice) == node_ids(alice_first) | {str(added.pk), str(law.pk)}
    assert node_ids(bob) == node_ids(bob_first) | {str(law.pk)}
    assert_page_invariants(alice)
    assert_page_invariants(bob)


@pytest.mark.django_db
def test_a_graph_made_by_this_process_gives_way_to_the_stored_one(world, firm_memory, settings):
    """Two processes that each updated their own graph would disagree on edges; once the
    background refresh stored the graph of a version, every process serves that one."""
    page(world.alice)
    world.note("商家同意退货", matter=world.matter_laptop)
    own = page(world.alice)
    assert cache.stats["incremental"] == 1
    refresh_navigation_graphs_task.call(world.firm_a.pk)  # what the worker runs
    again = page(world.alice)
    assert cache.stats["snapshots"] == 1
    assert node_ids(again) == node_ids(own)
    page(world.alice)
    assert cache.stats["hits"] == 1


@pytest.mark.django_db
def test_no_refresh_is_queued_for_a_firm_whose_graph_nobody_opened(world, firm_memory, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        world.note("Beta 所新增的证据", firm=world.firm_b, matter=world.matter_b)
    assert not DBTaskResult.objects.exists()
