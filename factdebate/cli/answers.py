"""`score-answer`, `gen-answers`, `score-answers`: MAD-Fact on long answers."""

from __future__ import annotations

import json
import time
from dataclasses import fields
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from factdebate.cli.common import (
    MAD_FACT_SET_HELP,
    parse_settings,
)
from factdebate.cli.console import (
    err,
    fail,
    out,
    print_json,
    print_markdown,
    run_coroutine,
    save_page,
)
from factdebate.cli.progress import DEFAULT_EVERY_S, Tracker, track_progress
from factdebate.tools.core.errors import FactDebateError
from factdebate.tools.core.json_text import json_problem, parse_json
from factdebate.tools.core.secrets import redact


def score_answer_command(
    answer_file: Annotated[Path, typer.Option(help="File holding the long answer to check.")],
    question: Annotated[str, typer.Option(help="The question the answer responds to.")] = "",
    references: Annotated[
        Path | None,
        typer.Option(help="Reference answers: JSON list of strings, or blocks split by '---'."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model for every role.")] = None,
    rule: Annotated[int | None, typer.Option(help="Debate rule 1, 2 or 3.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help=MAD_FACT_SET_HELP)] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object, nothing else.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(help="Also write the claims and their juries as one HTML page here."),
    ] = None,
) -> None:
    """MAD-Fact: split a long answer into claims, let a jury check each, and score it."""
    from factdebate.bench.running.long_form import ascore_answer
    from factdebate.nodes.claims import InputError, clean_claim, read_user_file
    from factdebate.nodes.mad_fact.context import MADFactContext

    try:
        raw = read_user_file(answer_file, "answer file")
        answer = clean_claim(raw, MADFactContext().max_answer_chars)
        refs = _read_references(references) if references else None
        settings = parse_settings(set_ or [], MADFactContext, "mad-fact")
        if model:
            settings["model"] = model
        if rule is not None:
            settings["debate_rule"] = rule
        MADFactContext(**settings)
        if html is not None:
            from factdebate.api import check_page_path

            check_page_path(html)
    except FactDebateError as exc:
        fail(f"{answer_file}: {exc}" if isinstance(exc, InputError) else str(exc))
    if not as_json:
        shown_model = escape(redact(str(settings.get("model", "local"))))
        out.print(f"[dim]checking the answer with MAD-Fact (model {shown_model})[/dim]")
    started = time.perf_counter()
    result = run_coroutine(ascore_answer(answer, question, refs, **settings))
    if html is not None:
        from factdebate.pages.debate import write_debate_page

        ctx = MADFactContext(**settings)
        shown = {f.name: getattr(ctx, f.name) for f in fields(ctx)}
        elapsed = time.perf_counter() - started
        save_page(
            lambda: write_debate_page(html, result, answer, "mad-fact", shown, elapsed), as_json
        )
    if as_json:
        print_json(result)
        return
    for claim in result.get("claims", []):
        verdict = claim.get("verdict") or "NO VERDICT"
        out.print(f"[bold]{escape(str(verdict))}[/bold]  {escape(str(claim.get('claim')))}")
        for turn in result.get("transcript", []):
            if turn.get("claim_id") == claim.get("claim_id") and turn.get("answer"):
                reason = " ".join(str(turn["answer"]).split())[:200]
                out.print(
                    f"   {turn.get('agent')} (round {turn.get('round')}): {reason}", markup=False
                )
    scores = result.get("scores") or {}
    out.rule("Scores")
    out.print(
        ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in scores.items()
            if not isinstance(v, dict | list)
        )
    )
    out.print(
        f"stop reason: {result.get('stop_reason')}; recorded errors: "
        f"{len(result.get('errors') or [])}"
    )


def gen_answers(
    out_dir: Annotated[Path, typer.Option("--out", help="Answer folder (resumable).")],
    model: Annotated[str, typer.Option(help="Model writing the answers, e.g. openai:gpt-4o.")],
    dataset: Annotated[str, typer.Option(help="Prompt set: longfact.")] = "longfact",
    data_dir: Annotated[Path | None, typer.Option(help="Datasets root folder.")] = None,
    limit: Annotated[int | None, typer.Option(help="Sample this many prompts.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    concurrency: Annotated[int, typer.Option(help="Prompts in flight at once.")] = 1,
    max_output_tokens: Annotated[int, typer.Option(help="Longest answer, in tokens.")] = 1024,
    timeout: Annotated[float, typer.Option(help="Seconds per model call.")] = 300.0,
) -> None:
    """Write a long answer per prompt (LongFact) for MAD-Fact to score; re-run to resume."""
    from factdebate.bench.running.long_form import agen_answers
    from factdebate.datasets import PROMPT_SETS, DatasetError, dataset_folder, sample

    try:
        if dataset not in PROMPT_SETS:
            raise DatasetError(
                f"unknown prompt set {dataset!r}; choose one of: {', '.join(PROMPT_SETS)}"
            )
        folder = dataset_folder(dataset, data_dir)
        prompts_of = PROMPT_SETS[dataset].load
        loaded = prompts_of(folder) if folder is not None else prompts_of()
        for issue in loaded.issues:
            err.print(f"skipped malformed record: {issue}", markup=False, soft_wrap=True)
        prompts = sample(loaded.items, limit, seed)
        with track_progress(f"{model} answering {dataset}", DEFAULT_EVERY_S, "prompts") as track:
            track(0, len(prompts), "")
            summary = run_coroutine(
                agen_answers(
                    prompts,
                    out_dir,
                    model=model,
                    dataset=dataset,
                    concurrency=concurrency,
                    max_output_tokens=max_output_tokens,
                    timeout=timeout,
                    progress=lambda done, total: track(done, total, ""),
                )
            )
    except FactDebateError as exc:
        fail(str(exc))
    out.print(
        f"new {summary['new']}, skipped {summary['skipped']}, failed {summary['failed']} "
        f"-> {out_dir / 'answers.jsonl'}",
        markup=False,
    )
    if summary["failed"]:
        raise typer.Exit(1)


def score_answers(
    answer_dirs: Annotated[list[Path], typer.Argument(help="Folders written by gen-answers.")],
    model: Annotated[str | None, typer.Option(help="Model for every MAD-Fact role.")] = None,
    rule: Annotated[int | None, typer.Option(help="Debate rule 1, 2 or 3.")] = None,
    concurrency: Annotated[int, typer.Option(help="Answers in flight at once.")] = 1,
    set_: Annotated[list[str] | None, typer.Option("--set", help=MAD_FACT_SET_HELP)] = None,
) -> None:
    """Score folders of long answers with MAD-Fact and compare their models (resumable)."""
    from factdebate.bench.running.long_form import ascore_answers, render_factuality
    from factdebate.nodes.mad_fact.context import MADFactContext

    summaries = []
    try:
        settings = parse_settings(set_ or [], MADFactContext, "mad-fact")
        if model:
            settings["model"] = model
        if rule is not None:
            settings["debate_rule"] = rule
        for folder in answer_dirs:
            with track_progress(f"scoring {folder}", DEFAULT_EVERY_S, "answers") as track:

                def progress(done: int, total: int, track: Tracker = track) -> None:
                    track(done, total, "")

                summaries.append(
                    run_coroutine(
                        ascore_answers(
                            folder, concurrency=concurrency, progress=progress, **settings
                        )
                    )
                )
    except FactDebateError as exc:
        fail(str(exc))
    print_markdown(render_factuality(summaries))


def _read_references(path: Path) -> list[str]:
    """Reference answers: a JSON list of strings, or text blocks separated by '---' lines."""
    from factdebate.nodes.claims import InputError, read_user_file

    try:
        text = read_user_file(path, "references file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read references {path}: {exc}") from exc
    if path.suffix == ".json":
        try:
            data = parse_json(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON ({json_problem(exc)})") from exc
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise InputError(f"{path}: expected a JSON list of strings")
        return [x for x in data if x.strip()]
    blocks = "\n".join(line if line.strip() != "---" else "\x00" for line in text.splitlines())
    return [b.strip() for b in blocks.split("\x00") if b.strip()]


def register(app: typer.Typer) -> None:
    """Add `score-answer`, `gen-answers`, `score-answers` to the `factdebate` command."""
    app.command(
        "score-answer",
        epilog='Example: factdebate score-answer --answer-file answer.txt --question "..." '
        "--html claims.html",
    )(score_answer_command)
    app.command(
        "gen-answers",
        epilog="Example: factdebate gen-answers --dataset longfact --model openai:gpt-4o-mini "
        "--limit 20 --out answers/gpt-4o-mini",
    )(gen_answers)
    app.command(
        "score-answers",
        epilog="Example: factdebate score-answers answers/gpt-4o-mini answers/llama --model "
        "openai:gpt-4o-mini",
    )(score_answers)
