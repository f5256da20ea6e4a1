"""True/false atomic claims of LLM responses: Factcheck-Bench, FacTool, BingCheck and FELM."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from factdebate.datasets.reading import (
    collect,
    data_folder,
    jsonl_records,
    load_records,
    locate,
    make_evidence,
    nfc,
    record_id,
    str_field,
    str_list_field,
    truth,
)
from factdebate.datasets.records import AtomicClaimItem, DatasetError, LoadedDataset, LoadIssue
from factdebate.tools.core.records import Evidence

BINGCHECK_FILES = {
    "balanced": "data_claim_label.jsonl",
    "binary": "data_full.jsonl",
    "full": "bingcheck.jsonl",
}
"""BingCheck's subsets and the file each is read from."""

_BINGCHECK_FOUR_WAY = {"supported": True, "not supported": False, "refuted": False}

# --------------------------------------------------------------------------- FacTool


def load_factool_qa(path: str | Path | None = None) -> LoadedDataset[AtomicClaimItem]:
    """Load FacTool knowledge-QA atomic claims (233; no evidence text is shipped).

    Args:
        path: The ``factool`` folder (default: shared datasets).

    Returns:
        Claims with id ``{response_index}-{claim_index}`` and meta ``question``,
        ``response`` and the response-level ``response_label``.

    """
    file = data_folder(path, "factool") / "knowledge_qa.jsonl"

    def make(line: int, rec: Any) -> list[AtomicClaimItem]:
        context = {
            "question": str_field(rec, "prompt"),
            "response": str_field(rec, "response"),
            "response_label": rec.get("label"),
        }
        items = []
        for k, claim in enumerate(rec["claims"]):
            if not isinstance(claim["label"], bool):
                raise ValueError(f"claim {k}: label must be true/false, got {claim['label']!r}")
            items.append(
                AtomicClaimItem(
                    f"{line - 1}-{k}", str_field(claim, "claim"), claim["label"], [], dict(context)
                )
            )
        return items

    issues: list[LoadIssue] = []
    groups = collect(jsonl_records(file, issues), file, issues, make)
    return LoadedDataset("factool-qa", [item for group in groups for item in group], issues)


# --------------------------------------------------------------------------- Factcheck-Bench


def load_factcheck_bench(path: str | Path | None = None) -> LoadedDataset[AtomicClaimItem]:
    """Load Factcheck-Bench claim factuality (subtask 4) with its evidence passages.

    Evidence = the claim's passages from subtask 3 (ids ``fcb-ev{n}``, shared by
    identical passages) with their stance in ``meta["evidence_stances"]``.
    ``meta`` also holds the prompt (``question``), ``response`` and ``revised_claim``.
    Claims labelled ``not_enough_evidence`` (30) have no boolean label and are
    left out (recorded in ``notes``).

    Args:
        path: The ``factcheck_bench`` folder (default: shared datasets).

    Returns:
        631 claims (472 true / 159 false).

    """
    folder = data_folder(path, "factcheck_bench")
    issues: list[LoadIssue] = []
    passage_ids: dict[str, str] = {}
    passages: dict[str, list[tuple[Evidence, str]]] = {}
    stance_file = folder / "subtask3_claim_evidence_stance.jsonl"
    for line, rec in jsonl_records(stance_file, issues):
        if not (isinstance(rec.get("evidence"), str) and isinstance(rec.get("claim"), str)):
            issues.append(LoadIssue(str(stance_file), line, "needs string 'claim' and 'evidence'"))
            continue
        pid = passage_ids.setdefault(rec["evidence"], f"fcb-ev{len(passage_ids)}")
        passages.setdefault(nfc(rec["claim"].strip()), []).append(
            (make_evidence(pid, rec["evidence"]), str(rec.get("stance")))
        )
    context: dict[str, dict[str, Any]] = {}
    for _, rec in jsonl_records(folder / "factcheck-GPT-benchmark.jsonl", issues):
        ctx = {
            "question": rec.get("prompt"),
            "response": rec.get("response"),
            "response_factuality": rec.get("response_factuality"),
        }
        sentences = rec.get("sentences")
        for sentence in sentences.values() if isinstance(sentences, dict) else ():
            for claim in sentence.get("claims", []) if isinstance(sentence, dict) else ():
                context.setdefault(nfc(str(claim).strip()), ctx)

    skipped = 0

    def make(line: int, rec: Any) -> AtomicClaimItem | None:
        nonlocal skipped
        claim, label = str_field(rec, "claim"), rec["label"]
        if label == "not_enough_evidence":
            skipped += 1
            return None
        if label not in ("true", "false"):
            raise ValueError(f"unknown label {label!r}")
        pairs = passages.get(claim.strip(), [])
        meta = {
            **context.get(claim.strip(), {}),
            "revised_claim": rec.get("revised_claim"),
            "evidence_stances": [s for _, s in pairs],
        }
        return AtomicClaimItem(str(line - 1), claim, label == "true", [e for e, _ in pairs], meta)

    file = folder / "subtask4_claim_factuality.jsonl"
    items = [i for i in collect(jsonl_records(file, issues), file, issues, make) if i is not None]
    notes = [f"left out {skipped} claims labelled not_enough_evidence"] if skipped else []
    return LoadedDataset("factcheck-bench", items, issues, notes)


