"""The chat websocket (``/ws/chat/``), protocol in README "Chat protocol".

Client frames: ``{"type": "ask", "question", "conversation_id"?, "matter_id"?, "as_of"?}`` (``as_of``: a
day, ``2026-03-01``, to read memory at) and ``{"type": "cancel"}``.
Server frames: ``ready``, ``conversation``, ``recalled``, ``token``, ``done``, ``error``, and
``conversation_updated`` when another socket of the same user (another tab, maybe on another
server: the channel layer, Redis with ``REDIS_URL``) finished a turn (docs/operations.md,
"Several servers and workers").

The LLM stream runs in its own task (Channels handles one incoming frame at a time), so a
``cancel`` frame or a disconnect stops it at once; all ORM work goes through
``database_sync_to_async``.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import connections
from django.utils import translation
from django.utils.translation import gettext as _

from chat.citations import ShownMarkers
from chat.answering import answer_stream, chat_client, describe_llm_error, engine_name, llm_config
from chat.turns import Recall, TurnRejected, TurnStart, begin_turn, finish_turn, recall
from infra import metrics
from infra.logs import bind, log_event
from infra.logs.context import request_id_from
from infra.llm import LLMClient, LLMError
from memory.models import Firm, Message
from infra.text_hygiene import MalformedJSON, UnsafeInput, parse_json

#: The largest chat frame the consumer reads; a larger one gets `frame_too_large` and a 4413 close
#: (Daphne reads up to legalmem_site/serving.py CHAT_TRANSPORT_MAX_BYTES, so the page sees why).
CHAT_MAX_FRAME_BYTES = 65536

logger = logging.getLogger("legalmem.chat")

CLOSE_UNAUTHENTICATED = 4401
CLOSE_TOO_LARGE = 4413  # like HTTP 413; autobahn lets an application close only with 1000 or 3000-4999


def group_of_user(user_id: int) -> str:
    """The channel-layer group of one user's open chat sockets, on every server."""
    return f"chat.user.{user_id}"


#: What the turn's timeout allows beyond the answer request's budget (waiting for a slot, retries).
TURN_TIMEOUT_GRACE_SECONDS = 10.0

