"""A small scripted A2A agent built with a2a-sdk (card + HTTP+JSON routes), served by uvicorn on 127.0.0.1.

It plays an A2A respondent: each message askgate sends is recorded (with the requested extensions and the
HTTP headers), and ``script(n, message, task)`` decides the reply: complete the task with an
``elicitation/v1`` response artifact, answer with a bare message, or go input-required.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Message,
    Role,
)
from google.protobuf import json_format
from starlette.applications import Starlette

from askgate.protocols.a2a_carriage import EXTENSION_URI
from tests.support.tls_peers import free_port, uvicorn_thread

# ("complete", response) | ("message", response) | ("input", text) | ("working_then_complete", response)
# | ("reject", None) | ("complete_text", text)
Reply = tuple[str, Any]
Script = Callable[[int, dict[str, Any], dict[str, Any] | None], Reply]


@dataclass
class Seen:
    messages: list[dict[str, Any]] = field(default_factory=list)
    extensions: list[set[str]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)


class ScriptedAgent(AgentExecutor):
    def __init__(self, script: Script) -> None:
        self.script = script
        self.seen = Seen()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        msg = json_format.MessageToDict(context.message)
        self.seen.messages.append(msg)
        self.seen.extensions.append(set(context.requested_extensions))
        self.seen.headers.append(dict(context.call_context.state.get("headers", {})))
        self.seen.task_ids.append(context.task_id)
        task = json_format.MessageToDict(context.current_task) if context.current_task is not None else None
        kind, arg = self.script(len(self.seen.messages), msg, task)
        if kind == "message":
            await event_queue.enqueue_event(Message(role=Role.ROLE_AGENT, message_id=f"r{len(self.seen.messages)}",
                                                    context_id=context.context_id,
                                                    parts=[new_data_part({"elicitation/v1": arg})]))
            return
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        if kind == "input":
            await up.requires_input(up.new_agent_message([new_text_part(arg)]))
        elif kind == "reject":
            await up.reject(up.new_agent_message([new_text_part("I will not answer that.")]))
        elif kind == "complete_text":
            await up.add_artifact([new_text_part(arg)], name="answer")
            await up.complete()
        else:
            if kind == "working_then_complete":  # arg: (response, seconds of work first)
                arg, seconds = arg
                await up.start_work()
                await asyncio.sleep(seconds)
            await up.add_artifact([new_text_part("here is my answer"), new_data_part({"elicitation/v1": arg})],
                                  name="answer", extensions=[EXTENSION_URI])
            await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def agent_app(script: Script, url: str) -> tuple[Starlette, ScriptedAgent]:
    executor = ScriptedAgent(script)
    card = AgentCard(name="test-approver", description="a scripted A2A respondent", version="1.0",
                     supported_interfaces=[AgentInterface(url=url, protocol_binding="HTTP+JSON", protocol_version="1.0")],
                     capabilities=AgentCapabilities(streaming=False, extensions=[
                         AgentExtension(uri=EXTENSION_URI, required=False)]),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="answer", name="answer", description="answers asks", tags=["ask"])])
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_rest_routes(handler)])
    return app, executor


@contextmanager
def running_agent(script: Script, *, ssl: dict[str, str] | None = None) -> Iterator[tuple[str, ScriptedAgent]]:
    """Serve the scripted agent; yields (its URL, the executor holding what it saw)."""
    port = free_port()
    scheme = "https" if ssl else "http"
    url = f"{scheme}://127.0.0.1:{port}"
    app, executor = agent_app(script, url)
    extra = {"ssl_certfile": ssl["cert"], "ssl_keyfile": ssl["key"]} if ssl else {}
    with uvicorn_thread(app, port=port, **extra) as served:
        assert served == url
        yield url, executor
