"""The MCP server (official ``mcp`` SDK, FastMCP): LegalMem's memory as tools and resources for
other assistants. One definition serves both transports: Streamable HTTP mounted at ``/mcp``
(``connectors.mcp_http``) and stdio (``manage.py mcp``).

Every call runs as the token's user, through the same services and ``visible_to`` rules as the
web, narrowed by the token (``connectors.selectors``); writes need a read-write token. Errors
come back as MCP errors with a plain message, never a traceback.
"""
from __future__ import annotations

import contextvars
import dataclasses
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Callable, get_args

import anyio
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.utils import translation
from django.utils.translation import gettext as _, gettext_lazy
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ResourceError, ToolError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from chat.turns import TurnRejected
from connectors import payloads
from connectors.models import AccessToken
from connectors.selectors import (
    RefusalReason,
    TokenCheck,
    narrowed_result,
    narrows_anything,
    token_conversations,
    token_matters,
    token_notes,
)
from connectors.services import (
    TokenError,
    WriteRefused,
    correct_with_token,
    forget_with_token,
    record_refusal,
    record_use,
    remember_turn,
)
from infra.embeddings import EmbeddingUnavailable
from memory.as_of import BadDate, memory_began, parse_as_of
from memory.models import Category, Matter, MemoryScope, Note
from my_memory.pages import note_details
from recall import InvalidSearch, NotFound, search_memory
from my_memory.serializers import SearchRequestSerializer
from memory.services.notes import NoteNotChangeable, NoteValidationError
from infra.text_hygiene import UnsafeInput, check_tree

logger = logging.getLogger("legalmem.connectors")

INSTRUCTIONS = (
    "LegalMem is a law firm's long-term memory. Search it before answering questions about the user's "
    "matters, clients or habits; remember what the user tells you that matters later. Everything you "
    "see is what this user may see (ethical walls apply); every call is in the firm's audit log."
)


@dataclass(frozen=True)
class Caller:
    """Who is calling: the checked token, the client's address and language."""

    token: AccessToken
    ip_address: str | None = None
    language: str | None = None
    via: str = "mcp"
    close_connections: bool = False  # a long-lived stdio process: no stale connection between calls


current_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("legalmem_mcp_caller", default=None)


class CallRefused(Exception):
    """A call that must not run (no token, or the token died since it was checked)."""


def _still_usable(caller: Caller) -> AccessToken:
    """The caller's token re-read: a token revoked while a stdio client runs stops at its next call."""
    token = AccessToken.objects.select_related("user", "firm").get(pk=caller.token.pk)
    reason = ""
    if token.is_revoked:
        reason = RefusalReason.REVOKED
    elif token.is_expired():
        reason = RefusalReason.EXPIRED
    elif not token.user.is_active or not token.is_member():
        reason = RefusalReason.NO_LONGER_MEMBER
    if reason:
        record_refusal(TokenCheck(token, reason, token.prefix), via=caller.via, ip_address=caller.ip_address)
        raise CallRefused(_("This access token is no longer valid (%(reason)s).") % {"reason": reason})
    return token


def _message_for(error: Exception) -> str | None:
    """The client's message for an expected failure, or None for a bug."""
    if isinstance(error, (CallRefused, TokenError)):
        return str(error)
    if isinstance(error, WriteRefused):
        return _("This token is read-only: nothing was written.")
    if isinstance(error, (Note.DoesNotExist, Matter.DoesNotExist, NotFound, LookupError)):
        return _("Not found (or you may not see it).")
    if isinstance(error, InvalidSearch):
        return f"{error.field}: {error.message}"
    if isinstance(error, UnsafeInput):
        return f"{error.field}: {error.message}"
    if isinstance(error, TurnRejected):
        return error.message
    if isinstance(error, NoteNotChangeable):
        return _("You may not change this note: it belongs to the whole firm (only a firm admin may).")
    if isinstance(error, NoteValidationError):
        return str(error)
    if isinstance(error, EmbeddingUnavailable):
        return _("The embedding service is unavailable; try again shortly.")
    if isinstance(error, ArgumentError):
        return str(error)
    return None


