"""Never strand an answer session: when the ask behind a task parked in ``input-required`` settles
elsewhere (another respondent won, its deadline passed, its asker withdrew it), the task completes with
that outcome at once — subscribers see it — instead of waiting for the caller's next message."""

from __future__ import annotations

import asyncio
from typing import Any

from a2a.server.context import ServerCallContext

from askgate.broker.plugins import BrokerPlugin
from askgate.server.a2a.auth import A2APrincipal
from askgate.server.a2a.executor import AskgateExecutor
from askgate.server.a2a.handler import AskgateRequestHandler


class A2ASessions(BrokerPlugin):
    def __init__(self, handler: AskgateRequestHandler, executor: AskgateExecutor) -> None:
        self.handler = handler
        self.executor = executor
        self._tasks: set[asyncio.Task[Any]] = set()

    def after_commit(self, tr: Any) -> None:
        if not tr.record.terminal:
            return
        for claim in self.executor.claims_of(tr.record.id):
            ctx = ServerCallContext(user=A2APrincipal(claim.who))
            task = asyncio.get_running_loop().create_task(self.handler.nudge(claim.task_id, ctx))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
