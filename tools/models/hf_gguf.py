"""`hf:REPO/FILE.gguf` model settings: a GGUF chat model fetched once from the Hugging Face Hub."""

from __future__ import annotations

import os
from pathlib import Path

from factdebate.tools.core.records import ModelConfigError

PREFIX = "hf:"
EXAMPLE = "hf:Qwen/Qwen2.5-3B-Instruct-GGUF/qwen2.5-3b-instruct-q4_k_m.gguf"


def parse_hf_spec(spec: str) -> tuple[str, str]:
    """Split ``hf:OWNER/REPO/FILE.gguf`` into the repository id and the file's path in it.

    Raises:
        ModelConfigError: not of that form.
    """
    body = spec.strip().removeprefix(PREFIX)
    owner, _, rest = body.partition("/")
    name, _, filename = rest.partition("/")
    if not (owner and name and filename) or not filename.lower().endswith(".gguf"):
        raise ModelConfigError(f"expected hf:OWNER/REPO/FILE.gguf (e.g. {EXAMPLE}), got {spec!r}")
    if any(part in ("", ".", "..") for part in filename.split("/")):
        raise ModelConfigError(f"bad file path in {spec!r}")
    return f"{owner}/{name}", filename


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def fetch_gguf(spec: str) -> Path:
    """The local path of the GGUF file ``spec`` names, downloaded first if it is not cached.

    Uses huggingface_hub's cache (``HF_HUB_CACHE``, default ``~/.cache/huggingface/hub``):
    the download shows a progress bar, an interrupted one resumes, a cached file is used
    without any network call. With ``HF_HUB_OFFLINE=1`` (the CLI's default) only the cache
    is read.

    Raises:
        ModelConfigError: a bad spec, a file that is not cached while offline, or a failed
            download (one line).
    """
    repo_id, filename = parse_hf_spec(spec)
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    cache_dir = os.environ.get("HF_HUB_CACHE") or None
    try:
        return Path(
            huggingface_hub.hf_hub_download(
                repo_id, filename, cache_dir=cache_dir, local_files_only=True
            )
        )
    except LocalEntryNotFoundError:
        if _offline():
            raise ModelConfigError(
                f"{spec} is not downloaded yet and HF_HUB_OFFLINE=1: run the command once with "
                "HF_HUB_OFFLINE=0 to download it into the Hugging Face cache"
            ) from None
    from tqdm import tqdm  # a plain bar: shown even where the CLI silences the Hub's own bars

    try:
        return Path(
            huggingface_hub.hf_hub_download(repo_id, filename, cache_dir=cache_dir, tqdm_class=tqdm)
        )
    except Exception as exc:  # network, 404, gated repo: one clear line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ModelConfigError(f"cannot download {spec}: {first}") from exc
