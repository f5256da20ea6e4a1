"""`factdebate syndec` and `train-moderator`: DebateCV post-training data and runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factdebate.cli.common import (
    DEBATE_CV_SET_HELP,
    parse_settings,
)
from factdebate.cli.console import err, fail, out, run_coroutine
from factdebate.tools.core.errors import FactDebateError, SettingsError


def syndec(
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder (resumable).")],
    dataset: Annotated[str, typer.Option(help="Labelled claim dataset.")] = "averitec",
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Sample this many claims.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    model: Annotated[str | None, typer.Option(help="Model for every role.")] = None,
    corrector_model: Annotated[str | None, typer.Option(help="Model of the Corrector.")] = None,
    evidence: Annotated[str, typer.Option(help="gold or retrieved.")] = "gold",
    concurrency: Annotated[int, typer.Option(help="Claims in flight at once.")] = 1,
    set_: Annotated[list[str] | None, typer.Option("--set", help=DEBATE_CV_SET_HELP)] = None,
    split: Annotated[
        str,
        typer.Option(
            help="AVeriTeC split: dev (shipped) or train (the paper's SynDeC; needs "
            "averitec/train.json under --data-dir)."
        ),
    ] = "dev",
    file: Annotated[
        Path | None,
        typer.Option("--file", help="Read the AVeriTeC claims from this JSON file instead."),
    ] = None,
) -> None:
    """DebateCV synthetic debates (SynDeC) with SFT and DPO exports; re-run to resume."""
    from factdebate.datasets import dataset_folder, sample
    from factdebate.nodes.debate_cv.context import DebateCVContext
    from factdebate.training.syndec import load_claims, run_syndec

    try:
        if evidence not in ("gold", "retrieved"):
            raise SettingsError("--evidence must be gold or retrieved")
        settings = parse_settings(set_ or [], DebateCVContext, "debate-cv")
        if model:
            settings["model"] = model
        context = DebateCVContext(**settings)
        items = sample(
            load_claims(dataset, dataset_folder(dataset, data_dir), split, file), limit, seed
        )
    except FactDebateError as exc:
        fail(str(exc))
    summary = run_coroutine(
        run_syndec(
            items,
            out_dir,
            context=context,
            corrector_model=corrector_model,
            use_gold_evidence=evidence == "gold",
            concurrency=concurrency,
        )
    )
    out.print(
        f"new {summary.new}, skipped {summary.skipped}, correct {summary.correct}, "
        f"corrected {summary.corrected}, uncorrected {summary.uncorrected}, unparsed "
        f"{summary.unparsed}; sft {summary.sft}, dpo {summary.dpo} -> {summary.out_dir}"
    )
    for ident, message in summary.failed:
        err.print(f"failed {ident}: {message}", markup=False)
    if summary.failed:
        raise typer.Exit(1)


def train_moderator_command(
    out_dir: Annotated[
        Path, typer.Option("--out", help="Run folder (resumable); use as hf-local:RUN_DIR.")
    ],
    sft: Annotated[
        Path | None, typer.Option(help="D-SFT data: sft.jsonl from `factdebate syndec`.")
    ] = None,
    dpo: Annotated[
        Path | None, typer.Option(help="D-DPO pairs: dpo.jsonl from `factdebate syndec`.")
    ] = None,
    base: Annotated[
        str,
        typer.Option(
            help="Base model: 'local' (bundled SmolLM2-135M GGUF), a .gguf file, a Hugging "
            "Face model folder, or a hub name already in the local cache."
        ),
    ] = "local",
    stages: Annotated[
        str, typer.Option(help="Stages to run, in order: sft,dpo (full), sft (w/o D-DPO), dpo.")
    ] = "sft,dpo",
    lora_rank: Annotated[int, typer.Option(help="LoRA rank (paper: 128).")] = 128,
    lora_alpha: Annotated[int, typer.Option(help="LoRA alpha (paper: 256).")] = 256,
    lora_dropout: Annotated[float, typer.Option(help="LoRA dropout.")] = 0.05,
    lr: Annotated[float, typer.Option("--lr", help="AdamW learning rate (paper: 2e-5).")] = 2e-5,
    epochs: Annotated[float, typer.Option(help="Epochs per stage (paper: 2).")] = 2.0,
    batch_size: Annotated[int, typer.Option(help="Examples per device step.")] = 1,
    grad_accum: Annotated[int, typer.Option(help="Gradient accumulation steps.")] = 8,
    max_length: Annotated[int, typer.Option(help="Longest tokenised example (tokens).")] = 4096,
    beta: Annotated[float, typer.Option(help="D-DPO beta (strength of the reference).")] = 0.1,
    sft_limit: Annotated[
        int | None, typer.Option(help="Use the first N D-SFT rows (paper: 2148 claims).")
    ] = None,
    dpo_limit: Annotated[
        int | None, typer.Option(help="Use the first N D-DPO pairs (paper: 920 claims).")
    ] = None,
    max_steps: Annotated[
        int, typer.Option(help="Stop each stage after N optimizer steps (-1: run the epochs).")
    ] = -1,
    save_steps: Annotated[int, typer.Option(help="Checkpoint every N steps (resume point).")] = 50,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    device: Annotated[
        str, typer.Option(help="auto (a CUDA GPU if present, bf16 where supported), cpu, cuda.")
    ] = "auto",
) -> None:
    """Post-train DebateCV's moderator: LoRA D-SFT, then D-DPO (re-run to resume)."""
    from factdebate.training.moderator import TrainConfig, train_moderator

    try:
        cfg = TrainConfig(
            base=base,
            stages=tuple(s.strip() for s in stages.split(",") if s.strip()),
            lora_rank=lora_rank,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            learning_rate=lr,
            epochs=epochs,
            batch_size=batch_size,
            grad_accum=grad_accum,
            max_length=max_length,
            beta=beta,
            sft_limit=sft_limit,
            dpo_limit=dpo_limit,
            max_steps=max_steps,
            save_steps=save_steps,
            seed=seed,
            device=device,
        )
        manifest = train_moderator(
            out_dir,
            sft,
            dpo,
            cfg,
            on_stage=lambda stage, rows: err.print(f"D-{stage.upper()}: {rows} rows", markup=False),
        )
    except FactDebateError as exc:
        fail(str(exc))
    for stage, points in manifest.get("losses", {}).items():
        if points:
            out.print(
                f"D-{stage.upper()}: loss {points[0][1]:.4f} -> {points[-1][1]:.4f} over "
                f"{len(points)} steps; curve {out_dir / stage / 'loss.png'}",
                markup=False,
            )
    out.print(f"use it as the moderator: --set judge_model=hf-local:{out_dir}", markup=False)


def register(app: typer.Typer) -> None:
    """Add `syndec`, `train-moderator` to the `factdebate` command."""
    app.command(
        epilog="Example: factdebate syndec --out data/syndec --dataset averitec --limit 20 "
        "--model openai:gpt-4o-mini"
    )(syndec)
    app.command(
        "train-moderator",
        epilog="Example: factdebate train-moderator --sft data/syndec/sft.jsonl --dpo "
        "data/syndec/dpo.jsonl --base local --max-steps 4 --out runs/moderator",
    )(train_moderator_command)
