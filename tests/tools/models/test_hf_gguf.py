"""`hf:REPO/FILE.gguf` models: spec parsing, the offline cache, loading through llama.cpp."""

from __future__ import annotations

from pathlib import Path

import pytest

from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.models.hf_gguf import fetch_gguf, parse_hf_spec
from factdebate.tools.models.providers import resolve_model

REPO_ID = "factdebate-test/SmolLM2-135M-Instruct-GGUF"
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def bundled_gguf() -> Path:
    try:
        from factdebate.tools.models.local_llm import local_model_path

        return local_model_path()
    except (ImportError, FileNotFoundError) as exc:
        pytest.skip(f"the bundled SmolLM2 GGUF is not installed: {exc}")


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hugging Face Hub cache holding the bundled SmolLM2 file, laid out as the Hub does."""
    cache = tmp_path / "hub"
    repo = cache / ("models--" + REPO_ID.replace("/", "--"))
    blob = repo / "blobs" / "sha256-of-the-file"
    blob.parent.mkdir(parents=True)
    blob.symlink_to(bundled_gguf())
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / FILE).symlink_to(Path("..") / ".." / "blobs" / blob.name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("hf:owner/repo/model.Q4.gguf", ("owner/repo", "model.Q4.gguf")),
        ("hf:owner/repo/sub/dir/m.GGUF", ("owner/repo", "sub/dir/m.GGUF")),
    ],
)
def test_spec_is_split_into_repo_and_file(spec: str, expected: tuple[str, str]):
    assert parse_hf_spec(spec) == expected


@pytest.mark.parametrize(
    "spec", ["hf:owner/repo", "hf:owner/repo/model.bin", "hf:repo.gguf", "hf:o/r/../x.gguf"]
)
def test_bad_specs_are_one_line_errors(spec: str):
    with pytest.raises(ModelConfigError, match=r"hf:OWNER/REPO/FILE\.gguf|bad file path"):
        parse_hf_spec(spec)


def test_cached_file_is_found_offline(hub_cache: Path):
    path = fetch_gguf(f"hf:{REPO_ID}/{FILE}")
    assert path == hub_cache / f"models--{REPO_ID.replace('/', '--')}" / "snapshots" / COMMIT / FILE
    assert path.resolve() == bundled_gguf().resolve()


def test_missing_file_offline_says_how_to_download(hub_cache: Path):
    with pytest.raises(ModelConfigError, match="not downloaded yet and HF_HUB_OFFLINE=1"):
        fetch_gguf(f"hf:{REPO_ID}/other.gguf")
    with pytest.raises(ModelConfigError, match="not downloaded yet"):
        resolve_model("hf:nobody/nothing/x.gguf")


@pytest.mark.slow
def test_hf_model_runs_through_llama_cpp_like_the_embedded_one(hub_cache: Path):
    from factdebate.tools.models.local_llm import LocalChatModel

    model = resolve_model(f"hf:{REPO_ID}/{FILE}", max_tokens=8)
    assert isinstance(model, LocalChatModel)
    assert Path(model.model_path).resolve() == bundled_gguf().resolve()
    reply = model.invoke("Say hello.")
    assert isinstance(reply.content, str) and reply.content.strip()
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] >= 1
