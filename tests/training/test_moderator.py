"""DebateCV moderator post-training: data checks, settings, CLI errors, and a CPU smoke run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app
from factdebate.datasets import DatasetError
from factdebate.nodes.debate_cv.moderator import FinalVerdict
from factdebate.tools.core.records import ModelConfigError
from factdebate.tools.models.hf_local import pick_device
from factdebate.tools.models.json_reader import read_model
from factdebate.tools.models.providers import resolve_model
from factdebate.training.moderator import (
    PAPER_DPO_CLAIMS,
    PAPER_SFT_CLAIMS,
    TrainConfig,
    TrainingDataError,
    plot_losses,
    read_dpo,
    read_sft,
)
from factdebate.training.syndec import (
    DPO_FILE,
    SFT_FILE,
    SYNDEC_FILE,
    export_training,
    load_claims,
)
from tests.bounded import MODEL_GUARD_S, run_bounded
from tests.conftest import REPO, doc

runner = CliRunner()
DEBATE = [
    {"round": 1, "agent": "affirmative", "answer": "Document 1 backs the claim."},
    {"round": 1, "agent": "negative", "answer": "Document 1 is not enough."},
]


def syndec_record(ident: str, status: str, gold: str, predicted: str) -> dict[str, Any]:
    """One SynDeC line as ``run_syndec`` writes it: the moderator stopped after round 1."""
    answer = {
        "new_insight": "i",
        "evidence_gaps": "g",
        "proceed": False,
        "reason": "clear",
        "verdict": predicted,
        "justification": f"predicted reasons {ident}",
    }
    note = {"round": 1, **answer}
    return {
        "id": ident,
        "claim": f"Claim {ident} holds.",
        "evidence": [doc(f"{ident}-qa0", f"Q: Does claim {ident} hold? A: evidence {ident}.")],
        "debate": [*DEBATE, {"round": 1, "agent": "moderator", "answer": json.dumps(answer)}],
        "moderator_notes": [note],
        "gold_verdict": gold,
        "predicted_verdict": predicted,
        "predicted_justification": f"predicted reasons {ident}",
        "corrected_justification": f"corrected reasons {ident}" if status == "corrected" else None,
        "status": status,
        "stop_reason": "moderator",
        "today": "2026-01-02",
    }


@pytest.fixture
def exports(tmp_path: Path) -> Path:
    """sft.jsonl and dpo.jsonl written by SynDeC's own exporter."""
    records = [
        syndec_record("a", "correct", "SUPPORTS", "SUPPORTS"),
        syndec_record("b", "corrected", "REFUTES", "SUPPORTS"),
        syndec_record("c", "correct", "NOT ENOUGH INFO", "NOT ENOUGH INFO"),
    ]
    (tmp_path / SYNDEC_FILE).write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    assert export_training(tmp_path) == (2, 1)
    return tmp_path


def test_syndec_exports_are_read_as_chat_messages(exports: Path) -> None:
    sft = read_sft(exports / SFT_FILE)
    dpo = read_dpo(exports / DPO_FILE)
    assert [len(sft), len(dpo)] == [2, 1]
    assert [m["role"] for m in sft[0]["prompt"]] == ["system", "user"]
    assert sft[0]["prompt"][0]["content"] == "Today's date is 2026-01-02."
    assert "Claim a holds." in sft[0]["prompt"][1]["content"]
    assert [m["role"] for m in dpo[0]["prompt"]] == ["system", "user"]
    assert "Claim b holds." in dpo[0]["prompt"][-1]["content"]
    assert sft[0]["completion"][0]["role"] == "assistant"
    answer = read_model(sft[0]["completion"][0]["content"], FinalVerdict)
    assert not isinstance(answer, str) and answer.verdict == "SUPPORTS"
    chosen = read_model(dpo[0]["chosen"][0]["content"], FinalVerdict)
    rejected = read_model(dpo[0]["rejected"][0]["content"], FinalVerdict)
    assert not isinstance(chosen, str) and not isinstance(rejected, str)
    assert (chosen.verdict, chosen.justification) == ("REFUTES", "corrected reasons b")
    assert rejected.verdict == "SUPPORTS"
    assert len(read_sft(exports / SFT_FILE, limit=1)) == 1