def in_worker_thread(function):
    """``database_sync_to_async`` on the shared thread pool instead of the one thread all
    sync code of the process shares: a turn's save / recall / finish each run in their own
    transaction with their own connection, so 50 conversations do not queue behind each other.
    The pool thread's connection is closed when the call ends, so no connection is left behind."""

    def run_and_close(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()

    return database_sync_to_async(run_and_close, thread_sensitive=False)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def _optional_id(content: dict[str, Any], name: str) -> int | None:
    value = content.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise TurnRejected("bad_request", f"{name} must be a positive integer")
    return value


class ChatConsumer(AsyncJsonWebsocketConsumer):
    turn_task: asyncio.Task | None = None
    client: LLMClient | None = None
    user = None
    firm_ids: list[int] = []
    opened_at: float | None = None
    request_id: str | None = None
    frames_in = frames_out = turns = 0
    user_group: str | None = None  # set once the socket joined its user's group

    async def connect(self) -> None:
        # The connection's id (the proxy's X-Request-ID of the handshake, or a new one) is on
        # every line written while it is served (docs/operations.md, "Logs").
        self.request_id = request_id_from(dict(self.scope.get("headers", [])).get(b"x-request-id", b"").decode("latin-1"))
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            # Accepted first: a close before accept is an HTTP 403 the page cannot tell apart
            # from a refused origin; README promises close code 4401.
            metrics.WS_CONNECTIONS.labels("unauthenticated").inc()
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.language = self._language()
        config = llm_config()
        self.engine = engine_name(config)
        self.client = chat_client() if config else None
        firms = await self._firms()
        self.firm_ids = [pk for pk, _slug in firms]
        await self.accept()
        metrics.WS_CONNECTIONS.labels("accepted").inc()
        metrics.WS_OPEN.inc()
        self.opened_at = time.perf_counter()
        await self._join_user_group()
        await self.send_json(
            {"type": "ready", "user": user.get_username(), "firms": [slug for _pk, slug in firms], "engine": self.engine}
        )

    async def disconnect(self, code: int) -> None:
        """The client is gone: stop the LLM request; the partial reply is saved as cancelled."""
        task = self.turn_task
        if task is not None and not task.done():
            task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=10)
            except (asyncio.CancelledError, asyncio.TimeoutError):
                pass
        if self.client is not None:
            await self.client.aclose()
        if self.user_group:
            await self._quietly(self.channel_layer.group_discard(self.user_group, self.channel_name), "leave")
        self._log_connection(code)

    def _log_connection(self, code: int) -> None:
        """The connection's one line: who, how long, how many frames and turns, how it closed."""
        if self.opened_at is not None:
            metrics.WS_OPEN.dec()
        with bind(request_id=self.request_id):
            log_event(
                logger, "ws_connection",
                outcome="closed" if self.user is not None else "unauthenticated",
                close_code=code,
                duration_ms=_ms(self.opened_at) if self.opened_at is not None else None,
                user_id=self.user.pk if self.user is not None else None,
                firm_ids=self.firm_ids if self.user is not None else None,
                frames_in=self.frames_in, frames_out=self.frames_out, turns=self.turns,
            )

    async def send_json(self, content: dict[str, Any], close: bool = False) -> None:
        """Every frame we send is counted by type (``legalmem_websocket_frames_total``)."""
        await super().send_json(content, close=close)
        self.frames_out += 1
        metrics.WS_FRAMES.labels("out", str(content.get("type", "other"))).inc()

    # --- the user's other sockets (channel layer) ---------------------------------------

    async def _join_user_group(self) -> None:
        """Hear about turns the user finishes in other tabs. A channel layer that is down costs
        only these notices, never the chat itself."""
        if self.channel_layer is None:
            return
        group = group_of_user(self.user.pk)
        if await self._quietly(self.channel_layer.group_add(group, self.channel_name), "join"):
            self.user_group = group

    async def _tell_other_sockets(self, conversation_id: int, message_id: int, title: str, matter_id: int | None) -> None:
        if self.user_group:
            await self._quietly(self.channel_layer.group_send(self.user_group, {
                "type": "conversation.elsewhere", "origin": self.channel_name, "conversation_id": conversation_id,
                "message_id": message_id, "title": title, "matter_id": matter_id,
            }), "notify")

    async def conversation_elsewhere(self, event: dict[str, Any]) -> None:
        """Another socket of this user finished a turn: the page refreshes that conversation."""
        if event.get("origin") == self.channel_name:
            return
        await self._send_quietly({
            "type": "conversation_updated", "conversation_id": event["conversation_id"],
            "message_id": event["message_id"], "title": event["title"], "matter_id": event["matter_id"],
        })

    async def _quietly(self, call: Awaitable[Any], what: str) -> bool:
        try:
            await call
        except Exception:  # noqa: BLE001 - the channel layer only carries notices between tabs
            logger.warning("channel layer: could not %s the group of user %s", what, self.user.pk, exc_info=True)
            return False
        return True

    def _language(self) -> str:
        """The page's language (Django's language cookie), so the offline answer and error
        sentences of a turn come in the language the user reads the page in."""
        code = self.scope.get("cookies", {}).get(settings.LANGUAGE_COOKIE_NAME, "")
        return code if code in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE

    @database_sync_to_async
    def _firms(self) -> list[tuple[int, str]]:
        return list(Firm.objects.of_user(self.user).values_list("pk", "slug"))

    # --- incoming frames ------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs) -> None:
        """Decode defensively: a bad frame gets an error frame, never a crashed consumer."""
        self.frames_in += 1
        if text_data is None:
            metrics.WS_FRAMES.labels("in", "bad").inc()
            await self._error("bad_frame", "只接受 JSON 文本帧。")
            return
        if len(text_data.encode("utf-8", "surrogatepass")) > CHAT_MAX_FRAME_BYTES:
            metrics.WS_FRAMES.labels("in", "bad").inc()
            # Said first, then closed (4413): the page shows why and reconnects.
            await self._error("frame_too_large", f"消息过大：最多 {CHAT_MAX_FRAME_BYTES} 字节。")
            await self.close(code=CLOSE_TOO_LARGE)
            return
        try:
            content = parse_json(text_data)
        except MalformedJSON:
            metrics.WS_FRAMES.labels("in", "bad").inc()
            await self._error("bad_json", "无法解析的 JSON。")
            return
        except UnsafeInput as unsafe:  # NUL, a lone surrogate or too deep (infra/text_hygiene.py)
            metrics.WS_FRAMES.labels("in", "bad").inc()
            await self._error("bad_request", f"{unsafe.field}: {unsafe.message}", field=unsafe.field)
            return
        if not isinstance(content, dict):
            metrics.WS_FRAMES.labels("in", "bad").inc()
            await self._error("bad_frame", "消息必须是 JSON 对象。")
            return
        await self.receive_json(content)

    async def receive_json(self, content: dict[str, Any], **kwargs) -> None:
        kind = content.get("type")
        metrics.WS_FRAMES.labels("in", kind if kind in ("ask", "cancel") else "unknown").inc()
        if kind == "ask":
            await self._ask(content)
        elif kind == "cancel":
            await self._cancel()
        else:
            await self._error("unknown_type", f"未知的消息类型：{str(kind)[:40]!r}（支持 ask、cancel）。")

    async def _ask(self, content: dict[str, Any]) -> None:
        if self.turn_task is not None and not self.turn_task.done():
            await self._error("busy", "上一个回答尚未结束；请等待或先停止。")
            return
        try:
            conversation_id = _optional_id(content, "conversation_id")
            matter_id = _optional_id(content, "matter_id")
        except TurnRejected as rejected:
            await self._error(rejected.code, rejected.message)
            return
        self.turn_task = asyncio.create_task(
            self._run_turn(content.get("question"), conversation_id, matter_id, content.get("as_of"))
        )

    async def _cancel(self) -> None:
        if self.turn_task is not None and not self.turn_task.done():
            self.turn_task.cancel()

    # --- the turn ---------------------------------------------------------------------

    async def _run_turn(self, question: Any, conversation_id: int | None, matter_id: int | None,
                        as_of: Any = None) -> None:
        self.turns += 1
        with bind(request_id=self.request_id, user_id=self.user.pk), translation.override(self.language):
            await self._answer(question, conversation_id, matter_id, as_of)

    async def _answer(self, question: Any, conversation_id: int | None, matter_id: int | None,
                      as_of: Any = None) -> None:
        started = time.perf_counter()
        try:
            start: TurnStart = await in_worker_thread(begin_turn)(
                self.user, question=question, conversation_id=conversation_id, matter_id=matter_id, as_of=as_of
            )
        except TurnRejected as rejected:
            metrics.CHAT_TURN_REJECTIONS.labels(rejected.code).inc()
            log_event(logger, "chat_turn", outcome="rejected", code=rejected.code,
                      matter_id=matter_id, conversation_id=conversation_id, duration_ms=_ms(started))
            await self._error(rejected.code, rejected.message)
            return
        except asyncio.CancelledError:
            return
        except Exception:  # noqa: BLE001 — the page must always hear back (docs/chat-page.md)
            logger.exception("could not start a turn for user %s", self.user.pk)
            log_event(logger, "chat_turn", level=logging.ERROR, outcome="error",
                      matter_id=matter_id, conversation_id=conversation_id, duration_ms=_ms(started))
            await self._error("turn_failed", _("The question could not be saved; please try again."))
            return
        await self.send_json(
            {
                "type": "conversation",
                "conversation_id": start.conversation.pk,
                "title": start.conversation.title,
                "matter_id": start.conversation.matter_id,
                "created": start.conversation_created,
                "user_message_id": start.user_message.pk,
            }
        )
        parts: list[str] = []
        status, error = Message.Status.COMPLETE, ""
        timings: dict[str, float] = {}
        memory: Recall | None = None
        llm_outcome: str | None = None  # set once the LLM was asked (legalmem_llm_chat_requests_total)
        try:
            memory = await in_worker_thread(recall)(self.user, start)
            timings["recall_ms"] = _ms(started)
            await self.send_json(
                {
                    "type": "recalled",
                    "user_message_id": start.user_message.pk,
                    "engine": self.engine,
                    "notes": memory.recalled,
                    "plan": memory.plan,
                    "warning": memory.warning,
                    "nothing_on": memory.nothing_on,
                    "held_at": memory.held_at,  # the "as of" chip (docs/chat-page.md)
                }
            )
            stream = answer_stream(
                self.client, memory.llm_messages, question=start.user_message.content,
                recalled=memory.recalled, warning=memory.warning, max_tokens=memory.answer_max_tokens,
                current_matter_id=start.conversation.matter_id, nothing_on=memory.nothing_on,
            )
            llm_outcome = "ok" if self.client is not None else None
            shown = ShownMarkers(len(memory.recalled))  # markers read as they stream (chat/citations.py)
            async with asyncio.timeout(await self._answer_timeout(memory.answer_max_tokens)):
                async for token in stream:
                    if not parts:
                        timings["first_token_ms"] = _ms(started)
                    parts.append(token)
                    if text := shown.feed(token):
                        await self.send_json({"type": "token", "text": text})
            if text := shown.close():
                await self.send_json({"type": "token", "text": text})
        except asyncio.CancelledError:
            status = Message.Status.CANCELLED
            llm_outcome = llm_outcome and "cancelled"
        except TimeoutError:
            status, error = Message.Status.FAILED, _("The answer took too long and was stopped.")
            llm_outcome = llm_outcome and "timeout"
        except TurnRejected as rejected:
            status, error = Message.Status.FAILED, rejected.message
        except LLMError as failure:
            # The user gets a translated sentence; the server address and details go to the log.
            status, error = Message.Status.FAILED, describe_llm_error(failure)
            llm_outcome = llm_outcome and type(failure).__name__
            logger.error("LLM failed in conversation %s: %s", start.conversation.pk, failure)
        except Exception:  # noqa: BLE001 — whatever broke, the question and the partial reply are kept
            logger.exception("chat turn failed in conversation %s", start.conversation.pk)
            status, error = Message.Status.FAILED, _("Internal server error; the answer is incomplete.")
            llm_outcome = llm_outcome and "error"
        if llm_outcome:
            metrics.LLM_CHAT_REQUESTS.labels(llm_outcome).inc()
        timings["total_ms"] = _ms(started)
        await self._finish(start, memory, "".join(parts), status, error, timings)

    async def _answer_timeout(self, max_tokens: int | None) -> float:
        """How long the answer may stream: ``CHAT_TURN_TIMEOUT_SECONDS``, or longer when the LLM
        request's own budget (from ``max_tokens`` and the server's measured speed) needs it —
        a slow server that keeps making progress is not cut off by the turn."""
        floor = float(settings.CHAT_TURN_TIMEOUT_SECONDS)
        if self.client is None:
            return floor
        return max(floor, await self.client.abudget_seconds(max_tokens) + TURN_TIMEOUT_GRACE_SECONDS)

    async def _finish(
        self, start: TurnStart, memory: Recall | None, reply: str, status: str, error: str,
        timings: dict[str, float],
    ) -> None:
        saved = await in_worker_thread(finish_turn)(
            start, memory or Recall(result=None, llm_messages=[]), reply=reply, status=status,
            engine=self.engine, timings=timings, error=error,
        )
        if error:
            await self._error("llm_failed" if status == Message.Status.FAILED else "turn_failed", error,
                              user_message_id=start.user_message.pk)
        await self._send_quietly(
            {
                "type": "done",
                "conversation_id": start.conversation.pk,
                "user_message_id": start.user_message.pk,
                "message_id": saved.pk,
                "status": status,
                "reply": saved.content,
                "engine": self.engine,
                "notes": memory.recalled if memory else [],
                "citations": saved.citations,
                "timings": timings,
            }
        )
        await self._tell_other_sockets(start.conversation.pk, saved.pk, start.conversation.title,
                                       start.conversation.matter_id)

    async def _error(self, code: str, message: str, **extra: Any) -> None:
        await self._send_quietly({"type": "error", "code": code, "message": message, **extra})

    async def _send_quietly(self, frame: dict[str, Any]) -> None:
        """Send unless the socket is already gone (after a disconnect there is nobody to tell)."""
        try:
            await self.send_json(frame)
        except Exception:  # noqa: BLE001
            logger.debug("could not send %s frame: client gone", frame.get("type"))
