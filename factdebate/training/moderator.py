"""DebateCV post-training of the moderator: LoRA D-SFT on correct debates, then D-DPO on pairs.

Reads the files ``factdebate syndec`` writes (``sft.jsonl``: the moderator's last call of a
debate, as messages, and its correct JSON answer; ``dpo.jsonl``: the same messages with the
gold answer as chosen and the wrong one as rejected) and trains with TRL and peft. Both
stages see the rows as chat messages, so the base tokenizer's chat template (saved in the run
folder and reused by ``hf-local:RUN_DIR`` at inference) frames training and use alike.

Run folder layout: ``run.json`` (settings, base, stages done), ``tokenizer/``, ``base/`` (a
GGUF base dequantised once), and per stage ``<stage>/adapter`` (finished LoRA adapter),
``<stage>/checkpoint-N`` (resume points), ``<stage>/loss.png`` and ``<stage>/loss.json``.
D-DPO trains a fresh LoRA adapter on the merged D-SFT model, which is also its reference.
"""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factdebate.nodes.debate_cv.moderator import FinalVerdict
from factdebate.runs.folder import RunFolderError
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.files import atomic_target, write_atomic
from factdebate.tools.models.hf_local import (
    BASE_COPY_DIR,
    RUN_MANIFEST,
    STAGES,
    TOKENIZER_DIR,
    adapter_dir,
    base_location,
    load_base,
    load_tokenizer,
    load_trained,
    pick_device,
)
from factdebate.tools.models.json_reader import read_model

log = logging.getLogger(__name__)

PAPER_SFT_CLAIMS = 2148
"""D-SFT claims in the paper (AVeriTeC train claims the zero-shot moderator got right)."""
PAPER_DPO_CLAIMS = 920
"""D-DPO claims in the paper (the ones it got wrong, with corrected justifications)."""


class TrainingDataError(FactDebateError, ValueError):
    """A training file that is missing or not in the format ``factdebate syndec`` writes."""


