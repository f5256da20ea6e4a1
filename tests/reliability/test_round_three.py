"""Round three of hostile trials: output targets, dataset text, bench refusals, secrets."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factdebate.cli import app

runner = CliRunner()
KEY = "sk-url-SECRET-9876"


@pytest.fixture(autouse=True)
def _own_home(data_home: Path) -> Path:
    """Every test here indexes (if at all) into its own empty FACTDEBATE_HOME."""
    return data_home


def one_line_error(result: Any, message: str) -> None:
    output = result.output
    assert result.exit_code == 2, output
    assert message in output.replace("\n", " "), output
    assert "Traceback" not in output, output
    assert len(output.strip().splitlines()) <= 3, output


def fever_mini(root: Path, labels: tuple[str, ...] = ("SUPPORTS", "REFUTES", "SUPPORTS")) -> Path:
    """A small FEVER-mini dataset under ``root`` (claims with gold sentences); returns root."""
    folder = root / "fever" / "fever_rag_mini"
    folder.mkdir(parents=True)
    corpus = [{"doc_id": f"d{i}", "text": f"Fact number {i} holds.", "page": "P"} for i in range(3)]
    claims = [
        {"id": i, "claim": f"Claim number {i}.", "label": label, "gold_doc_ids": [f"d{i}"]}
        for i, label in enumerate(labels)
    ]
    for name, rows in (("corpus.jsonl", corpus), ("claims.jsonl", claims)):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        (folder / name).write_text(text, encoding="utf-8")
    return root


def bench_args(out: Path, data: Path, model: str, *extra: str) -> list[str]:
    return [
        "bench",
        "--out",
        str(out),
        "--method",
        "cot",
        "--dataset",
        "fever-mini",
        "--data-dir",
        str(data),
        "--model",
        model,
        *extra,
    ]


# ----------------------------------------------------------------- 1, 10: output targets


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.html"
    os.mkfifo(path)
    return path


def test_write_atomic_refuses_a_pipe_a_symlink_and_a_folder(tmp_path: Path, fifo: Path) -> None:
    from factdebate.tools.core.files import OutputTargetError, write_atomic

    real = tmp_path / "real.txt"
    real.write_text("keep me", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target, message in (
        (fifo, "is not a regular file"),
        (link, "is a symlink"),
        (folder, "is a folder"),
    ):
        with pytest.raises(OutputTargetError, match=message):
            write_atomic(target, "<html></html>")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the pipe, not a regular file
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_verify_html_at_a_pipe_is_refused_before_any_model_call(fifo: Path, scripted) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    result = runner.invoke(
        app, ["verify", "The sky is blue.", "--method", "cot", "--model", name, "--html", str(fifo)]
    )
    one_line_error(result, "is not a regular file")
    assert model.prompts == []
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_verify_html_at_a_symlink_is_refused(tmp_path: Path, scripted) -> None:
    real = tmp_path / "elsewhere.txt"
    real.write_text("not a page", encoding="utf-8")
    link = tmp_path / "debate.html"
    link.symlink_to(real)
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    result = runner.invoke(
        app, ["verify", "The sky is blue.", "--method", "cot", "--model", name, "--html", str(link)]
    )
    one_line_error(result, "is a symlink")
    assert model.prompts == [] and real.read_text(encoding="utf-8") == "not a page"


def test_bench_compare_html_at_a_pipe_is_refused(tmp_path: Path, fifo: Path, scripted) -> None:
    name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    data = fever_mini(tmp_path / "data")
    assert runner.invoke(app, bench_args(out, data, name)).exit_code == 0
    result = runner.invoke(app, ["bench", "--compare", str(out), "--html", str(fifo)])
    assert result.exit_code == 2, result.output
    assert "is not a regular file" in result.output and "Traceback" not in result.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_result_files_share_one_mode_and_keep_a_chosen_one(tmp_path: Path, scripted) -> None:
    from factdebate.tools.core.files import write_atomic

    old = os.umask(0o022)
    try:
        name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
        out = tmp_path / "run"
        assert (
            runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), name)).exit_code == 0
        )
        modes = {
            p.name: stat.S_IMODE(p.stat().st_mode)
            for p in out.iterdir()
            if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".html", ".png")
        }
        assert {"metrics.json", "report.md", "run.json", "results.jsonl"} <= set(modes)
        assert set(modes.values()) == {0o644}, modes
        private = tmp_path / "private.txt"
        private.write_text("x", encoding="utf-8")
        private.chmod(0o600)
        write_atomic(private, "y")
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    finally:
        os.umask(old)


# ----------------------------------------------------------------- 2, 5: dataset JSONL text


def test_jsonl_lines_end_at_newline_only_and_medqa_ids_stay_right(tmp_path: Path) -> None:
    from factdebate.datasets import load_medqa

    def question(text: str, answer: str) -> dict[str, Any]:
        return {
            "question": text,
            "options": {"A": "one", "B": "two", "C": "three", "D": "four"},
            "answer_idx": answer,
        }

    rows = [
        question("First\u2028question with a line separator\u0085inside?", "A"),
        question("Second\u2029question?", "B"),
        question("Third question?", "C"),
    ]
    file = tmp_path / "test.jsonl"
    file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    loaded = load_medqa(file)
    assert loaded.issues == []
    gold = {i.id: i.label for i in loaded.items}
    assert len(gold) == 12
    assert (gold["0-A"], gold["1-B"], gold["2-C"]) == ("SUPPORTS", "SUPPORTS", "SUPPORTS")
    assert "\u2028" in loaded.items[0].claim


def test_a_non_utf8_line_is_reported_by_file_and_line_and_skipped(tmp_path: Path) -> None:
    from factdebate.bench import load_items

    root = fever_mini(tmp_path / "data")
    claims = root / "fever" / "fever_rag_mini" / "claims.jsonl"
    lines = claims.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"Claim number 1", b"Caf\xe9 claim")  # Latin-1, not UTF-8
    claims.write_bytes(b"\n".join(lines))
    issues: list[str] = []
    items, _ = load_items("fever-mini", root, None, 0, issues)
    assert [i.id for i in items] == ["0", "2"]
    assert issues == [f"{claims}:2: not valid UTF-8 (byte 0xe9 at column 24)"]


def test_bench_reads_a_results_row_holding_a_line_separator(tmp_path: Path) -> None:
    from factdebate.bench import read_results

    path = tmp_path / "results.jsonl"
    rows = [{"id": "1", "errors": [{"raw": "a\u2028b"}]}, {"id": "2"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    assert read_results(path) == rows


# ----------------------------------------------------------------- 3, 6: bench refusals


@pytest.mark.parametrize(
    "model_args",
    [
        ["--model", "nonsense:foo"],
        ["--set", "judge_model=nonsense:foo"],
        ["--model", "openai-compatible:fake"],
    ],
    ids=["unknown-provider", "judge-model", "compatible-without-url"],
)
def test_bench_refuses_a_bad_model_before_any_item_runs(
    model_args: list[str], tmp_path: Path, scripted
) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    args = bench_args(out, fever_mini(tmp_path / "data"), name)
    args = [*args[:-2], *(model_args if model_args[0] == "--model" else [*args[-2:], *model_args])]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "nonsense:foo" in result.output or "openai-compatible:MODEL@" in result.output
    assert model.prompts == []
    assert not (out / "results.jsonl").exists()


@pytest.mark.parametrize("kind", ["file", "pipe", "under-a-file"])
def test_bench_out_that_cannot_be_a_run_folder_is_one_line(
    kind: str, tmp_path: Path, scripted
) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    blocker = tmp_path / "taken"
    if kind == "pipe":
        os.mkfifo(blocker)
    else:
        blocker.write_text("a file", encoding="utf-8")
    out = blocker / "run" if kind == "under-a-file" else blocker
    result = runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), name))
    one_line_error(result, f"--out {out}")
    assert model.prompts == []


def test_bench_results_file_that_is_a_pipe_is_refused(tmp_path: Path, scripted) -> None:
    import threading

    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    out.mkdir()
    pipe = out / "results.jsonl"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()), daemon=True)
    reader.start()  # drains the pipe if anything writes to it, so a regression cannot hang
    try:
        result = runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), name))
    finally:
        if reader.is_alive():  # nothing opened it for writing: release the reader
            with open(pipe, "wb"):
                pass
        reader.join(timeout=10)
    one_line_error(result, "is not a regular file")
    assert model.prompts == [] and got == [b""]


# ----------------------------------------------------------------- 4: resume identity


def test_resume_refuses_another_copy_of_the_dataset(tmp_path: Path, scripted) -> None:
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    first = fever_mini(tmp_path / "one")
    assert runner.invoke(app, bench_args(out, first, name)).exit_code == 0
    calls = len(model.prompts)
    assert runner.invoke(app, bench_args(out, first, name)).exit_code == 0  # same data: resumes
    assert len(model.prompts) == calls
    other = fever_mini(tmp_path / "two", labels=("REFUTES", "REFUTES", "SUPPORTS"))
    result = runner.invoke(app, bench_args(out, other, name))
    one_line_error(result, "holds a run with different data")
    assert len(model.prompts) == calls
    rows = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 3


# ----------------------------------------------------------------- 7: secrets in URLs


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "openai-compatible:m@http://user:KEY1234@host/v1",
            "openai-compatible:m@http://user:[redacted]@host/v1",
        ),
        ("https://TOKEN1234@git.example/x", "https://[redacted]@git.example/x"),
        ("http://h/v1?api_key=KEY1234&design=1", "http://h/v1?api_key=[redacted]&design=1"),
        (
            "https://h/x?X-Amz-Signature=abc&token=t",
            "https://h/x?X-Amz-Signature=[redacted]&token=[redacted]",
        ),
        (
            "mail me at a@b.example, see http://h:8080/v1",
            "mail me at a@b.example, see http://h:8080/v1",
        ),
    ],
)
def test_redact_removes_credentials_from_urls(text: str, shown: str) -> None:
    from factdebate.tools.core.secrets import redact

    assert redact(text) == shown


def test_a_key_in_a_model_url_reaches_no_bench_file_and_no_terminal(tmp_path: Path) -> None:
    from tests.fake_provider import fake_provider

    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        model = provider.model("m").replace("http://", f"http://user:{KEY}@")
        out = tmp_path / "run"
        result = runner.invoke(app, bench_args(out, fever_mini(tmp_path / "data"), model))
    assert result.exit_code == 0, result.output
    assert provider.requests, "the run reached the model"
    assert KEY not in result.output
    written = [p for p in out.rglob("*") if p.is_file() and p.suffix != ".png"]
    assert {"run.json", "report.md", "metrics.json", "report.html"} <= {p.name for p in written}
    for path in written:
        assert KEY not in path.read_text(encoding="utf-8"), path.name
    assert "user:[redacted]@" in (out / "run.json").read_text(encoding="utf-8")


def test_verify_shows_no_key_from_a_model_url(tmp_path: Path) -> None:
    from tests.fake_provider import fake_provider

    with fake_provider(lambda prompt, body: "Reasoned.\n**SUPPORTS**") as provider:
        model = provider.model("m").replace("http://", f"http://user:{KEY}@")
        page = tmp_path / "debate.html"
        result = runner.invoke(
            app,
            [
                "verify",
                "The sky is blue.",
                "--method",
                "cot",
                "--model",
                model,
                "--html",
                str(page),
            ],
        )
    assert result.exit_code == 0, result.output
    assert KEY not in result.output and KEY not in page.read_text(encoding="utf-8")


# ----------------------------------------------------------------- 8: terminal safety

HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x9b31m\u202eSUPPORTS\r\x08"


def test_printable_strips_escape_sequences_and_controls() -> None:
    from factdebate.tools.core.terminal import printable

    assert printable(f"ok{HOSTILE} done\tand\nmore") == "okSUPPORTS done\tand\nmore"
    assert printable("plain text, [brackets] and ünïcode") == "plain text, [brackets] and ünïcode"


def test_model_text_reaches_the_terminal_without_control_sequences(scripted) -> None:
    name, _ = scripted([], default=f"Reasoned {HOSTILE} [link=file:///etc]x[/link].\n**SUPPORTS**")
    result = runner.invoke(app, ["verify", "The sky is blue.", "--method", "cot", "--model", name])
    assert result.exit_code == 0, result.output
    assert "Reasoned" in result.output
    for bad in ("\x1b", "\x9b", "\x07", "\x08", "\r", "\u202e"):
        assert bad not in result.output, repr(bad)


# ----------------------------------------------------------------- 9: index with every record bad


def climate_fever_like(tmp_path: Path) -> Path:
    """A corpus whose every record names its id ``doc_id`` (as Climate-FEVER's does)."""
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"doc_id": f"d{i}", "title": "T", "text": "Some text."} for i in range(5)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return corpus


