"""The SDK's default request handler plus protocols.md §1.7's message-id guard.

A message that continues a task (explicit ``taskId``) and repeats a ``messageId`` already in that
task's history is a retry: with the same parts it gets the task as it stands (the earlier outcome,
even when the task is terminal, where the SDK alone would refuse it); with different parts it is
refused as ``DUPLICATE_MESSAGE_ID``. Task ownership is already per principal: the task store resolves
the owner from the authenticated user, so another principal's task is simply not found.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types.a2a_pb2 import GetTaskRequest, Message, SendMessageRequest, Task
from a2a.utils.errors import A2AError, InvalidParamsError, InvalidRequestError, TaskNotFoundError

DUPLICATE_MESSAGE_ID = "DUPLICATE_MESSAGE_ID: this messageId was already used on this task with a different message"


_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_MESSAGE_BYTES = 256 * 1024


def check_message_limits(msg: Message) -> None:
    """The reference runtime's limits (protocols.md §1.2): ids of 1-128 characters (alphanumeric first,
    then alphanumerics and ``._:-``), at least one part, a message of at most 256 KiB."""
    problems = [f"{name} must be 1-128 characters: a letter or digit, then letters, digits or ._:-"
                for name, value in (("messageId", msg.message_id), ("taskId", msg.task_id),
                                    ("contextId", msg.context_id))
                if (value or name == "messageId") and not _ID.fullmatch(value)]
    if not msg.parts:
        problems.append("a message needs at least one part")
    if msg.ByteSize() > MAX_MESSAGE_BYTES:
        problems.append(f"a message may be at most {MAX_MESSAGE_BYTES} bytes")
    if problems:
        raise InvalidParamsError(message="; ".join(problems))


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

    async def nudge(self, task_id: str, context: ServerCallContext) -> bool:
        """Run the executor once more on a task parked in input-required, with no message: askgate's own
        follow-up when the task's ask settled elsewhere. The request goes through the task's ActiveTask
        (reloaded from the store if it was released), so subscribers see the outcome. False: nothing to do."""
        try:
            active = await self._active_task_registry.get_or_create(task_id, call_context=context,
                                                                     create_task_if_missing=False)
        except (A2AError, RuntimeError):
            return False  # unknown, not this principal's, terminal, or the registry is closing
        try:
            await active.enqueue_request(RequestContext(call_context=context, task_id=task_id))
        except Exception:  # noqa: BLE001 - the task finished meanwhile (its queue is shut down)
            return False
        return True

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Message | Task:
        check_message_limits(params.message)
        replay = await self._replayed(params, context)
        if replay is not None:
            return replay
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params: SendMessageRequest,
                                     context: ServerCallContext) -> AsyncGenerator[Any, None]:
        check_message_limits(params.message)
        replay = await self._replayed(params, context)
        if replay is not None:
            yield replay
            return
        async for event in super().on_message_send_stream(params, context):
            yield event


__all__ = ["DUPLICATE_MESSAGE_ID", "AskgateRequestHandler"]
