"""The SDK's default request handler plus protocols.md §1.7's message-id guard.

A message that continues a task (explicit ``taskId``) and repeats a ``messageId`` already in that
task's history is a retry: with the same parts it gets the task as it stands (the earlier outcome,
even when the task is terminal, where the SDK alone would refuse it); with different parts it is
refused as ``DUPLICATE_MESSAGE_ID``. Task ownership is already per principal: the task store resolves
the owner from the authenticated user, so another principal's task is simply not found.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types.a2a_pb2 import GetTaskRequest, Message, SendMessageRequest, Task
from a2a.utils.errors import InvalidRequestError, TaskNotFoundError


DUPLICATE_MESSAGE_ID = "DUPLICATE_MESSAGE_ID: this messageId was already used on this task with a different message"


class AskgateRequestHandler(DefaultRequestHandler):
    async def _replayed(self, params: SendMessageRequest, context: ServerCallContext) -> Task | None:
        msg = params.message
        if not msg.task_id or not msg.message_id:
            return None
        try:
            task = await self.on_get_task(GetTaskRequest(id=msg.task_id), context)
        except TaskNotFoundError:
            return None  # the SDK reports it in its own words
        if task is None:
            return None
        for earlier in task.history:
            if earlier.message_id == msg.message_id and earlier.role == msg.role:
                if list(earlier.parts) != list(msg.parts):
                    raise InvalidRequestError(message=DUPLICATE_MESSAGE_ID)  # the SDK maps exact classes only
                return task
        return None

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Message | Task:
        replay = await self._replayed(params, context)
        if replay is not None:
            return replay
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params: SendMessageRequest,
                                     context: ServerCallContext) -> AsyncGenerator[Any, None]:
        replay = await self._replayed(params, context)
        if replay is not None:
            yield replay
            return
        async for event in super().on_message_send_stream(params, context):
            yield event


__all__ = ["DUPLICATE_MESSAGE_ID", "AskgateRequestHandler"]
