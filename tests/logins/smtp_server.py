"""A real SMTP server on a local port for password-reset tests: it accepts mail, refuses the
connection (554 greeting) or refuses the recipient (550), as asked."""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field


@dataclass
class ReceivedMail:
    sender: str
    recipients: list[str]
    data: bytes


@dataclass
class TinySMTPServer:
    mode: str = "accept"  # accept | refuse_greeting | refuse_recipient
    received: list[ReceivedMail] = field(default_factory=list)

    def __enter__(self) -> "TinySMTPServer":
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._socket.close()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with connection:
                self._session(connection.makefile("rwb", buffering=0))

    def _session(self, stream) -> None:
        def reply(line: str) -> None:
            stream.write(line.encode() + b"\r\n")

        if self.mode == "refuse_greeting":
            reply("554 5.3.2 tiny: service refused")
            return
        reply("220 tiny ESMTP")
        sender, recipients = "", []
        while line := stream.readline():
            verb = line.decode(errors="replace").strip().split(" ")[0].upper()
            if verb in ("EHLO", "HELO"):
                reply("250 tiny")
            elif verb == "MAIL":
                sender = line.decode().split(":", 1)[1].strip()
                reply("250 2.1.0 ok")
            elif verb == "RCPT":
                if self.mode == "refuse_recipient":
                    reply("550 5.1.1 tiny: mailbox unavailable")
                else:
                    recipients.append(line.decode().split(":", 1)[1].strip().strip("<>"))
                    reply("250 2.1.5 ok")
            elif verb == "DATA":
                reply("354 go ahead")
                data = b""
                while (chunk := stream.readline()) and chunk != b".\r\n":
                    data += chunk
                self.received.append(ReceivedMail(sender, recipients, data))
                reply("250 2.0.0 queued")
            elif verb == "QUIT":
                reply("221 bye")
                return
            else:
                reply("250 ok")
