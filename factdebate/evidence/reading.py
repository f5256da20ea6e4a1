"""The one reader of evidence files: card, tables, zips and journal lines, bounded and checked.

Every file is read with a size limit and parsed through a pydantic model: the card
(``evidence.json``) with a nesting bound and its content hash checked against the tables;
``calls.parquet`` and ``documents.parquet`` with their column types read from the schema
first, their declared sizes (row groups, rows) checked before a page is decoded, and their
decoded text counted batch by batch before any row is built (a dictionary-encoded column
of one long value repeated is refused, not unpacked); a snapshot zip's members bounded in
size and in how far they unpack. A damaged file is one ``EvidenceError`` line naming the
file and the row, column or field and why; nothing on disk is ever changed by reading.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from factdebate.evidence.format import FORMAT, KIND, CallRecord, Document, EvidenceError
from factdebate.tools.core.json_text import json_problem, parse_json

MAX_CARD_BYTES = 1024 * 1024
MAX_PART_BYTES = 4 * 1024**3
"""One table's file (a large run's documents), as stored."""
MAX_TABLE_BYTES = 4 * 1024**3
"""One table's text once decoded (what its rows hold in memory), and at most
``MAX_DECLARED_RATIO`` times the table's own size (``MIN_DECLARED_BYTES`` for a small one)."""
MAX_ROWS = 20_000_000
"""Rows of one table (calls or documents)."""
MAX_DECLARED_RATIO = 100
"""How many times its own size a table may say its pages unpack to (zstd text: 3 to 10)."""
MIN_DECLARED_BYTES = 32 * 1024**2
"""A small table may always declare this much."""
MAX_ZIP_RATIO = 4
"""A snapshot file's member may unpack to this many times its packed size (ours are stored)."""
MAX_DEPTH = 32
"""Nesting of a card, a call's options, a journal line or a knowledge-store line."""
MAX_OPTIONS_CHARS = 64 * 1024
MAX_LIST = 100_000
"""Entries of one list in a card (datasets, backends, runs)."""
BATCH_ROWS = 2048
SHORT = 200


def one_line(text: object, limit: int = SHORT) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters."""
    return " ".join(str(text).split())[:limit]


def depth_of(value: Any, bound: int = MAX_DEPTH) -> int:
    """How deeply ``value`` nests lists and objects (counting stops past ``bound``)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            if level > bound:
                return level
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, level + 1) for child in children)
    return deepest