@pytest.mark.parametrize(
    ("reader", "line", "message"),
    [
        (read_sft, "not json", ":1: not JSON"),
        (
            read_sft,
            json.dumps({"prompt": "p", "completion": "c"}),
            '{"messages": [system..., user, assistant]}',
        ),
        (
            read_sft,
            json.dumps(
                {
                    "messages": [
                        {"role": "user", "content": "p"},
                        {
                            "role": "assistant",
                            "content": '{"justification": "j", "verdict": "MAYBE"}',
                        },
                    ]
                }
            ),
            "moderator's JSON",
        ),
        (read_dpo, json.dumps({"prompt": "p", "chosen": "c"}), '{"prompt", "chosen", "rejected"}'),
        (
            read_dpo,
            json.dumps(
                {
                    "prompt": [
                        {"role": "user", "content": "p"},
                        {"role": "system", "content": "s"},
                    ],
                    "chosen": '{"justification": "j", "verdict": "SUPPORTS"}',
                    "rejected": '{"justification": "j", "verdict": "REFUTES"}',
                }
            ),
            "[system..., user] messages",
        ),
        (
            read_dpo,
            json.dumps({"prompt": "", "chosen": "c", "rejected": "r"}),
            "non-empty user text",
        ),
    ],
)
def test_wrong_data_is_one_clear_error(
    tmp_path: Path, reader: Any, line: str, message: str
) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(TrainingDataError) as info:
        reader(path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_or_empty_data(tmp_path: Path) -> None:
    with pytest.raises(TrainingDataError, match="not found"):
        read_sft(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(TrainingDataError, match="no rows"):
        read_dpo(tmp_path / "empty.jsonl")


def test_defaults_are_the_papers_and_settings_are_bounded() -> None:
    cfg = TrainConfig()
    assert (cfg.lora_rank, cfg.lora_alpha, cfg.learning_rate, cfg.epochs) == (128, 256, 2e-5, 2.0)
    assert cfg.stages == ("sft", "dpo")
    assert (PAPER_SFT_CLAIMS, PAPER_DPO_CLAIMS) == (2148, 920)
    for bad in (
        {"lora_rank": 0},
        {"learning_rate": 1.0},
        {"epochs": 0},
        {"max_length": 10},
        {"sft_limit": 0},
        {"max_steps": 0},
        {"stages": ("dpo", "sft")},
        {"stages": ("rl",)},
        {"device": "tpu"},
    ):
        with pytest.raises(ValueError):
            TrainConfig(**bad)


def test_device_choice() -> None:
    import torch

    assert pick_device("cpu") == ("cpu", torch.float32)
    with pytest.raises(ModelConfigError):
        pick_device("tpu")


def test_loss_curve_is_a_png(tmp_path: Path) -> None:
    plot_losses([(1, 1.0), (2, 0.5)], "t", tmp_path / "loss.png")
    assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_help_documents_every_flag() -> None:
    result = runner.invoke(app, ["train-moderator", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    flags = [f"--{name.replace('_', '-')}" for name in TrainConfig.__dataclass_fields__]
    flags = [f.replace("--learning-rate", "--lr") for f in flags] + ["--sft", "--dpo", "--out"]
    missing = [f for f in flags if f not in result.output]
    assert not missing


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "/nonexistent/model.gguf"], "cannot load base model"),
        (["--base", "{tmp}"], "cannot load base model"),
        (["--lora-rank", "0"], "lora-rank must be in"),
        (["--stages", "dpo,sft"], "stages run in the order"),
    ],
)
def test_cli_errors_are_one_line(exports: Path, args: list[str], message: str) -> None:
    args = [a.replace("{tmp}", str(exports)) for a in args]
    result = runner.invoke(
        app,
        [
            "train-moderator",
            "--sft",
            str(exports / SFT_FILE),
            "--dpo",
            str(exports / DPO_FILE),
            "--out",
            str(exports / "run"),
            *args,
        ],
    )
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_rejects_wrong_data_before_loading_a_model(exports: Path) -> None:
    result = runner.invoke(
        app,
        ["train-moderator", "--sft", str(exports / DPO_FILE), "--out", str(exports / "run")],
    )
    assert result.exit_code == 2
    assert "sft.jsonl" in result.output or "messages" in result.output
    assert not (exports / "run").exists()


def test_hf_local_needs_a_training_run(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="not a train-moderator run"):
        resolve_model(f"hf-local:{tmp_path}")


def test_syndec_reads_another_averitec_split_or_file(tmp_path: Path) -> None:
    record = {
        "claim": "The bridge opened in 1990.",
        "label": "Refuted",
        "questions": [{"question": "When?", "answers": [{"answer": "1994", "answer_type": "x"}]}],
    }
    folder = tmp_path / "averitec"
    folder.mkdir()
    (folder / "train.json").write_text(json.dumps([record, record]), encoding="utf-8")
    items = load_claims("averitec", folder, split="train")
    assert [i.label for i in items] == ["REFUTES", "REFUTES"]
    assert len(load_claims("averitec", None, file=folder / "train.json")) == 2
    with pytest.raises(DatasetError, match="not found"):
        load_claims("averitec", folder, split="test")
    with pytest.raises(DatasetError, match="only for averitec"):
        load_claims("scifact", None, split="train")


