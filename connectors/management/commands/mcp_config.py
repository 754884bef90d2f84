"""``manage.py mcp_config``: a ready desktop-client configuration (Claude Desktop's
``claude_desktop_config.json`` shape) that starts this installation's stdio MCP server
(``manage.py mcp --token-file PATH``) with this Python, this ``manage.py`` and the environment the
server needs: the database (the embedded one of ``make run`` / ``make manage`` when no
``DATABASE_URL`` was given), the secret key, the data folder and the embedding settings
(docs/connectors.md "Connecting a client")."""
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

DEFAULT_TOKEN_FILE = "~/.legalmem-token"
DEFAULT_NAME = "legalmem"
#: Variables the stdio server reads like the web server when they are set: a query is embedded
#: with the same model as the stored vectors, and searched with the same tuning. Not the LLM's
#: (the worker extracts remembered turns) nor mail, metrics or the listening address.
PASSED_THROUGH = ("EMBEDDING_BACKEND", "EMBEDDING_BASE_URL", "EMBEDDING_API_KEY", "EMBEDDING_MODEL",
                  "EMBEDDING_DIMENSIONS", "SEARCH_PARALLEL_READS", "SEARCH_EXACT_VECTORS_MB", "DEBUG")
EMBEDDED_SOCKET_MARK = "python_PostgresServer"  # the embedded server's socket folder when pgdata's path is too long


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

    def handle(self, *args, token_file: str, name: str, output: Path | None, **options) -> None:
        token_path = Path(token_file).expanduser().absolute()
        text = json.dumps(desktop_config(name, token_path), ensure_ascii=False, indent=2) + "\n"
        if output is None:
            self.stdout.write(text, ending="")
        else:
            output = output.expanduser()
            output.write_text(text, encoding="utf-8")
            output.chmod(0o600)  # it holds the secret key and the database's address
        for note in notes(token_path):
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
