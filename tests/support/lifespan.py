"""Running an ASGI app's lifespan inside one task, for tests that drive the app in-process.

anyio cancel scopes in the mounted apps' lifespans (MCP, A2A) must be exited by the task that entered
them, while pytest-asyncio tears fixtures down in another task; so the lifespan gets a task of its own and
is ended by setting an event.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def start_lifespan(app: Any) -> tuple[asyncio.Event, asyncio.Task[None]]:
    """Enter ``app``'s lifespan in a new task; return (stop, task): ``stop.set(); await task`` ends it.
    A start-up that fails raises here."""
    started, stop = asyncio.Event(), asyncio.Event()

    async def run() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(run())
    await asyncio.wait({task, asyncio.create_task(started.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # start-up failed: raise its error
    return stop, task