@dataclass(frozen=True)
class TrainConfig:
    """Settings of one post-training run; defaults are the paper's (App. C)."""

    base: str = "local"
    stages: tuple[str, ...] = STAGES
    lora_rank: int = 128
    lora_alpha: int = 256
    lora_dropout: float = 0.05
    learning_rate: float = 2e-5
    epochs: float = 2.0
    batch_size: int = 1
    grad_accum: int = 8
    max_length: int = 4096
    beta: float = 0.1
    sft_limit: int | None = None
    dpo_limit: int | None = None
    max_steps: int = -1
    save_steps: int = 50
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        bounds: list[tuple[str, float, float]] = [
            ("lora_rank", 1, 1024),
            ("lora_alpha", 1, 4096),
            ("lora_dropout", 0, 0.9),
            ("learning_rate", 1e-8, 1e-1),
            ("epochs", 0.01, 100),
            ("batch_size", 1, 512),
            ("grad_accum", 1, 1024),
            ("max_length", 64, 131072),
            ("beta", 1e-4, 10),
            ("save_steps", 1, 1_000_000),
        ]
        for name, low, high in bounds:
            value = getattr(self, name)
            if not low <= value <= high:
                raise SettingsError(f"{name.replace('_', '-')} must be in [{low:g}, {high:g}]")
        if self.max_steps != -1 and not 1 <= self.max_steps <= 1_000_000:
            raise SettingsError("max-steps must be -1 (use epochs) or in [1, 1000000]")
        for name in ("sft_limit", "dpo_limit"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise SettingsError(f"{name.replace('_', '-')} must be at least 1")
        if not self.stages or any(s not in STAGES for s in self.stages):
            raise SettingsError(f"stages must be a non-empty subset of {', '.join(STAGES)}")
        if list(self.stages) != sorted(self.stages, key=STAGES.index):
            raise SettingsError("stages run in the order sft, dpo")
        if self.device not in ("auto", "cpu", "cuda"):
            raise SettingsError("device must be auto, cpu or cuda")


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    if not path.is_file():
        raise TrainingDataError(f"training file not found: {path}")
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append((number, json.loads(line)))
            except ValueError as exc:
                raise TrainingDataError(f"{path}:{number}: not JSON ({exc})") from exc
    if not rows:
        raise TrainingDataError(f"{path}: no rows")
    return rows


def _answer(text: Any, where: str) -> str:
    """A moderator answer: a JSON object with a justification and one of the four labels."""
    if not isinstance(text, str) or isinstance(read_model(text, FinalVerdict), str):
        raise TrainingDataError(
            f'{where}: the answer must be the moderator\'s JSON {{"justification": ..., '
            '"verdict": LABEL}'
        )
    return text


def _turn_text(value: Any, role: str, where: str) -> str:
    """Text of a string or of a one-message list with ``role`` (TRL's conversational form)."""
    if (
        isinstance(value, list)
        and len(value) == 1
        and isinstance(value[0], dict)
        and value[0].get("role") == role
    ):
        value = value[0].get("content")
    if not isinstance(value, str) or not value.strip():
        raise TrainingDataError(f"{where}: expected a non-empty {role} text")
    return value


def _prompt(value: Any, where: str) -> list[dict[str, str]]:
    """A prompt as chat messages: a user text, or system messages then one user message."""
    if isinstance(value, str):
        return [{"role": "user", "content": _turn_text(value, "user", where)}]
    roles = [m.get("role") for m in value if isinstance(m, dict)] if isinstance(value, list) else []
    if not roles or roles[-1] != "user" or any(r != "system" for r in roles[:-1]):
        raise TrainingDataError(
            f"{where}: expected the prompt as a user text or [system..., user] messages, "
            "as `factdebate syndec` writes it"
        )
    return [
        {"role": str(m["role"]), "content": _turn_text(m.get("content"), str(m["role"]), where)}
        for m in value
    ]


def read_sft(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """SFT rows (``{"messages": [system..., user, assistant]}``) as TRL prompt-completion rows."""
    out: list[dict[str, Any]] = []
    for number, row in _read_jsonl(path)[:limit]:
        where = f"{path}:{number}"
        messages = row.get("messages") if isinstance(row, dict) else None
        if not isinstance(messages, list) or not messages:
            messages = [None]
        last = messages[-1]
        if not isinstance(last, dict) or last.get("role") != "assistant":
            raise TrainingDataError(
                f'{where}: expected {{"messages": [system..., user, assistant]}} as '
                "`factdebate syndec` writes to sft.jsonl"
            )
        out.append(
            {
                "prompt": _prompt(messages[:-1], where),
                "completion": [
                    {"role": "assistant", "content": _answer(last.get("content"), where)}
                ],
            }
        )
    return out


def read_dpo(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """DPO rows (``{"prompt", "chosen", "rejected"}``) as TRL conversational preference rows."""
    out: list[dict[str, Any]] = []
    for number, row in _read_jsonl(path)[:limit]:
        where = f"{path}:{number}"
        if not isinstance(row, dict) or not {"prompt", "chosen", "rejected"} <= row.keys():
            raise TrainingDataError(
                f'{where}: expected {{"prompt", "chosen", "rejected"}} as `factdebate syndec` '
                "writes to dpo.jsonl"
            )
        prompt = _prompt(row["prompt"], where)
        chosen = _answer(_turn_text(row["chosen"], "assistant", where), where)
        rejected = _answer(_turn_text(row["rejected"], "assistant", where), where)
        out.append(
            {
                "prompt": prompt,
                "chosen": [{"role": "assistant", "content": chosen}],
                "rejected": [{"role": "assistant", "content": rejected}],
            }
        )
    return out


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def losses(log_history: list[dict[str, Any]]) -> list[tuple[int, float]]:
    """(step, training loss) pairs from a trainer's log history."""
    return [(int(e["step"]), float(e["loss"])) for e in log_history if "loss" in e and "step" in e]


def plot_losses(points: list[tuple[int, float]], title: str, path: Path) -> None:
    """Write the loss curve as a PNG (atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([s for s, _ in points], [v for _, v in points], marker="o", markersize=2)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_target(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)


def _prepare_run(cfg: TrainConfig, out: Path, device: str, dtype: Any) -> dict[str, Any]:
    """Create the run folder (tokenizer, GGUF base copy, manifest) or check it matches ``cfg``."""
    manifest_path = out / RUN_MANIFEST
    if manifest_path.is_file():
        manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("base") != cfg.base:
            raise RunFolderError(
                f"{out} was trained from base {manifest.get('base')!r}, not {cfg.base!r}; "
                "use a new --out folder"
            )
        return manifest
    out.mkdir(parents=True, exist_ok=True)
    copied = base_location(cfg.base)[1] is not None
    if copied:  # later loads (D-DPO, inference) skip the slow GGUF conversion
        model, tokenizer = load_base(cfg.base, dtype=dtype, device="cpu")
        model.save_pretrained(out / BASE_COPY_DIR)
        del model
        gc.collect()
    else:
        tokenizer = load_tokenizer(cfg.base)
    tokenizer.save_pretrained(out / TOKENIZER_DIR)
    manifest = {"base": cfg.base, "base_copied": copied, "config": asdict(cfg), "done": []}
    _write_json(manifest_path, manifest)
    return manifest


def _mark_done(out: Path, manifest: dict[str, Any], stage: str, points: list[Any]) -> None:
    manifest["done"] = sorted({*manifest.get("done", []), stage}, key=STAGES.index)
    manifest.setdefault("losses", {})[stage] = points
    _write_json(out / RUN_MANIFEST, manifest)


def _common_args(cfg: TrainConfig, folder: Path, device: str, dtype: Any) -> dict[str, Any]:
    import torch

    return {
        "output_dir": str(folder),
        "learning_rate": cfg.learning_rate,
        "num_train_epochs": cfg.epochs,
        "max_steps": cfg.max_steps,
        "optim": "adamw_torch",
        "per_device_train_batch_size": cfg.batch_size,
        "gradient_accumulation_steps": cfg.grad_accum,
        "max_length": cfg.max_length,
        "logging_steps": 1,
        "save_strategy": "steps",
        "save_steps": cfg.save_steps,
        "save_total_limit": 2,
        "report_to": [],
        "seed": cfg.seed,
        "use_cpu": device == "cpu",
        "bf16": dtype == torch.bfloat16,
        "fp16": dtype == torch.float16,
        "gradient_checkpointing": device == "cuda",
        "disable_tqdm": False,
        "dataset_num_proc": None,
    }


def _lora(cfg: TrainConfig) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_rank,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )


def _run_stage(
    stage: str, cfg: TrainConfig, out: Path, rows: list[dict[str, Any]], device: str, dtype: Any
) -> list[tuple[int, float]]:
    """Train one stage (resuming from its last checkpoint) and save its adapter."""
    from datasets import Dataset
    from transformers.trainer_utils import get_last_checkpoint
    from trl.trainer.dpo_config import DPOConfig
    from trl.trainer.dpo_trainer import DPOTrainer
    from trl.trainer.sft_config import SFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

    folder = out / stage
    folder.mkdir(parents=True, exist_ok=True)
    if stage == "dpo" and adapter_dir(out, "sft").is_dir():
        # D-DPO starts from, and is referenced to, the merged D-SFT model
        model, tokenizer = load_trained(out, upto="sft", dtype=dtype, device=device)
    else:
        base = out / BASE_COPY_DIR
        model, tokenizer = load_base(
            str(base) if base.is_dir() else cfg.base,
            dtype=dtype,
            device=device,
            tokenizer_from=str(out / TOKENIZER_DIR),
        )
    args = _common_args(cfg, folder, device, dtype)
    data = Dataset.from_list(rows)
    trainer: Any
    if stage == "sft":
        trainer = SFTTrainer(
            model=model,
            args=SFTConfig(**args, completion_only_loss=True),
            train_dataset=data,
            processing_class=tokenizer,
            peft_config=_lora(cfg),
        )
    else:
        trainer = DPOTrainer(
            model=model,
            args=DPOConfig(**args, beta=cfg.beta),
            train_dataset=data,
            processing_class=tokenizer,
            peft_config=_lora(cfg),
        )
    resume = get_last_checkpoint(str(folder))  # type: ignore[no-untyped-call]
    if resume:
        log.info("%s: resuming from %s", stage, resume)
    trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(str(adapter_dir(out, stage)))
    points = losses(trainer.state.log_history)
    _write_json(folder / "loss.json", points)
    if points:
        plot_losses(points, f"D-{stage.upper()} training loss ({cfg.base})", folder / "loss.png")
    del trainer, model
    gc.collect()
    return points


def train_moderator(
    out_dir: str | Path,
    sft_path: str | Path | None,
    dpo_path: str | Path | None,
    cfg: TrainConfig,
    on_stage: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) D-SFT then D-DPO into ``out_dir``; returns the run manifest.

    A stage whose adapter is already saved is skipped; an interrupted stage resumes from its
    last checkpoint. Data files are checked before any model is loaded.

    Raises:
        TrainingDataError: A missing file or a row not in the SynDeC export format.
        ModelConfigError: A base model that cannot be loaded.
        ValueError: A run folder made from another base.
    """
    paths = {"sft": sft_path, "dpo": dpo_path}
    readers = {"sft": read_sft, "dpo": read_dpo}
    limits = {"sft": cfg.sft_limit, "dpo": cfg.dpo_limit}
    data: dict[str, list[dict[str, Any]]] = {}
    for stage in cfg.stages:
        path = paths[stage]
        if path is None:
            raise TrainingDataError(f"stage {stage} needs --{stage} FILE")
        data[stage] = readers[stage](Path(path), limits[stage])
    out = Path(out_dir)
    device, dtype = pick_device(cfg.device)
    manifest = _prepare_run(cfg, out, device, dtype)
    for stage in cfg.stages:
        if adapter_dir(out, stage).is_dir():
            log.info("%s: adapter already saved, skipping", stage)
            continue
        if on_stage:
            on_stage(stage, len(data[stage]))
        points = _run_stage(stage, cfg, out, data[stage], device, dtype)
        _mark_done(out, manifest, stage, points)
    return manifest
