"""SQLite checkpoints shared by the concurrent items of one bench run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from factdebate.runs.checkpoints import open_checkpointer


def test_items_opening_one_new_sqlite_file_together_all_get_in(tmp_path: Path) -> None:
    """Eight savers opening and setting up one new file at once: none sees "database is locked"."""

    async def one(spec: str, n: int) -> None:
        async with open_checkpointer(spec) as saver:
            await saver.setup()
            config = {"configurable": {"thread_id": f"t{n}", "checkpoint_ns": ""}}
            assert await saver.aget_tuple(config) is None

    async def all_together(spec: str) -> None:
        await asyncio.gather(*(one(spec, n) for n in range(8)))

    for attempt in range(3):
        asyncio.run(all_together(f"sqlite:{tmp_path / f'queue-{attempt}.sqlite'}"))