def test_loading_a_corpus_with_every_record_bad_says_why(tmp_path: Path) -> None:
    from factdebate.tools.retrieval.corpus import CorpusError, load_documents

    corpus = climate_fever_like(tmp_path)
    with pytest.raises(CorpusError) as caught:
        load_documents(corpus, skipped=[])
    message = str(caught.value)
    assert message.startswith(f"no documents found in {corpus}")
    assert f"{corpus}:1: missing or empty id" in message and "\n" not in message


def test_index_with_every_record_bad_names_file_and_line(tmp_path: Path) -> None:
    corpus = climate_fever_like(tmp_path)
    result = runner.invoke(app, ["index", str(corpus), "--collection", "allbad"])
    assert result.exit_code == 2, result.output  # nothing to index: a one-line error
    assert f"{corpus}:1: missing or empty id" in result.output.replace("\n", "")
    assert "Traceback" not in result.output


# ----------------------------------------------------------------- 10: no doubled documents


def test_json_result_holds_a_given_document_once(tmp_path: Path, scripted) -> None:
    name, _ = scripted([], default='{"answers": ["Paris"], "explanation": "The doc says so."}')
    text = "MARKER " * 20_000
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "d1", "title": "T", "text": text}) + "\n", "utf-8")
    args = ["verify", "Where is it?", "--method", "madam-rag", "--model", name]
    result = runner.invoke(app, [*args, "--documents", str(docs), "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout.strip().splitlines()[-1])
    assert json.dumps(shown).count("MARKER") == 20_000
    assert shown["transcript"][0]["evidence"][0]["text"].startswith("MARKER")


# ----------------------------------------------------------------- 11: honest scores


def averitec(root: Path, labels: tuple[str, ...]) -> Path:
    """An AVeriTeC-format dev.json under ``root/averitec`` with one claim per label."""
    records = [
        {
            "claim": f"Claim {i}.",
            "label": label,
            "questions": [{"question": f"Q{i}?", "answers": [{"answer": f"A{i}."}]}],
        }
        for i, label in enumerate(labels)
    ]
    (root / "averitec").mkdir(parents=True)
    (root / "averitec" / "dev.json").write_text(json.dumps(records), encoding="utf-8")
    return root


def test_averitec_is_scored_over_its_four_labels_whatever_the_sample(
    tmp_path: Path, scripted
) -> None:
    from factdebate.bench import load_items, run_bench
    from factdebate.datasets import LABELS

    root = averitec(tmp_path / "data", ("Supported", "Refuted", "Not Enough Evidence"))
    _, labels = load_items("averitec", root, 2, 0)
    assert labels == LABELS
    name, _ = scripted([], default="The evidence pulls both ways.\n**CONFLICTING**")
    metrics = run_bench(
        "rag-cot",  # DebateCV's single-answer baseline: four labels
        "averitec",
        tmp_path / "run",
        data_dir=root,
        limit=None,
        seed=0,
        concurrency=1,
        context={"model": name},
    )
    assert metrics["labels"] == list(LABELS)
    assert (metrics["unparsed"], metrics["out_of_labels"], metrics["failed"]) == (0, 0, 0)
    assert sum(row["CONFLICTING"] for row in metrics["confusion"].values()) == 3
    assert metrics["per_class"]["CONFLICTING"]["precision"] == 0.0


def test_seeded_averitec_samples_all_list_four_labels() -> None:
    from factdebate.bench import load_items
    from factdebate.datasets import CONFLICTING, LABELS
    from tests.conftest import data_or_skip

    without = 0
    for seed in range(20):
        items, labels = data_or_skip(lambda s=seed: load_items("averitec", None, 3, s), "AVeriTeC")
        assert labels == LABELS
        without += all(i.gold != CONFLICTING for i in items)
    assert without > 0  # samples without CONFLICTING gold were drawn, and still list four


def test_a_verdict_outside_the_datasets_labels_is_counted_apart(tmp_path: Path, scripted) -> None:
    name, _ = scripted([], default="The evidence pulls both ways.\n**CONFLICTING**")
    out = tmp_path / "run"
    args = bench_args(out, fever_mini(tmp_path / "data"), name)
    args[args.index("cot")] = "rag-cot"  # four labels, on a three-label dataset
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert (metrics["unparsed"], metrics["out_of_labels"], metrics["failed"]) == (0, 3, 0)
    assert "| unparsed | out of labels |" in (out / "report.md").read_text(encoding="utf-8")


def test_items_whose_model_calls_all_failed_count_as_failed_not_unparsed(
    tmp_path: Path, scripted
) -> None:
    from factdebate.bench import run_bench

    name, _ = scripted([("", RuntimeError("provider down"))])
    metrics = run_bench(
        "debate-cv",
        "fever-mini",
        tmp_path / "run",
        data_dir=fever_mini(tmp_path / "data"),
        limit=None,
        seed=0,
        concurrency=1,
        context={"model": name, "model_retries": 0},
    )
    assert metrics["stop_reasons"] == {"moderator_error": 3}
    assert (metrics["failed"], metrics["unparsed"], metrics["accuracy"]) == (3, 0, 0.0)


def test_failed_unparsed_and_budget_rows_are_told_apart() -> None:
    from factdebate.bench.report import compute_metrics

    def row(pred: str | None, stop: str, *kinds: str) -> dict[str, Any]:
        errors = [{"kind": kind} for kind in kinds]
        return {"gold": "SUPPORTS", "prediction": pred, "stop_reason": stop, "errors": errors}

    rows = [
        row("SUPPORTS", "single_answer"),
        row(None, "single_answer", "parse_error"),  # a reply that could not be read
        row(None, "single_answer", "model_error"),  # its only call failed
        row(None, "round_limit", "timeout", "parse_error"),  # one call failed, one unreadable
        row(None, "error"),  # the run raised
        row(None, "budget_exhausted", "budget_exhausted"),
        row("CONFLICTING", "single_answer"),
        row("maybe", "single_answer"),  # not a verdict label: unreadable
    ]
    m = compute_metrics(rows, ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"))
    assert (m["unparsed"], m["out_of_labels"], m["failed"], m["budget_exhausted"]) == (3, 1, 2, 1)
    assert m["confusion"]["SUPPORTS"]["UNPARSED"] == 7


# ----------------------------------------------------------------- 12: datasets' evidence, notes


def test_felm_reference_contents_are_evidence(tmp_path: Path) -> None:
    from factdebate.bench import load_items

    record = {
        "index": 7,
        "domain": "wk",
        "prompt": "Who built it?",
        "response": "Eiffel built it. It is red.",
        "segmented_response": ["Eiffel built it.", "It is red."],
        "labels": [True, False],
        "ref": ["https://example.org/tower", "https://example.org/paint"],
        "ref_contents": ["The tower was built by Eiffel's company.", ""],
    }
    file = tmp_path / "all.jsonl"
    file.write_text(json.dumps(record) + "\n", encoding="utf-8")
    items, _ = load_items("felm-wk", file, None, 0)
    assert [i.id for i in items] == ["7-0", "7-1"]
    evidence = items[0].inputs["evidence"]
    assert [e["text"] for e in evidence] == ["The tower was built by Eiffel's company."]
    assert evidence[0]["title"] == "https://example.org/tower"


def test_hover_claim_only_note_is_shown_in_run_json_and_on_the_terminal(
    tmp_path: Path, scripted
) -> None:
    records = [
        {"uid": f"h{i}", "claim": f"Claim {i}.", "label": label, "supporting_facts": [["T", 0]]}
        for i, label in enumerate(("SUPPORTED", "NOT_SUPPORTED"))
    ]
    (tmp_path / "hover").mkdir()
    (tmp_path / "hover" / "dev.json").write_text(json.dumps(records), encoding="utf-8")
    name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
    out = tmp_path / "run"
    args = ["bench", "--out", str(out), "--method", "cot", "--dataset", "hover"]
    result = runner.invoke(app, [*args, "--data-dir", str(tmp_path), "--model", name])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    note = "hover: no wiki_wo_links.db beside the claims: claim-only (no evidence)"
    assert metrics["run"]["notes"] == [note]
    assert run["dataset"] == "hover"
    assert f"note: {note}" in result.output.replace("\n", " ")
    assert f"Note: {note}" in (out / "report.md").read_text(encoding="utf-8")


def test_medqa_without_the_pubmed_index_names_index_corpus(
    tmp_path: Path, data_home: Path, scripted
) -> None:
    question = {
        "question": "Which vitamin?",
        "options": {"A": "C", "B": "D", "C": "K", "D": "B12"},
        "answer_idx": "B",
    }
    (tmp_path / "medqa").mkdir()
    (tmp_path / "medqa" / "test.jsonl").write_text(json.dumps(question) + "\n", "utf-8")
    name, model = scripted([], default="Reasoned.\n**SUPPORTS**")
    args = ["bench", "--out", str(tmp_path / "run"), "--method", "tool-mad", "--dataset", "medqa"]
    result = runner.invoke(app, [*args, "--data-dir", str(tmp_path), "--model", name])
    one_line_error(result, "factdebate index-corpus pubmedqa")
    assert model.prompts == []


def test_gen_answers_writes_no_key_from_a_model_url(tmp_path: Path) -> None:
    import asyncio

    from factdebate.bench.long_form import agen_answers
    from factdebate.datasets import PromptItem
    from tests.fake_provider import fake_provider

    with fake_provider(lambda prompt, body: "A long answer.") as provider:
        model = provider.model("m").replace("http://", f"http://user:{KEY}@")
        out = tmp_path / "answers"
        summary = asyncio.run(
            agen_answers(
                [PromptItem("p-1", "Tell me about towers.")],
                out,
                model=model,
                dataset="longfact",
                concurrency=1,
                max_output_tokens=64,
                timeout=30.0,
            )
        )
    assert summary["new"] == 1, summary
    for path in out.iterdir():
        assert KEY not in path.read_text(encoding="utf-8"), path.name


def test_a_claim_holding_markup_is_shown_as_text(scripted) -> None:
    name, _ = scripted([], default="Reasoned.\n**SUPPORTS**")
    claim = "The [/] sky [bold]is[/bold] blue."
    result = runner.invoke(app, ["verify", claim, "--method", "cot", "--model", name])
    assert result.exit_code == 0, result.output
    assert claim in result.output