# --------------------------------------------------------------------------- BingCheck


def load_bingcheck(
    path: str | Path | None = None, subset: str = "balanced"
) -> LoadedDataset[AtomicClaimItem]:
    """Load BingCheck claims labelled true/false (no evidence text ships with them).

    Args:
        path: The ``bingcheck`` folder or a file of it.
        subset: ``balanced`` (142 claims, 100 true / 42 false, as MAD-Fact and FactBench use),
            ``binary`` (3,623) or ``full`` (the 4-way file: supported -> true, refuted and not
            supported -> false; partially supported claims are left out and noted).

    Returns:
        Claims with ids ``{line - 1}`` and the raw label in ``meta``.

    """
    if subset not in BINGCHECK_FILES:
        raise DatasetError(f"BingCheck subset must be one of {', '.join(BINGCHECK_FILES)}")
    file = locate(path, "bingcheck", (BINGCHECK_FILES[subset],))
    partial = 0

    def make(line: int, rec: Any) -> AtomicClaimItem | None:
        nonlocal partial
        raw = rec["label"]
        key = raw.strip().lower() if isinstance(raw, str) else raw
        if key == "partially supported":
            partial += 1
            return None
        label = _BINGCHECK_FOUR_WAY[key] if key in _BINGCHECK_FOUR_WAY else truth(raw)
        return AtomicClaimItem(
            str(line - 1), str_field(rec, "claim"), label, [], {"raw_label": raw}
        )

    loaded = load_records("bingcheck", file, make)
    if partial:
        loaded.notes.append(f"left out {partial} claims labelled partially supported")
    return loaded


# --------------------------------------------------------------------------- FELM


def _felm_contents(contents: Any, links: list[str], ident: str) -> list[Evidence]:
    """Evidence from FELM's ``ref_contents``: the text of each reference (titled by its link).

    The field is a list parallel to ``ref`` (or one string); empty entries are skipped.
    """
    if isinstance(contents, str):
        contents = [contents]
    if not isinstance(contents, list):
        return []
    return [
        make_evidence(f"{ident}-content{j}", text, links[j] if j < len(links) else "")
        for j, text in enumerate(contents)
        if isinstance(text, str) and text.strip()
    ]


def load_felm(path: str | Path | None = None, domain: str = "wk") -> LoadedDataset[AtomicClaimItem]:
    """Load FELM response segments with their true/false labels (world knowledge by default).

    Reads ``all.jsonl`` (keeping records whose ``domain`` matches) or ``{domain}.jsonl``. Each
    segment of ``segmented_response`` is one claim labelled by ``labels``; ``ref`` entries that
    hold text (not a bare link) and the reference texts of ``ref_contents`` become evidence,
    links go to ``meta["ref_links"]``.

    Args:
        path: The ``felm`` folder or the file.
        domain: ``wk``, ``science``, ``math``, ``reasoning`` or ``writing_rec``.

    Returns:
        Claims with ids ``{index}-{segment}`` and the prompt (``question``) and ``response``.

    """
    file = locate(path, "felm", ("all.jsonl", f"{domain}.jsonl", f"{domain}/test.jsonl"))

    def make(line: int, rec: Any) -> list[AtomicClaimItem]:
        if rec.get("domain") not in (None, domain):
            return []
        segments, labels = str_list_field(rec, "segmented_response"), rec["labels"]
        if not isinstance(labels, list) or len(labels) != len(segments):
            raise ValueError("labels must be a list as long as segmented_response")
        refs = [r for r in rec.get("ref") or [] if isinstance(r, str) and r.strip()]
        links = [r for r in refs if re.match(r"^\s*https?://\S+\s*$", r)]
        ident = record_id(rec, line - 1, "index")
        evidence = [
            make_evidence(f"{ident}-ref{j}", r) for j, r in enumerate(refs) if r not in links
        ]
        evidence += _felm_contents(rec.get("ref_contents"), links, ident)
        context = {
            "question": rec.get("prompt"),
            "response": rec.get("response"),
            "ref_links": links,
        }
        return [
            AtomicClaimItem(f"{ident}-{k}", nfc(seg), truth(lab), list(evidence), dict(context))
            for k, (seg, lab) in enumerate(zip(segments, labels, strict=True))
            if seg.strip()
        ]

    return load_records(f"felm-{domain}", file, make)
