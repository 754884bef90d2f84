"""``manage.py mcp_config``: a ready desktop-client configuration (the ``mcpServers`` JSON of
Claude Desktop, Claude Code and Cursor) for this installation (docs/connectors.md "Connecting a
client").

- stdio (default): starts this installation's stdio MCP server (``manage.py mcp --token-file
  PATH``) with this Python, this ``manage.py`` and the environment the server needs: the database
  (the embedded one of ``make run`` / ``make manage`` when no ``DATABASE_URL`` was given), the
  secret key, the data folder and the embedding settings.
- ``--transport http``: this installation's ``/mcp`` address (its first trusted origin, or
  ``--url``) with the token of the token file as its Bearer header."""
from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils.translation import gettext, gettext_lazy

from connectors.client_config import DEFAULT_NAME, http_client_config
from connectors.mcp_http import MCP_PATH
from connectors.models import prefix_of

DEFAULT_TOKEN_FILE = "~/.legalmem-token"
#: Variables the stdio server reads like the web server when they are set: a query is embedded
#: with the same model as the stored vectors, and searched with the same tuning. Not the LLM's
#: (the worker extracts remembered turns) nor mail, metrics or the listening address.
PASSED_THROUGH = ("EMBEDDING_BACKEND", "EMBEDDING_BASE_URL", "EMBEDDING_API_KEY", "EMBEDDING_MODEL",
                  "EMBEDDING_DIMENSIONS", "SEARCH_PARALLEL_READS", "SEARCH_EXACT_VECTORS_MB", "DEBUG")
EMBEDDED_SOCKET_MARK = "python_PostgresServer"  # the embedded server's socket folder when pgdata's path is too long
TOKEN_PLACEHOLDER = "lm_…"  # in an HTTP configuration whose token file is not there yet


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Print a desktop client's configuration (Claude Desktop JSON) that starts this "
                       "installation's MCP server over stdio.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--token-file", default=DEFAULT_TOKEN_FILE,
                            help=gettext_lazy("the file holding the access token (default %(default)s)"))
        parser.add_argument("--name", default=DEFAULT_NAME,
                            help=gettext_lazy("the server's name in the client (default %(default)s)"))
        parser.add_argument("--output", type=Path,
                            help=gettext_lazy("write it to this file, readable only by you (default: standard output)"))
        parser.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                            help=gettext_lazy("stdio: the client starts this installation's server (default); "
                                              "http: the client connects to its /mcp address"))
        parser.add_argument("--url", default="",
                            help=gettext_lazy("with --transport http: the /mcp address clients reach (default: the "
                                              "first trusted origin + /mcp)"))

    def handle(self, *args, token_file: str, name: str, output: Path | None, transport: str, url: str,
               **options) -> None:
        token_path = Path(token_file).expanduser().absolute()
        if transport == "http":
            config, found = http_config(name, url or mcp_address(), token_path), http_notes(token_path)
        else:
            config, found = desktop_config(name, token_path), notes(token_path)
        text = json.dumps(config, ensure_ascii=False, indent=2) + "\n"
        if output is None:
            self.stdout.write(text, ending="")
        else:
            output = output.expanduser()
            output.write_text(text, encoding="utf-8")
            output.chmod(0o600)  # it holds the secret key and the database's address, or the token
        for note in found:
            self.stderr.write(note)


def desktop_config(name: str, token_path: Path) -> dict:
    """``{"mcpServers": {name: {command, args, env}}}`` for this installation."""
    return {"mcpServers": {name: {
        "command": sys.executable,  # this virtual environment's Python, as it was started (not resolved)
        "args": [str(Path(settings.BASE_DIR, "manage.py").absolute()), "mcp", "--token-file", str(token_path)],
        "env": server_environment(),
    }}}


def server_environment() -> dict[str, str]:
    """What ``manage.py mcp`` needs to start as this installation does."""
    env = {"DATABASE_URL": settings.DATABASE_URL, "SECRET_KEY": settings.SECRET_KEY,
           "LEGALMEM_DATA_DIR": str(settings.DATA_DIR)}
    env.update({key: os.environ[key] for key in PASSED_THROUGH if os.environ.get(key, "").strip()})
    return env


def uses_embedded_database(url: str) -> bool:
    """Whether ``url`` is the embedded PostgreSQL of ``make run`` (a socket in the data folder)."""
    host = (parse_qs(urlsplit(url).query).get("host") or [""])[0]
    return bool(host) and (Path(host).is_relative_to(settings.DATA_DIR) or EMBEDDED_SOCKET_MARK in host)


def notes(token_path: Path) -> list[str]:
    """What the operator should know, on stderr (stdout is the configuration)."""
    found = []
    if uses_embedded_database(settings.DATABASE_URL):
        found.append(gettext("The database is the embedded one of `make run`: the MCP server reaches it only "
                             "while `make run` is running."))
    if not token_path.exists():
        found.append(gettext("%(path)s does not exist yet: make a token on /tokens/ and save it there "
                             "(chmod 600).") % {"path": token_path})
    elif token_path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        found.append(gettext("%(path)s can be read by other users: chmod 600 it.") % {"path": token_path})
    found.append(gettext("The configuration holds this installation's secret key: keep it readable only by you."))
    return found


def mcp_address() -> str:
    """This installation's ``/mcp`` as clients reach it: its first trusted origin (the address an
    operator behind a TLS proxy sets, docs/production.md), else ``make run``'s own."""
    origins = [origin for origin in settings.CSRF_TRUSTED_ORIGINS if "*" not in origin]
    return (origins[0] if origins else "http://127.0.0.1:8000").rstrip("/") + MCP_PATH


def token_in(token_path: Path) -> str | None:
    """The token the file holds, or None when it is missing, unreadable or not shaped like a token."""
    try:
        secret = token_path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return secret if prefix_of(secret) else None


def http_config(name: str, url: str, token_path: Path) -> dict:
    """The HTTP client's configuration with the token of ``token_path`` (or a placeholder)."""
    return http_client_config(url, token_in(token_path) or TOKEN_PLACEHOLDER, name)


def http_notes(token_path: Path) -> list[str]:
    """What the operator should know about an HTTP configuration, on stderr."""
    if token_in(token_path) is None:
        return [gettext("%(path)s holds no token yet: the configuration says %(placeholder)s; make a token on "
                        "/tokens/ and put it there.") % {"path": token_path, "placeholder": TOKEN_PLACEHOLDER}]
    return [gettext("The configuration holds your access token: keep it readable only by you.")]
