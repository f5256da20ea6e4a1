"""The retrieval index a bench run reads: its dataset's corpus, indexed once, by dataset name."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from factdebate.datasets import DatasetError, corpus_source, load_corpus
from factdebate.graphs.registry import MethodSpec, resolve


def collection_name(name: str) -> str:
    """Name the index holding a dataset's corpus (Milvus names allow letters, digits, '_')."""
    return name.replace("-", "_")


def uses_retrieval(method: str | MethodSpec, settings: Any) -> bool:
    """Whether a run with these settings (the method's context object) retrieves anything."""
    if not resolve(method).retrieves or getattr(settings, "tool", None) == "none":
        return False
    tools = [getattr(settings, name) for name in ("tool_a", "tool_b") if hasattr(settings, name)]
    return not tools or any(tool != "none" for tool in tools)


def prepare_collection(
    method: str | MethodSpec,
    name: str,
    data_dir: Path | None,
    context: dict[str, Any],
    context_cls: Any,
) -> dict[str, Any]:
    """Point retrieval at the dataset's own corpus, indexing it once when it is missing.

    Only when the method retrieves, the settings accept ``collection`` and none was given.

    Raises:
        DatasetError: the index is not built and its corpus cannot be read.
    """
    source = corpus_source(name)
    if (
        source is None
        or "collection" not in {f.name for f in fields(context_cls)}
        or "collection" in context
        or not uses_retrieval(method, context_cls(**context))
    ):
        return context
    from factdebate.tools.retrieval.index import build_index, index_ready

    collection = collection_name(source)
    uri = str(context.get("milvus_uri", ""))
    if not index_ready(collection, uri):
        try:
            docs = load_corpus(source, data_dir)
        except DatasetError as exc:
            raise DatasetError(
                f"{exc}: the {collection!r} index this run retrieves from is not built and its "
                f"corpus cannot be read; build it with `factdebate index-corpus {source} "
                "--data-dir DATASETS_ROOT` (or give --set collection=NAME)"
            ) from exc
        build_index(docs, collection, uri)
    return {**context, "collection": collection}
