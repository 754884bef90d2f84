"""The chat websocket. This first version authenticates and greets; the streaming turn
(ask / cancel → recalled / token / done / error) is the chat issue's work."""
from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from memory.models import Firm

CLOSE_UNAUTHENTICATED = 4401


class ChatConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        await self.accept()
        firms = await self._firm_slugs(user)
        await self.send_json({"type": "ready", "user": user.get_username(), "firms": firms})

    @database_sync_to_async
    def _firm_slugs(self, user) -> list[str]:
        return list(Firm.objects.of_user(user).values_list("slug", flat=True))

    async def receive_json(self, content, **kwargs) -> None:
        await self.send_json(
            {"type": "error", "code": "not_available", "message": "chat turns are not available yet"}
        )
