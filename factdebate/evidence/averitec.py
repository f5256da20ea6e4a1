"""AVeriTeC's knowledge store (scraped pages per claim) as frozen evidence served in claim scope.

The 2024 shared task ships, per split, one file per claim named ``<claim_id>.json`` that
holds JSON lines, one scraped page each: ``claim_id``, ``type`` (the search that found it),
``query``, ``url`` and ``url2text`` (the page's text as a list of sentences; empty when the
page could not be scraped). The claim id is the claim's index in the split's file, which is
also the id factdebate's ``averitec`` dataset gives each claim.

A page's sentences become passages of consecutive sentences (up to ``PASSAGE_CHARS``), each
with the id and URL ``<page url>#p<n>``, so a claim's pool is ranked passage by passage, as the
shared task's baseline ranks sentences.
Reads are bounded per claim (``MAX_PAGES``, ``MAX_SENTENCES``, ``MAX_PASSAGES``): a claim's file
is read no further once one is reached, and a line over ``MAX_LINE_BYTES`` is skipped (the card
counts both). A run that names its items loads only those claims' files.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factdebate.evidence.format import CallRecord, Document, EvidenceError, Snapshot, doc_hash
from factdebate.evidence.reading import json_value, why
from factdebate.evidence.store import project_version, register_loader
from factdebate.tools.core.evidence_hook import normalise_query
from factdebate.tools.core.files import open_regular

BACKEND = "knowledge-store"
SOURCE = "knowledge-store"
DATASET = "averitec"
MAX_FILES = 100_000
"""Most claim files in one store (the 2024 test split has 2,215)."""
MAX_LINE_BYTES = 32 * 1024**2
"""A page's line over this is skipped (a scraped PDF of thousands of pages), not read whole."""
MAX_PAGES = 1000
"""Pages read per claim: the shared task scraped up to 1,000 search results per claim."""
MAX_SENTENCES = 200
"""Sentences read per page (navigation and footers sit at the end of long pages)."""
MAX_SENTENCE_CHARS = 1000
"""A longer "sentence" (a table or a page without punctuation) is cut to this."""
MAX_PASSAGES = 1500
"""Passages kept per claim; the pages after the claim reaches it are not read."""
PASSAGE_CHARS = 800
"""Consecutive sentences are joined into passages of up to this many characters."""
MAX_URL_CHARS = 8192
_CLAIM_FILE = re.compile(r"^(\d{1,9})\.jsonl?$")


def claim_files(folder: Path) -> dict[str, Path]:
    """The claim files of a knowledge-store folder by claim id (``<id>.json`` or ``.jsonl``)."""
    found: dict[str, Path] = {}
    for n, path in enumerate(sorted(folder.iterdir())):
        if n >= 4 * MAX_FILES:
            break
        match = _CLAIM_FILE.match(path.name)
        if match and path.is_file():
            found[str(int(match.group(1)))] = path
            if len(found) > MAX_FILES:
                raise EvidenceError(f"{folder}: over {MAX_FILES} claim files")
    return found


def _lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, bytes)`` of each line; ``None`` for a line over ``MAX_LINE_BYTES``."""
    with open_regular(path, "knowledge-store file", EvidenceError) as handle:
        lineno = 0
        while True:
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            lineno += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # read past the rest of the line
                    raw = handle.readline(1024**2)
                yield lineno, None
                continue
            yield lineno, raw


class Page(BaseModel):
    """One knowledge-store line: the page's url and its sentences (other keys kept)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    url: Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS)]
    url2text: list[str]
    claim_id: str | int | None = None


def _page(raw: bytes, where: str, claim_id: str) -> tuple[str, list[str]]:
    """``(url, sentences)`` of one line, or ``EvidenceError`` naming ``where``."""
    page: Any = json_value(raw, where, line=True)
    if not isinstance(page, dict):
        raise EvidenceError(f"{where}: a page must be a JSON object with url and url2text")
    if not isinstance(page.get("url"), str) or not page["url"].strip():
        raise EvidenceError(f"{where}: the page has no url")
    try:
        checked = Page.model_validate(page)
    except ValidationError as exc:
        if any(e["loc"][:1] == ("url2text",) for e in exc.errors()):
            raise EvidenceError(
                f"{where}: url2text must be a list of sentences (strings)"
            ) from None
        raise EvidenceError(f"{where}: {why(exc)}") from None
    held = checked.claim_id
    if held is not None and str(held).strip() != claim_id:
        raise EvidenceError(
            f"{where}: claim_id {str(held)[:20]!r} does not match the file's claim {claim_id}"
        )
    return checked.url.strip(), checked.url2text[:MAX_SENTENCES]


