"""Milvus Lite's client sends no keepalive ping on an idle connection (no GOAWAY lines)."""

from __future__ import annotations

from pathlib import Path

from factdebate.tools.retrieval.milvus import LITE_GRPC, milvus_client


def test_a_lite_client_pings_no_idle_connection(tmp_path: Path) -> None:
    """pymilvus pings every 10 s by default; Lite's server answers GOAWAY too_many_pings."""
    client = milvus_client(str(tmp_path / "milvus.db"))
    try:
        options = client._handler._grpc_options
        assert options == LITE_GRPC
        assert options["grpc.keepalive_permit_without_calls"] is False
    finally:
        client.close()
