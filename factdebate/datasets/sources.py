"""Each dataset's official release: source, licence, files read, and what `datasets get` fetches."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from factdebate.datasets.download import Clock, Download, Limits, fetch
from factdebate.datasets.reading import jsonl_records
from factdebate.datasets.records import DatasetError, LoadIssue
from factdebate.tools.core.files import write_atomic


@dataclass(frozen=True, kw_only=True)
class Release:
    """A dataset's official release.

    Attributes:
        source: The release's home page or repository.
        licence: Its licence, as the release states it.
        files: The files its loader reads, under the dataset's folder.
        downloads: The official files ``datasets get`` fetches (empty: fetched by hand).
        build: Turns the downloaded files into ``files`` (None: they are ``files``).
        how: For a release fetched by hand, how to get it, in one line.

    """

    source: str
    licence: str
    files: tuple[str, ...]
    downloads: tuple[Download, ...] = ()
    build: Callable[[Path], None] | None = None
    how: str = ""


def _raw(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_SYMMETRIC = ("TalSchuster/FeverSymmetric", "fa25d17e73ea0694edc78133ec654b9f32f6db73")

# FEVER's tokenised text back to plain text (the brackets and spacing of its Wikipedia dump).
_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-COLON-": ":", "--": "–"}
_SPACE_BEFORE = re.compile(r" ([,.;:!?)\]%]|'s\b|n't\b|'')")
_SPACE_AFTER = re.compile(r"([(\[$]|``) ")


def plain_text(tokenised: str) -> str:
    """FEVER's tokenised sentence as plain text ("Paris -LRB- France -RRB- ." -> "Paris (France).").

    FEVER's text keeps Wikipedia's tokens: brackets spelled out, spaces around punctuation.
    """
    text = " ".join(_TOKENS.get(token, token) for token in tokenised.split())
    text = _SPACE_AFTER.sub(r"\1", _SPACE_BEFORE.sub(r"\1", text))
    return text.replace("``", '"').replace("''", '"')


def _original(record: dict[str, Any]) -> bool:
    """A FEVER-Symmetric pair taken from FEVER itself (its synthetic pairs carry a suffix)."""
    ident = str(record.get("id", ""))
    return not (len(ident) > 7 and ident[-7:] in ("0000002", "0000003", "0000004"))


def build_fever_mini(folder: Path) -> None:
    """Write ``claims.jsonl`` and ``corpus.jsonl`` from FEVER-Symmetric's original pairs.

    Each original pair (a real FEVER claim and its real Wikipedia evidence sentence; the
    synthetic pairs are left out) gives one claim whose gold document is its sentence, and
    every sentence is a document of the corpus. Labels are SUPPORTS and REFUTES only.
    """
    issues: list[LoadIssue] = []
    claims: list[dict[str, Any]] = []
    sentences: dict[str, str] = {}
    for split in ("dev", "test"):
        for _, record in jsonl_records(folder / f"fever_symmetric_{split}.jsonl", issues):
            if not _original(record):
                continue
            text = plain_text(str(record.get("evidence", "")))
            doc_id = sentences.setdefault(text, f"fev{len(sentences) + 1:04d}")
            claims.append(
                {
                    "id": int(record["id"]),
                    "claim": plain_text(str(record["claim"])),
                    "label": record["label"],
                    "gold_doc_ids": [doc_id],
                    "source": f"FEVER-Symmetric v0.2 original pair ({split})",
                }
            )
    if issues or not claims:
        raise DatasetError(f"cannot build fever-mini from {folder}: {issues[:1] or 'no pairs'}")
    docs = [{"doc_id": doc_id, "text": text} for text, doc_id in sentences.items()]
    write_atomic(folder / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in docs))
    write_atomic(folder / "claims.jsonl", "".join(json.dumps(c) + "\n" for c in claims))


_FEVER = "CC BY-SA 3.0 (Wikipedia text; FEVER's annotations)"

RELEASES: dict[str, Release] = {
    "scifact": Release(
        source="https://github.com/allenai/scifact",
        licence="CC BY 4.0 (claims), ODC-By 1.0 (abstracts)",
        files=("claims_dev.jsonl", "claims_train.jsonl", "corpus.jsonl"),
        how="the release's data.tar.gz, with a claim-level `label` added to each claim",
    ),
    "fever-mini": Release(
        source="https://github.com/TalSchuster/FeverSymmetric (FEVER: https://fever.ai)",
        licence=_FEVER + "; FEVER-Symmetric's DATA_LICENSE is copied beside the files",
        files=("claims.jsonl", "corpus.jsonl"),
        downloads=(
            Download(
                _raw(*_SYMMETRIC, "symmetric_v0.2/fever_symmetric_dev.jsonl"),
                "fever_symmetric_dev.jsonl",
                "1d43d016da9264de2139cd10edd459ffbeac84f1fd85d60b70ab6ef63d283f81",
                466743,
            ),
            Download(
                _raw(*_SYMMETRIC, "symmetric_v0.2/fever_symmetric_test.jsonl"),
                "fever_symmetric_test.jsonl",
                "b2ff560615bd3337c858bc5b09256d04f39aaa034aaae2351bb2d6345c110f83",
                485280,
            ),
            Download(
                _raw(*_SYMMETRIC, "DATA_LICENSE"),
                "DATA_LICENSE",
                "742d3104ce5632387650a5d1b03c57d938a4bccae7276f6ee615ed21809295d4",
                512,
            ),
        ),
        build=build_fever_mini,
    ),
    "averitec": Release(
        source="https://github.com/MichSchli/AVeriTeC",
        licence="CC BY-NC 4.0",
        files=("dev.json",),
        downloads=(
            Download(
                _raw(
                    "MichSchli/AVeriTeC",
                    "7c62d1ec8df3fb560d6efe2b85fa191135636f81",
                    "data/dev.json",
                ),
                "dev.json",
                "499793726b4a5406780928a3d9dedc48d6dd53de778f22437d129cacdb08e300",
                1785475,
            ),
        ),
    ),
    "ramdocs": Release(
        source="https://github.com/HanNight/RAMDocs",
        licence="MIT",
        files=("RAMDocs_test.jsonl",),
        downloads=(
            Download(
                _raw(
                    "HanNight/RAMDocs",
                    "d44454c9ebb0bf513d8236a03decc9fb58704cad",
                    "RAMDocs_test.jsonl",
                ),
                "RAMDocs_test.jsonl",
                "c67f699c97349f00cf1bd08d1dbf8ca1d0cc38c306715c93a10a4f961dcf28b7",
                1931157,
            ),
        ),
    ),
    "factcheck-bench": Release(
        source="https://github.com/yuxiaw/Factcheck-GPT",
        licence="Apache-2.0",
        files=(
            "factcheck-GPT-benchmark.jsonl",
            "subtask3_claim_evidence_stance.jsonl",
            "subtask4_claim_factuality.jsonl",
        ),
        downloads=tuple(
            Download(
                _raw("yuxiaw/Factcheck-GPT", "a9e6a04a953ad880806529c504a679dd1ad06528", path),
                path.rsplit("/", 1)[-1],
                digest,
                size,
            )
            for path, digest, size in (
                (
                    "factcheck-GPT-benchmark.jsonl",
                    "8bbf41a58ee1b7431fecd2a23f231f764e378e04edeb4d2a7a83949a7f40cf4b",
                    2754656,
                ),
                (
                    "subtasks/subtask3_claim_evidence_stance.jsonl",
                    "3bfa17d7b37bca82bcc0aacf69a8bbd85cffe117d337c95cf7c3b00e34b98d1a",
                    2214712,
                ),
                (
                    "subtasks/subtask4_claim_factuality.jsonl",
                    "b87f971ce324c87e0427f100fe24b50594b9d44e3a764490b1bef188917dbae1",
                    132598,
                ),
            )
        ),
    ),
    "factool-qa": Release(
        source="https://github.com/GAIR-NLP/factool",
        licence="Apache-2.0",
        files=("knowledge_qa.jsonl",),
        downloads=(
            Download(
                _raw(
                    "GAIR-NLP/factool",
                    "3f3914bc090b644be044b7e0005113c135d8b20f",
                    "datasets/knowledge_qa/knowledge_qa.jsonl",
                ),
                "knowledge_qa.jsonl",
                "5881926110f169c11090cd6370110353f1cb348cb0f13cd122f5a07e77b6b48f",
                39080,
            ),
        ),
    ),
    "pubmedqa": Release(
        source="https://github.com/pubmedqa/pubmedqa",
        licence="MIT",
        files=("ori_pqal.json", "test_ground_truth.json"),
        downloads=tuple(
            Download(
                _raw(
                    "pubmedqa/pubmedqa", "1cbae8e92f72f20c8d3747cbb3bf5bc53554d997", f"data/{name}"
                ),
                name,
                digest,
                size,
            )
            for name, digest, size in (
                (
                    "ori_pqal.json",
                    "8b3276be8942ebbd77f3ddcda12c1749bf0e490045a736fd8438ee40cf37a41d",
                    2584787,
                ),
                (
                    "test_ground_truth.json",
                    "939fe566f09017d13b1ca64d2ddfee0bc2374b366048152997669cccedc44d51",
                    11414,
                ),
            )
        ),
    ),
    "feverous": Release(
        source="https://fever.ai/dataset/feverous.html",
        licence="see the source",
        files=("feverous_dev_challenges.jsonl", "feverous_wikiv1.db (optional: evidence text)"),
        how="the dev claims and the Wikipedia database from the FEVEROUS page",
    ),
    "faviq-a": Release(
        source="https://github.com/faviq/faviq",
        licence="see the source",
        files=("faviq_a_set/dev.jsonl",),
        how="the A set from the FAVIQ repository's download links",
    ),
    "faviq-r": Release(
        source="https://github.com/faviq/faviq",
        licence="see the source",
        files=("faviq_r_set/dev.jsonl",),
        how="the R set from the FAVIQ repository's download links",
    ),
    "medqa": Release(
        source="https://github.com/jind11/MedQA",
        licence="see the source",
        files=("questions/US/4_options/phrases_no_exclude_test.jsonl",),
        how="the US 4-option questions of the MedQA release",
    ),
    "faitheval-unanswerable": Release(
        source="https://huggingface.co/datasets/Salesforce/FaithEval-unanswerable-v1.0",
        licence="see the dataset card",
        files=("a .parquet/.jsonl/.json file whose path names unanswerable",),
        how="the Parquet files of the Hugging Face dataset",
    ),
    "faitheval-inconsistent": Release(
        source="https://huggingface.co/datasets/Salesforce/FaithEval-inconsistent-v1.0",
        licence="see the dataset card",
        files=("a .parquet/.jsonl/.json file whose path names inconsistent",),
        how="the Parquet files of the Hugging Face dataset",
    ),
    "faitheval-counterfactual": Release(
        source="https://huggingface.co/datasets/Salesforce/FaithEval-counterfactual-v1.0",
        licence="see the dataset card",
        files=("a .parquet/.jsonl/.json file whose path names counterfactual",),
        how="the Parquet files of the Hugging Face dataset",
    ),
    "ambigdocs": Release(
        source="https://huggingface.co/datasets/yoonsanglee/AmbigDocs",
        licence="see the dataset card",
        files=("test.json",),
        how="the files of the Hugging Face dataset",
    ),
    "bingcheck": Release(
        source="Self-Checker (Li et al. 2023); no official release was found",
        licence="not stated",
        files=("data_claim_label.jsonl",),
        how="no official download exists; a copy in the same format can be placed there",
    ),
    "felm-wk": Release(
        source="https://github.com/hkust-nlp/felm",
        licence="see the source",
        files=("all.jsonl",),
        how="the world-knowledge file of the FELM release",
    ),
    "hover": Release(
        source="https://hover-nlp.github.io",
        licence="see the source",
        files=("hover_dev_release_v1.1.json", "wiki_wo_links.db (optional: supporting pages)"),
        how="the dev file of the HoVer release",
    ),
    "longfact": Release(
        source="https://github.com/google-deepmind/long-form-factuality",
        licence="CC BY 4.0 (prompts)",
        files=("the prompt .jsonl files of longfact-concepts_* and longfact-objects_*",),
        how="the repository's longfact/ folder",
    ),
}
"""Every catalog dataset's release, by name."""


def get_release(
    name: str,
    folder: Path,
    mirror: str | None,
    progress: Callable[[str, int, int], None],
    bounds: Limits | None = None,
    root: Path | None = None,
) -> list[str]:
    """Download ``name``'s official files into ``folder`` and build what its loader reads.

    ``bounds`` (the deadline and minimum rate) hold for every file together; ``root`` (the
    datasets folder) is where links stop being followed.

    Returns:
        The files downloaded now (those already there and checked are skipped).

    Raises:
        DatasetError: If the release is fetched by hand (the message says from where), or a
            download fails or is not the release's.

    """
    release = RELEASES[name]
    if not release.downloads:
        raise DatasetError(
            f"{name} is not downloaded by factdebate: get {release.how} from {release.source} "
            f"and put {', '.join(release.files)} under {folder}"
        )
    clock = Clock(bounds or Limits())
    fetched = [
        item.file
        for item in release.downloads
        if fetch(item, folder, mirror, partial(progress, item.file), clock=clock, root=root)
    ]
    if release.build is not None:
        release.build(folder)
    return fetched