def passages(sentences: list[str]) -> list[str]:
    """Consecutive sentences joined into passages of up to ``PASSAGE_CHARS`` characters."""
    out: list[str] = []
    current = ""
    for sentence in sentences:
        text = " ".join(sentence.split())[:MAX_SENTENCE_CHARS]
        if not text:
            continue
        if current and len(current) + 1 + len(text) > PASSAGE_CHARS:
            out.append(current)
            current = ""
        current = f"{current} {text}" if current else text
    if current:
        out.append(current)
    return out


def _claim_pool(path: Path, claim_id: str, counts: dict[str, int]) -> list[Document]:
    """The passages of one claim's pages, in file order, each distinct text once."""
    docs: list[Document] = []
    seen: set[str] = set()
    for pages, (lineno, raw) in enumerate(_lines(path)):
        if pages >= MAX_PAGES or len(docs) >= MAX_PASSAGES:
            counts["claims_cut"] += 1  # the rest of the file is not read
            break
        if raw is None:
            counts["pages_too_long"] += 1
            continue
        if not raw.strip():
            continue
        url, sentences = _page(raw, f"{path}:{lineno}", claim_id)
        for n, text in enumerate(passages(sentences)):
            key = normalise_query(text)
            if key in seen or len(docs) >= MAX_PASSAGES:
                continue
            seen.add(key)
            doc_id = f"{url}#p{n + 1}"  # a link to the page; its own URL as recorded docs have
            docs.append(
                Document(doc_hash(doc_id, "", text, doc_id), doc_id, "", text, doc_id, SOURCE)
            )
    return docs


def looks_like_store(path: Path) -> bool:
    """Whether ``path`` is a folder of claim files whose first line has ``url2text``."""
    if not path.is_dir():
        return False
    for name in sorted(p.name for p in path.iterdir() if _CLAIM_FILE.match(p.name))[:1]:
        try:
            with open_regular(path / name, "knowledge-store file", EvidenceError) as handle:
                first = handle.readline(MAX_LINE_BYTES)
        except EvidenceError:
            return False
        return b'"url2text"' in first
    return False


def load_knowledge_store(
    folder: Path | str,
    claim_ids: Collection[str] | None = None,
    claims: dict[str, str] | None = None,
) -> Snapshot:
    """An AVeriTeC knowledge-store folder as a snapshot that serves ``claim`` scope.

    Each claim becomes one recorded ``search`` call (backend ``knowledge-store``, item = the
    claim id) returning its passages; a replay in claim scope ranks them for each query.

    Args:
        folder: The folder of ``<claim_id>.json`` files (an unpacked split of the store).
        claim_ids: Load only these claims (default: every file in the folder).
        claims: Claim texts by id, so a run that knows the text but not the id finds its pool.

    Raises:
        EvidenceError: the folder holds no claim file, or a file is malformed (one line
            naming the file and line).
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise EvidenceError(f"{root}: not a knowledge-store folder")
    files = claim_files(root)
    if not files:
        raise EvidenceError(f"{root}: holds no <claim_id>.json knowledge-store files")
    wanted = sorted(
        (k for k in files if claim_ids is None or k in {str(c) for c in claim_ids}), key=int
    )
    snapshot = Snapshot()
    counts = {"claims_cut": 0, "pages_too_long": 0}
    for claim_id in wanted:
        pool = _claim_pool(files[claim_id], claim_id, counts)
        for doc in pool:
            snapshot.documents[doc.hash] = doc
        snapshot.calls.append(
            CallRecord(
                item=claim_id,
                claim=(claims or {}).get(claim_id, ""),
                agent="",
                tool="search",
                backend=BACKEND,
                query="",
                k=len(pool),
                collection="",
                generation="",
                time="",
                docs=tuple(d.hash for d in pool),
                scores=tuple(0.0 for _ in pool),
                origin="snapshot",
                dataset=DATASET,
            )
        )
    snapshot.info = {
        "project_version": project_version(),
        "datasets": [DATASET],
        "backends": [BACKEND],
        "scopes": ["claim"],
        "knowledge_store": {"folder": str(root), "claims": len(wanted), **counts},
    }
    return snapshot


register_loader(looks_like_store, load_knowledge_store)