class ArgumentError(ValueError):
    """An argument the tool cannot take (after the SDK's own type checks)."""


class RejectedCall(ArgumentError):
    """A call refused before its tool runs (an unknown tool or resource, arguments the tool's
    signature refuses): audited with ``outcome`` ``rejected`` and this ``reason``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _run(name: str, arguments: dict[str, Any], work: Callable[[AccessToken], Any], *, resource: bool = False) -> Any:
    """Run one tool call or resource read as the caller, synchronously (in Django's thread):
    check the arguments and the token, do the work, audit it, and turn failures into MCP errors."""
    caller = current_caller.get()
    error_class = ResourceError if resource else ToolError
    if caller is None:
        raise error_class(_("No access token: connect with Authorization: Bearer <token>."))
    what = {"resource" if resource else "tool": name}
    try:
        with translation.override(caller.language or translation.get_language()):
            try:
                check_tree(arguments, "arguments")
                token = _still_usable(caller)
                result = work(token)
            except WriteRefused:  # audited as a refusal by the service
                raise error_class(_("This token is read-only: nothing was written.")) from None
            except Exception as error:  # noqa: BLE001 - every failure becomes an MCP error, never a traceback
                message = _message_for(error)
                if message is None:
                    logger.exception("MCP %s %s failed", "resource" if resource else "tool", name)
                    message = _("Internal error; it was logged for the administrators.")
                if isinstance(error, RejectedCall):
                    record_use(caller.token, via=caller.via, ip_address=caller.ip_address, outcome="rejected",
                               reason=error.reason, **what)
                elif not isinstance(error, CallRefused):
                    record_use(caller.token, via=caller.via, ip_address=caller.ip_address, outcome="error", **what)
                raise error_class(message) from None
            record_use(token, via=caller.via, ip_address=caller.ip_address, outcome="ok", **what)
            return result
    finally:
        if caller.close_connections:
            close_old_connections()


async def _call(name: str, arguments: dict[str, Any], work: Callable[[AccessToken], Any], *,
                resource: bool = False) -> Any:
    """``_run`` from async code: the ORM runs in Django's thread (``sync_to_async``)."""
    return await sync_to_async(_run, thread_sensitive=True)(name, arguments, work, resource=resource)


def _via() -> str:
    """How the current caller is connected (``mcp`` over HTTP, ``mcp-stdio``), for the audit."""
    caller = current_caller.get()
    return caller.via if caller is not None else "mcp"


def _note_id(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise ArgumentError(_("note_id must be a note's id (a UUID).")) from None


# --- calls refused before a tool runs ------------------------------------------------------------

#: What a refused argument is told, by pydantic's error type (``ValidationError.errors()``): the
#: SDK checks arguments against the tool's signature before the tool runs, in English with links.
ARGUMENT_PROBLEMS: dict[str, Any] = {
    "missing": gettext_lazy("%(field)s is required"),
    "string_type": gettext_lazy("%(field)s must be text"),
    "int_type": gettext_lazy("%(field)s must be a whole number"),
    "int_parsing": gettext_lazy("%(field)s must be a whole number"),
    "int_from_float": gettext_lazy("%(field)s must be a whole number"),
    "float_type": gettext_lazy("%(field)s must be a number"),
    "float_parsing": gettext_lazy("%(field)s must be a number"),
    "bool_type": gettext_lazy("%(field)s must be true or false"),
    "bool_parsing": gettext_lazy("%(field)s must be true or false"),
    "list_type": gettext_lazy("%(field)s must be a list"),
    "dict_type": gettext_lazy("%(field)s must be an object"),
    "model_type": gettext_lazy("%(field)s must be an object"),
}
OTHER_PROBLEM = gettext_lazy("%(field)s is not valid")
MAX_PROBLEMS_SHOWN = 3
MAX_NAME_CHARS = 100  # of an unknown tool's or resource's name, as audited


def argument_problems(errors: list[dict[str, Any]]) -> str:
    """Pydantic's errors in the active language: which argument (``scopes[1]``) and what it must
    be, never the library's words, the value or a link."""
    problems = []
    for error in errors[:MAX_PROBLEMS_SHOWN]:
        loc = [part for part in error.get("loc", ()) if isinstance(part, int) or part == error["loc"][0]]
        field = "".join(f"[{part}]" if isinstance(part, int) else str(part) for part in loc) or "arguments"
        problems.append(str(ARGUMENT_PROBLEMS.get(error.get("type", ""), OTHER_PROBLEM)) % {"field": field})
    return "; ".join(dict.fromkeys(problems))


def audited_name(name: str) -> str:
    """A caller-given tool name or resource address as it may be stored and shown: short, printable."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(name)[:MAX_NAME_CHARS])


def _reject(reason: str, message: Callable[[], str]) -> Callable[[AccessToken], Any]:
    """The ``work`` of a call refused before its tool runs: ``message`` is built in the caller's language."""
    def work(token: AccessToken) -> Any:
        raise RejectedCall(reason, message())
    return work


#: The request methods of the protocol (``initialize``, ``tools/call``, …), from the SDK's own types.
CLIENT_METHODS = frozenset(get_args(model.model_fields["method"].annotation)[0]
                           for model in get_args(types.ClientRequestType))


def unreadable_request(message: SessionMessage | Exception) -> str | None:
    """Why the SDK would refuse this request before any handler runs — ``unknown_method``, or
    ``invalid_request`` when its parameters are not the protocol's (a ``tools/call`` without a name
    or with ``arguments`` that are no object) — or None for anything it reads."""
    if isinstance(message, Exception) or not isinstance(message.message.root, types.JSONRPCRequest):
        return None
    request = message.message.root
    if request.method not in CLIENT_METHODS:
        return "unknown_method"
    try:
        types.ClientRequest.model_validate(request.model_dump(by_alias=True, mode="json", exclude_none=True))
    except ValidationError:
        return "invalid_request"
    return None


def _refuse_request(request: types.JSONRPCRequest, reason: str) -> SessionMessage:
    """Audit a request refused before any handler runs and answer it (synchronously, in Django's
    thread), in the caller's language: what the SDK would answer, "Invalid request parameters" in
    English after logging pydantic's account of the input, said instead in LegalMem's words."""
    caller = current_caller.get()
    method = audited_name(request.method)
    name = (request.params or {}).get("name")
    where = {"tool": audited_name(name)} if method == "tools/call" and isinstance(name, str) else {"method": method}
    try:
        if caller is not None:
            record_use(caller.token, via=caller.via, ip_address=caller.ip_address, outcome="rejected", reason=reason,
                       **where)
        with translation.override(caller.language if caller and caller.language else translation.get_language()):
            if reason == "unknown_method":
                code, text = types.METHOD_NOT_FOUND, _("No such method in the MCP protocol: %(method)s.") % {
                    "method": method}
            else:
                code, text = types.INVALID_PARAMS, _(
                    "The parameters of this %(method)s request are not as the MCP protocol defines them.") % {
                    "method": method}
    finally:
        if caller is not None and caller.close_connections:
            close_old_connections()
    return SessionMessage(types.JSONRPCMessage(types.JSONRPCError(
        jsonrpc="2.0", id=request.id, error=types.ErrorData(code=code, message=text))))


def _screened(run: Callable[..., Any]) -> Callable[..., Any]:
    """The SDK server's ``run`` behind LegalMem's screen: a request the SDK could not read is
    audited and answered here (``_refuse_request``) and never reaches it; the rest pass as they
    came. One place for HTTP, stdio and in-process sessions, which all call ``run``."""
    async def screen(source, sink, write_stream) -> None:
        async with source, sink:
            try:
                async for message in source:
                    reason = unreadable_request(message)
                    if reason is None:
                        await sink.send(message)
                        continue
                    answer = await sync_to_async(_refuse_request, thread_sensitive=True)(message.message.root, reason)
                    await write_stream.send(answer)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the transport ended the session (as the SDK's own receive loop takes it)

    async def run_screened(read_stream, write_stream, *args: Any, **kwargs: Any) -> Any:
        sink, screened = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(screen, read_stream, sink, write_stream)
            try:
                return await run(screened, write_stream, *args, **kwargs)
            finally:
                tasks.cancel_scope.cancel()

    return run_screened


class LegalMemServer(FastMCP):
    """FastMCP whose every call passes LegalMem's door (``_run``): an unknown tool, resource or
    prompt and arguments the tool's signature refuses are audited like any call and answered in
    the caller's language — not with pydantic's English and its links — and a tool's own error
    message comes back as it is, without the SDK's English "Error executing tool …" before it.
    Requests the protocol's own types refuse (``_screened``) are audited and answered likewise."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mcp_server.run = _screened(self._mcp_server.run)  # the SDK builds its server: wrap its run

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        if self._prompt_manager.get_prompt(name) is None:
            return await _call(audited_name(name), arguments or {}, _reject("unknown_prompt", lambda: _(
                "No such prompt: this server offers tools and resources, no prompts.")))
        return await super().get_prompt(name, arguments)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            return await _call(audited_name(name), arguments, _reject("unknown_tool", lambda: _(
                "No such tool. The tools are: %(tools)s.") % {"tools": ", ".join(self._tool_names())}))
        try:
            tool.fn_metadata.arg_model.model_validate(tool.fn_metadata.pre_parse_json(arguments))
        except ValidationError as error:
            errors = error.errors(include_url=False, include_input=False, include_context=False)
            return await _call(name, arguments, _reject("invalid_arguments", lambda: _(
                "Invalid arguments for %(tool)s: %(problems)s.") % {"tool": name,
                                                                   "problems": argument_problems(errors)}))
        try:
            return await super().call_tool(name, arguments)
        except ToolError as error:
            if isinstance(error.__cause__, ToolError):  # our own message, wrapped by the SDK in English
                raise error.__cause__ from None
            raise

    async def read_resource(self, uri: Any) -> Any:
        address = str(uri)
        known = any(str(resource.uri) == address for resource in self._resource_manager.list_resources()) or any(
            template.matches(address) for template in self._resource_manager.list_templates())
        if not known:
            return await _call(audited_name(address), {}, _reject("unknown_resource", lambda: _(
                "No such resource. The resources are: %(resources)s.") % {"resources": ", ".join(
                    [str(r.uri) for r in self._resource_manager.list_resources()]
                    + [t.uri_template for t in self._resource_manager.list_templates()])}), resource=True)
        return await super().read_resource(uri)

    def _tool_names(self) -> list[str]:
        return sorted(tool.name for tool in self._tool_manager.list_tools())


# --- the server ------------------------------------------------------------------------------

def build_server() -> FastMCP:
    """A FastMCP server with LegalMem's tools and resources (stateless, JSON responses: any
    server process answers any request, as the web does)."""
    server = LegalMemServer(name="LegalMem", instructions=INSTRUCTIONS, stateless_http=True, json_response=True,
                     streamable_http_path="/mcp", log_level="WARNING")

    @server.tool(name="search_memory", description=(
        "Search the firm's memory the way LegalMem's own assistant does: the notes (and saved messages) this user "
        "may see that best answer the query, each with its layer, score, the reasons it was recalled and its "
        "provenance, plus the retrieval plan and `passages`: the best passages of the matter's documents, each with "
        "its citation (《房屋租赁合同》第 3 页), page, offsets and viewer link. Every hit and passage has a `number` "
        "(hits 1…n, passages after them) and a `source_url`; `system_message` lists them as `- [n] …`: end each "
        "sentence of your answer that rests on an item with its number, like [2][5]. `matter` puts that matter's "
        f"facts first; `scopes` limits the layers ({', '.join(MemoryScope.values)}). `as_of` (2026-03-01, or an ISO "
        "date and time) searches the notes that were current in memory then; `valid_at` the notes whose fact held "
        "then, as known now."))
    async def search_memory(query: str, k: int = 10, matter: int | None = None,
                                 scopes: list[str] | None = None, strategy: str = "layered",
                                 as_of: str | None = None, valid_at: str | None = None) -> dict[str, Any]:
        arguments = {"query": query, "k": k, "matter": matter, "scopes": scopes, "strategy": strategy, "as_of": as_of,
                     "valid_at": valid_at}
        return await _call("search_memory", arguments, lambda token: _search(token, arguments))

    @server.tool(description=(
        "Remember something: save `message` (what the user said) and optionally `reply` (your answer) as a turn of "
        "the user's own LegalMem conversation. LegalMem's worker extracts notes from it in the background; the next "
        "search finds them. Give `matter` to file it under a matter, or `conversation` to continue one. Needs a "
        "read-write token."))
    async def remember(message: str, reply: str = "", matter: int | None = None,
                       conversation: int | None = None) -> dict[str, Any]:
        arguments = {"message": message, "reply": reply, "matter": matter, "conversation": conversation}

        def work(token: AccessToken) -> dict[str, Any]:
            saved = remember_turn(token, message=message, reply=reply, matter_id=matter, conversation_id=conversation,
                                  via=_via())
            return {"conversation_id": saved.conversation_id, "message_id": saved.user_message_id,
                    "reply_id": saved.reply_id, "extraction_job": saved.turn_id, "status": "queued"}

        return await _call("remember", arguments, work)

    @server.tool(description=(
        "One note by id: its content, layer, category, matter and provenance, its history (every correction, "
        "evolution and replacement, in words) and the source messages you may read."))
    async def get_note(note_id: str) -> dict[str, Any]:
        return await _call("get_note", {"note_id": note_id}, lambda token: _note_details(token, note_id))

    @server.tool(description="The matters this user is assigned to (and this token reaches): id, reference, title, status.")
    async def list_matters() -> dict[str, Any]:
        return await _call("list_matters", {}, lambda token: {
            "matters": [payloads.matter_payload(m) for m in token_matters(token).select_related("firm")]})

    @server.tool(description=(
        "Correct a current note the user may change (their own profile notes and notes of their conversations): "
        f"new `content` and optionally `category` ({', '.join(Category.values)}), with a `reason`. Kept in the "
        "note's history and the audit log. Needs a read-write token."))
    async def correct_note(note_id: str, content: str, category: str | None = None, reason: str = "") -> dict[str, Any]:
        arguments = {"note_id": note_id, "content": content, "category": category, "reason": reason}

        def work(token: AccessToken) -> dict[str, Any]:
            note = correct_with_token(token, str(_note_id(note_id)), content=content, category=category, reason=reason,
                                      via=_via())
            return payloads.note_payload(token.user, note)

        return await _call("correct_note", arguments, work)

    @server.tool(description=(
        "Forget a note the user may change: it is never recalled again (a firm admin can restore it; the audit log "
        "keeps who made it forget and why). Needs a read-write token."))
    async def forget_note(note_id: str, reason: str = "") -> dict[str, Any]:
        def work(token: AccessToken) -> dict[str, Any]:
            note = forget_with_token(token, str(_note_id(note_id)), reason=reason, via=_via())
            return {"id": str(note.pk), "status": note.status}

        return await _call("forget_note", {"note_id": note_id, "reason": reason}, work)

    @server.resource("legalmem://matters", name="matters", mime_type="application/json",
                     description="The matters this user is assigned to (and this token reaches).")
    async def matters_resource() -> dict[str, Any]:
        return await _call("legalmem://matters", {}, lambda token: {
            "matters": [payloads.matter_payload(m) for m in token_matters(token).select_related("firm")]},
            resource=True)

    @server.resource("legalmem://matters/{matter_id}", name="matter", mime_type="application/json",
                     description="One matter and its current notes this user may see.")
    async def matter_resource(matter_id: str) -> dict[str, Any]:
        return await _call(f"legalmem://matters/{matter_id}", {"matter_id": matter_id},
                           lambda token: _matter(token, matter_id), resource=True)

    @server.resource("legalmem://notes/{note_id}", name="note", mime_type="application/json",
                     description="One note with its history and sources.")
    async def note_resource(note_id: str) -> dict[str, Any]:
        return await _call(f"legalmem://notes/{note_id}", {"note_id": note_id},
                           lambda token: _note_details(token, note_id), resource=True)

    return server


def _search(token: AccessToken, arguments: dict[str, Any]) -> dict[str, Any]:
    """The web API's search: the same request validation, ``search_memory`` as the token's user,
    the same response body (narrowed when the token is limited)."""
    request = SearchRequestSerializer(data={key: value for key, value in arguments.items() if value is not None})
    if not request.is_valid():
        raise ArgumentError(first_problem(request.errors))
    data = request.validated_data
    if data.get("matter") is not None and not token.allows_matter(data["matter"]):
        raise NotFound("matter")
    try:
        as_of = parse_as_of(data.get("as_of"), began=memory_began(token.user))
    except BadDate as error:
        raise ArgumentError(f"as_of: {error}") from None
    try:
        valid_at = parse_as_of(data.get("valid_at"), began=None, world=True)
    except BadDate as error:
        raise ArgumentError(f"valid_at: {error}") from None
    result = search_memory(token.user, data["query"], k=data["k"], strategy=data["strategy"],
                           matter_id=data.get("matter"), scopes=data.get("scopes"), as_of=as_of, valid_at=valid_at)
    return payloads.search_payload(token.user, narrowed_result(token, result))


def first_problem(errors: Any, where: str = "") -> str:
    """The first of a serializer's errors as ``field: message`` — ``scopes[1]: “x” 不是合法选项。`` —
    walking its nesting (a list's errors are keyed by position), in the active language."""
    if isinstance(errors, dict):
        key, inner = next(iter(errors.items()))
        return first_problem(inner, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key)
    if isinstance(errors, list) and errors and not isinstance(errors[0], str):
        return first_problem(next(e for e in errors if e) if any(errors) else "", where)
    message = " ".join(str(e) for e in errors) if isinstance(errors, list) else str(errors)
    return f"{where}: {message}" if where else message


def _note_details(token: AccessToken, note_id: str) -> dict[str, Any]:
    """The "my memory" note page's details; a narrowing token also hides source messages of
    conversations it does not reach (counted as hidden, as the page counts others' messages)."""
    note = token_notes(token).get(pk=_note_id(note_id))
    details = note_details(token.user, note)
    if narrows_anything(token):
        reachable = set(token_conversations(token).filter(
            pk__in={m.conversation_id for m in details.source_messages}).values_list("pk", flat=True))
        kept = [m for m in details.source_messages if m.conversation_id in reachable]
        details = dataclasses.replace(details, source_messages=kept,
                                      hidden_sources=details.hidden_sources + len(details.source_messages) - len(kept))
    return payloads.note_details_payload(token.user, details)


def _matter(token: AccessToken, matter_id: str) -> dict[str, Any]:
    if not (matter_id.isascii() and matter_id.isdigit()) or len(matter_id) > 18:
        raise ArgumentError(_("matter_id must be a matter's numeric id."))
    matter = token_matters(token).select_related("firm").get(pk=int(matter_id))
    notes = token_notes(token).filter(matter=matter, status=Note.Status.ACTIVE).order_by("-stored_at")[:200]
    return {**payloads.matter_payload(matter),
            "notes": [payloads.note_payload(token.user, note) for note in notes]}


#: The one server of the process (its tools are stateless; HTTP and stdio share it).
server = build_server()