def json_value(text: str | bytes, where: str, line: bool = False) -> Any:
    """Parse JSON nested at most ``MAX_DEPTH`` deep, or one ``EvidenceError`` naming ``where``.

    ``line``: the text is one line of a JSON-lines file (its problem is placed by column).
    """
    bound = MAX_DEPTH
    try:
        value = parse_json(text)
    except UnicodeDecodeError as exc:
        raise EvidenceError(f"{where}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        noun = "a JSON line" if line else "JSON"
        raise EvidenceError(f"{where}: not {noun} ({json_problem(exc, line=not line)})") from None
    if depth_of(value, bound) > bound:
        raise EvidenceError(f"{where}: nested deeper than {bound} levels")
    return value


def why(exc: ValidationError) -> str:
    """A validation failure in a few words: the field and what is wrong, first errors only."""
    parts = []
    for error in exc.errors()[:2]:
        place = ".".join(str(p) for p in error["loc"]) or "value"
        parts.append(f"{place}: {one_line(error['msg'], 120)}")
    return "; ".join(parts)


class _Model(BaseModel):
    """Fields checked strictly; keys not named are kept as they are."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


Text = Annotated[str, Field(max_length=100_000)]
Names = Annotated[list[Annotated[str, Field(max_length=1000)]], Field(max_length=MAX_LIST)]
Count = Annotated[int, Field(ge=0)]


class RunFacts(_Model):
    """One exported run: its folder name, method and dataset."""

    run: Text = ""
    method: Text | None = None
    dataset: Text | None = None


class Card(_Model):
    """``evidence.json``: what the log or snapshot is, where it comes from, its content hash."""

    kind: Literal["factdebate-evidence"]
    format: Annotated[int, Field(ge=1)]
    project_version: Text = ""
    datasets: Names = []
    backends: Names = []
    scopes: Annotated[list[Literal["exact", "claim"]], Field(max_length=2)] = ["exact", "claim"]
    read: dict[str, Text] | None = None
    runs: Annotated[list[RunFacts], Field(max_length=MAX_LIST)] = []
    exported_from: Names = []
    first: Text = ""
    last: Text = ""
    calls: Count | None = None
    documents: Count | None = None
    digest: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None


def read_card(raw: bytes, where: str) -> Card:
    """The card's facts, refusing one that is not ours, from a newer version, or damaged."""
    card = json_value(raw, f"{where}: evidence.json")
    if not isinstance(card, dict) or card.get("kind") != KIND:
        raise EvidenceError(f"{where}: not a factdebate evidence snapshot")
    version = card.get("format")
    if not isinstance(version, int) or isinstance(version, bool):
        raise EvidenceError(f"{where}: its format version is missing")
    if version > FORMAT:
        raise EvidenceError(
            f"{where}: written in evidence format {version} by a newer factdebate; this one "
            f"reads up to format {FORMAT}: upgrade factdebate"
        )
    try:
        return Card.model_validate(card)
    except ValidationError as exc:
        raise EvidenceError(f"{where}: evidence.json {why(exc)}") from None


def check_options(text: str) -> str:
    """A call's options: "" or a JSON object, small and shallow (``ValueError`` otherwise)."""
    if not text:
        return text
    if len(text) > MAX_OPTIONS_CHARS:
        raise ValueError(f"over {MAX_OPTIONS_CHARS} characters")
    try:
        value = parse_json(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({json_problem(exc, line=False)})") from None
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    if depth_of(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return text


def _text(value: Any) -> Any:
    return "" if value is None else value


Hash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class CallRow(_Model):
    """One row of ``calls.parquet`` (or a journal's call): texts, k, documents and scores."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    item: str
    claim: str
    agent: str
    tool: str
    backend: str
    query: str
    k: Annotated[int, Field(ge=0, le=1_000_000)]
    collection: str
    generation: str
    time: str
    docs: Annotated[list[Hash], Field(max_length=1_000_000)]
    scores: Annotated[list[float], Field(max_length=1_000_000)]
    options: str = ""
    origin: str = "live"
    dataset: str = ""

    @field_validator(
        "item",
        "claim",
        "agent",
        "tool",
        "backend",
        "query",
        "collection",
        "generation",
        "time",
        "options",
        "origin",
        "dataset",
        mode="before",
    )
    @classmethod
    def _no_text(cls, value: Any) -> Any:
        return _text(value)

    @field_validator("docs", "scores", mode="before")
    @classmethod
    def _no_list(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("k", mode="before")
    @classmethod
    def _no_k(cls, value: Any) -> Any:
        return 0 if value is None else value

    @field_validator("options")
    @classmethod
    def _options(cls, value: str) -> str:
        return check_options(value)

    @field_validator("scores")
    @classmethod
    def _finite(cls, value: list[float]) -> list[float]:
        if not all(math.isfinite(s) for s in value):
            raise ValueError("a score is not a finite number")
        return value

    def record(self) -> CallRecord:
        """The call as the log holds it."""
        fields = self.model_dump()
        fields["docs"], fields["scores"] = tuple(self.docs), tuple(self.scores)
        fields["origin"] = fields["origin"] or "live"
        return CallRecord(**fields)


class DocumentRow(_Model):
    """One row of ``documents.parquet`` (or a journal's document)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    hash: Hash
    id: str
    title: str
    text: str
    url: str
    source: str

    @field_validator("id", "title", "text", "url", "source", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return _text(value)

    def document(self) -> Document:
        """The document as the log holds it."""
        return Document(self.hash, self.id, self.title, self.text, self.url, self.source)


def _is_text(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t))


def _is_int(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_integer(t) or pa.types.is_null(t))


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def of(t: Any) -> bool:
        import pyarrow as pa

        if pa.types.is_null(t):
            return True
        return bool((pa.types.is_list(t) or pa.types.is_large_list(t)) and check(t.value_type))

    return of


def _is_number(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_null(t))


Column = tuple[str, Callable[[Any], bool], str, bool]
"""A table column: name, type check, the type in words, whether it must be there."""
CALL_COLUMNS: tuple[Column, ...] = (
    *((n, _is_text, "text", True) for n in ("item", "claim", "agent", "tool", "backend")),
    *((n, _is_text, "text", True) for n in ("query", "collection", "generation", "time")),
    ("k", _is_int, "a whole number", True),
    ("docs", _list_of(_is_text), "a list of text", True),
    ("scores", _list_of(_is_number), "a list of numbers", True),
    ("options", _is_text, "text", True),
    ("origin", _is_text, "text", True),
    ("dataset", _is_text, "text", False),
)
DOCUMENT_COLUMNS: tuple[Column, ...] = tuple(
    (n, _is_text, "text", True) for n in ("hash", "id", "title", "text", "url", "source")
)


def _decoded_bytes(array: Any) -> int:
    """Bytes of text ``array`` holds once decoded (a dictionary's values counted per use)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        return sum(_decoded_bytes(chunk) for chunk in array.chunks)
    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary)
        used = pc.take(lengths, array.indices)
        return int(pc.sum(used).as_py() or 0) + 8 * len(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _decoded_bytes(array.flatten()) + 8 * len(array)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return int(pc.sum(pc.binary_length(array)).as_py() or 0) + 8 * len(array)
    return 8 * len(array)


def _dictionary_paths(schema: Any, names: list[str]) -> list[str]:
    """The column paths of text leaves, read as dictionaries (counted before decoding)."""
    import pyarrow as pa

    paths = []
    for name in names:
        kind = schema.field(name).type
        if _is_text(kind) and not pa.types.is_null(kind):
            paths.append(name)
        elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and _is_text(kind.value_type):
            paths.append(f"{name}.list.element")
    return paths


def _open_table(raw: bytes, name: str, where: str, columns: tuple[Column, ...]) -> Any:
    """The Parquet file, its schema and declared sizes checked before any page is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(io.BytesIO(raw))
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise EvidenceError(
            f"{where}: {name} is not a readable Parquet table ({one_line(exc)})"
        ) from None
    missing = [c for c, _, _, needed in columns if needed and c not in schema.names]
    if missing:
        raise EvidenceError(f"{where}: {name} lacks the column(s) {', '.join(missing)}")
    for column, check, words, _ in columns:
        if column in schema.names and not check(schema.field(column).type):
            raise EvidenceError(
                f"{where}: {name} column {column} is {one_line(schema.field(column).type, 60)}, "
                f"not {words}"
            )
    if meta.num_rows > MAX_ROWS or meta.num_rows < 0:
        raise EvidenceError(f"{where}: {name} says it holds {meta.num_rows} rows (most {MAX_ROWS})")
    declared = 0
    for n in range(meta.num_row_groups):
        group = meta.row_group(n)
        declared += max(0, int(group.total_byte_size))
        for c in range(group.num_columns):
            declared += max(0, int(group.column(c).total_uncompressed_size))
    allowed = min(MAX_TABLE_BYTES, max(MIN_DECLARED_BYTES, MAX_DECLARED_RATIO * len(raw)))
    if declared > allowed:
        raise EvidenceError(
            f"{where}: {name} says it unpacks to {declared} bytes from {len(raw)} (most "
            f"{allowed}): a damaged or hostile table, refused before unpacking"
        )
    wanted = [c for c, _, _, _ in columns if c in schema.names]
    try:
        handle = pq.ParquetFile(  # no read-ahead: Arrow's IO pool threads are never started
            io.BytesIO(raw), read_dictionary=_dictionary_paths(schema, wanted), pre_buffer=False
        )
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise EvidenceError(
            f"{where}: {name} is not a readable Parquet table ({one_line(exc)})"
        ) from None
    return handle, wanted


def table_rows(
    raw: bytes, name: str, where: str, columns: tuple[Column, ...]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, row)`` of one Parquet table, its decoded size counted before any row.

    A first pass counts the text every batch decodes to (dictionary values once per use,
    never unpacked); only a table within the bound is read again into rows. Both passes run
    on this thread (no Arrow thread pool) and the file is closed however the read ends, so no
    native thread or reader outlives it into the interpreter's teardown (an abort at exit).

    Raises:
        EvidenceError: not Parquet, a column missing or of the wrong type, sizes over the
            bounds (declared or decoded), or a page that cannot be read.
    """
    import pyarrow as pa

    handle, wanted = _open_table(raw, name, where, columns)
    allowed = min(MAX_TABLE_BYTES, max(MIN_DECLARED_BYTES, MAX_DECLARED_RATIO * len(raw)))
    try:
        decoded = 0
        for batch in handle.iter_batches(BATCH_ROWS, columns=wanted, use_threads=False):
            decoded += sum(_decoded_bytes(column) for column in batch.columns)
            if decoded > allowed:
                raise EvidenceError(
                    f"{where}: {name} decodes to over {allowed} bytes of text from {len(raw)}: "
                    "a damaged or hostile table, refused before unpacking"
                )
        rows: list[dict[str, Any]] = []
        for batch in handle.iter_batches(BATCH_ROWS, columns=wanted, use_threads=False):
            rows.extend(batch.to_pylist())
    except EvidenceError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise EvidenceError(
            f"{where}: {name} is not a readable Parquet table ({one_line(exc)})"
        ) from None
    finally:
        handle.close()
    yield from enumerate(rows, 1)


def call_rows(raw: bytes, where: str, name: str = "calls.parquet") -> list[CallRecord]:
    """The calls of ``calls.parquet``, each row checked (``EvidenceError`` names the row)."""
    found = []
    for number, row in table_rows(raw, name, where, CALL_COLUMNS):
        try:
            found.append(CallRow.model_validate(row).record())
        except ValidationError as exc:
            raise EvidenceError(f"{where}: {name} row {number}: {why(exc)}") from None
    return found


def document_rows(raw: bytes, where: str, name: str = "documents.parquet") -> list[Document]:
    """The documents of ``documents.parquet``, each row checked."""
    found = []
    for number, row in table_rows(raw, name, where, DOCUMENT_COLUMNS):
        try:
            found.append(DocumentRow.model_validate(row).document())
        except ValidationError as exc:
            raise EvidenceError(f"{where}: {name} row {number}: {why(exc)}") from None
    return found


def zip_members(path: Any, names: dict[str, int]) -> dict[str, bytes]:
    """The members ``names`` (name: size limit) of the zip at ``path``, each bounded unpacked.

    A member declared larger than its limit, or unpacking to more than ``MAX_ZIP_RATIO``
    times its packed size, is refused before it is read; the read itself stops at the
    declared size.

    Raises:
        EvidenceError: not a zip, truncated, or a member over its bounds.
    """
    where = str(path)
    parts: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                limit = names.get(info.filename)
                if limit is None:
                    continue
                if info.file_size > limit:
                    raise EvidenceError(f"{where}: {info.filename} is over {limit} bytes")
                packed = max(info.compress_size, 1)
                if info.file_size > MAX_ZIP_RATIO * packed + 64 * 1024:
                    raise EvidenceError(
                        f"{where}: {info.filename} unpacks {packed} bytes to {info.file_size} "
                        "(a decompression bomb?): refused before unpacking"
                    )
                with archive.open(info) as member:
                    data = member.read(info.file_size + 1)
                if len(data) > info.file_size:
                    raise EvidenceError(f"{where}: {info.filename} is larger than it says")
                parts[info.filename] = data
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise EvidenceError(
            f"{where}: not an evidence snapshot file, or a truncated one ({one_line(exc, 160)})"
        ) from None
    except NotImplementedError as exc:  # a compression method zipfile cannot unpack
        raise EvidenceError(f"{where}: {one_line(exc, 160)}") from None
    return parts


class JournalDocument(_Model):
    """A journal line holding one new document."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    doc: DocumentRow


class JournalCall(_Model):
    """A journal line holding one call."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    call: CallRow


def journal_entry(line: str) -> Document | CallRecord:
    """One journal line as a document or a call (``ValueError`` for a torn or damaged one)."""
    try:
        value = json_value(line, "journal line", line=True)
    except EvidenceError as exc:
        raise ValueError(str(exc)) from None
    if isinstance(value, dict) and "doc" in value:
        return JournalDocument.model_validate(value).doc.document()
    return JournalCall.model_validate(value).call.record()
