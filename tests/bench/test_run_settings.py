"""run.json records every effective setting of a run and the local model's file by SHA-256."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pytest

from factdebate.bench.judging import provenance
from factdebate.settings import context_class
from tests.bench.test_runner import bench, make_data
from tests.fakes import ScriptedChatModel


def test_run_json_lists_every_effective_setting_without_any_override(
    tmp_path: Path,
    scripted: Callable[..., tuple[str, ScriptedChatModel]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name, _ = scripted([], default="Yes.\n**SUPPORTS**")
    monkeypatch.setenv("FACTDEBATE_MODEL", name)  # no --model, no --set
    bench(tmp_path, make_data(tmp_path / "data", "SR"), name, context={})
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["provenance"]["settings"]
    context = context_class("cot")
    assert set(recorded) == {f.name for f in fields(context)}
    defaults = context()
    for field in fields(context):
        if field.name != "model":
            value = getattr(defaults, field.name)
            assert recorded[field.name] == (list(value) if isinstance(value, tuple) else value)
    assert recorded["model"] == name  # the model the run resolved, not the class default
    assert json.dumps(recorded)  # plain JSON


def test_the_local_model_is_named_by_file_and_sha256_computed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factdebate.tools.models import local_llm

    monkeypatch.setenv("FACTDEBATE_HOME", str(tmp_path / "home"))
    weights = tmp_path / "Model.Q8_0.gguf"
    weights.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    monkeypatch.setattr(local_llm, "embedded_weights", lambda: weights)
    found = provenance.local_model_identity()
    assert found == {
        "file": "Model.Q8_0.gguf",
        "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
    }
    reads: list[Path] = []
    real_open = Path.open

    def counting_open(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self == weights:
            reads.append(self)
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", counting_open)
    assert provenance.local_model_identity() == found
    assert reads == []  # read back from the home, not hashed again
    rows = dict(provenance.provenance_rows({"models": {"model": "local"}, "local_model": found}))
    assert rows["local model file"].startswith("Model.Q8_0.gguf sha256 ")