@pytest.mark.slow
def test_smoke_training_on_smollm2_then_moderates(tmp_path: Path) -> None:
    """A few CPU steps of D-SFT then D-DPO on SmolLM2-135M: losses fall, the adapter answers."""
    pytest.importorskip("trl")
    try:
        from factdebate.tools.models.local_llm import local_model_path

        local_model_path()
    except FileNotFoundError as exc:
        pytest.skip(f"bundled SmolLM2 GGUF missing: {exc}")
    facts = [
        ("The river Lune flows through Lancaster.", "The Lune runs through Lancaster.", "SUPPORTS"),
        ("Mount Kato is 9000 m tall.", "Mount Kato rises 2100 m above sea level.", "REFUTES"),
    ]

    def prompt(claim: str, text: str) -> str:
        # Short prompts keep the smoke run inside the CI budget; the format is the moderator's.
        return f"Claim: {claim}\nDocument [1]: {text}\nVerdict as JSON?"

    def answer(label: str, text: str) -> str:
        return json.dumps({"justification": f"Document [1] says: {text}", "verdict": label})

    sft = tmp_path / "sft.jsonl"
    dpo = tmp_path / "dpo.jsonl"
    sft.write_text(
        "".join(
            json.dumps(
                {
                    "messages": [
                        {"role": "user", "content": prompt(c, t)},
                        {"role": "assistant", "content": answer(label, t)},
                    ]
                }
            )
            + "\n"
            for c, t, label in facts
        ),
        encoding="utf-8",
    )
    flip = {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS"}
    dpo.write_text(
        "".join(
            json.dumps(
                {
                    "prompt": prompt(c, t),
                    "chosen": answer(label, t),
                    "rejected": answer(flip[label], "the debaters agree"),
                }
            )
            + "\n"
            for c, t, label in facts
        ),
        encoding="utf-8",
    )
    run = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [
        sys.executable,
        "-m",
        "factdebate.cli",
        "train-moderator",
        "--sft",
        str(sft),
        "--dpo",
        str(dpo),
        "--base",
        "local",
        "--out",
        str(run),
        "--lora-rank",
        "8",
        "--lora-alpha",
        "16",
        "--lr",
        "2e-3",
        "--epochs",
        "4",
        "--grad-accum",
        "1",
        "--max-length",
        "256",
        "--device",
        "cpu",
    ]
    done = run_bounded(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        what="the moderator training run",
        guard_s=MODEL_GUARD_S,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for stage in ("sft", "dpo"):
        points = manifest["losses"][stage]
        assert len(points) >= 2
        assert points[-1][1] < points[0][1], (stage, points)
        assert (run / stage / "adapter" / "adapter_config.json").is_file()
        assert (run / stage / "loss.png").read_bytes()[:4] == b"\x89PNG"
    again = run_bounded(
        command,
        cwd=REPO,
        env=env,
        capture_output=True,
        what="the moderator training rerun",
        guard_s=MODEL_GUARD_S,
    )
    assert again.returncode == 0, again.stderr.decode()[-2000:]  # finished stages are skipped
    assert json.loads((run / "run.json").read_text(encoding="utf-8")) == manifest

    assert manifest["losses"]["dpo"][-1][1] < 0.6931  # below ln 2: chosen now beats rejected
    from langchain_core.messages import HumanMessage

    question = prompt(*facts[0][:2])
    # D-SFT teaches the moderator's JSON answer: the D-SFT model must answer in that format.
    sft_chat = resolve_model(f"hf-local:{run}#sft", max_tokens=60)
    reply = sft_chat.invoke(question)
    parsed = read_model(str(reply.content), FinalVerdict)
    assert not isinstance(parsed, str), reply.content
    # The full (D-SFT + D-DPO) moderator loads, frames prompts as in training, and answers.
    chat = resolve_model(f"hf-local:{run}", max_tokens=60)
    inference_prompt = chat._to_chat_prompt([HumanMessage(question)])  # type: ignore[attr-defined]
    trained_text = chat.tokenizer.apply_chat_template(  # type: ignore[attr-defined]
        [{"role": "user", "content": question}, {"role": "assistant", "content": "x"}],
        tokenize=False,
    )
    assert trained_text.startswith(inference_prompt)  # same chat template in training and use
    reply = chat.invoke(question)
    assert "justification" in str(reply.content), reply.content
    assert reply.usage_metadata and reply.usage_metadata["output_tokens"] > 0
