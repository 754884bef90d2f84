"""``manage.py mcp --token-file PATH``: the MCP server over stdio, for desktop clients that
start the server themselves (Claude Desktop, editors). The token is read from a file (never from
the command line, where other users of the machine could read it in the process list)."""
from __future__ import annotations

from pathlib import Path

import anyio
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from connectors.authentication import refusal_message
from connectors.mcp_server import Caller, current_caller, server
from connectors.selectors import check_secret
from connectors.services import record_refusal


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Serve LegalMem's MCP server over stdio as the user of an access token.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--token-file", required=True, type=Path,
                            help=gettext_lazy("A file holding one access token (lm_…), readable only by you."))

    def handle(self, *args, token_file: Path, **options) -> None:
        try:
            secret = token_file.expanduser().read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(gettext("cannot read the token file %(path)s: %(reason)s")
                               % {"path": token_file, "reason": unreadable_reason(error)}) from None
        check = check_secret(secret, ip_address=None)
        if not check.ok:
            record_refusal(check, via="mcp-stdio")
            raise CommandError(refusal_message(check.refused))
        # stdout carries the protocol from here on: nothing else may print to it
        current_caller.set(Caller(check.token, language=check.token.answer_language(), via="mcp-stdio",
                                  close_connections=True))
        anyio.run(server.run_stdio_async)


def unreadable_reason(error: Exception) -> str:
    """Why the token file could not be read, in the operator's language (the OS's own words are English)."""
    if isinstance(error, FileNotFoundError):
        return gettext("it does not exist")
    if isinstance(error, PermissionError):
        return gettext("permission denied")
    if isinstance(error, IsADirectoryError):
        return gettext("it is a folder")
    if isinstance(error, UnicodeDecodeError):
        return gettext("it is not UTF-8 text")
    return str(error)
