"""Ask a model for a labelled answer and read the label; a failure becomes an error record."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel

from graphs.state import ErrorRecord, RoleCost
from nodes.parse import ParseFailure, parse_label
from prompts.common import LABELS_3
from tools.llm import ask


@dataclass
class LabelledReply:
    """A model answer, the label read from it (None if unreadable), its cost and errors."""

    text: str
    label: str | None
    cost: dict[str, RoleCost]
    errors: list[ErrorRecord] = field(default_factory=list)


async def ask_label(
    model: BaseChatModel,
    prompt: str,
    *,
    role: str,
    agent: str,
    stage: str,
    round_no: int,
    timeout: float,
    retries: int = 2,
    labels: tuple[str, ...] = LABELS_3,
) -> LabelledReply:
    """Ask ``prompt`` and parse the label on the last line; a failure is an error record.

    The embedded local model is held to that format by a grammar (see ``label_grammar``).
    """
    from tools.local_llm import LocalChatModel, label_grammar

    if isinstance(model, LocalChatModel):
        model = model.bind(grammar=label_grammar(labels))  # type: ignore[assignment]
    reply = await ask(
        model,
        prompt,
        role=role,
        agent=agent,
        stage=stage,
        round_no=round_no,
        timeout=timeout,
        retries=retries,
    )
    errors = list(reply.errors)
    label: str | None = None
    if reply.text is not None:
        parsed = parse_label(reply.text, labels)
        if isinstance(parsed, ParseFailure):
            errors.append(
                ErrorRecord(
                    round=round_no,
                    agent=agent,
                    stage=stage,
                    kind="parse_error",
                    message=parsed.reason,
                    raw=parsed.raw[:2000],
                )
            )
        else:
            label = parsed
    return LabelledReply(reply.text or "", label, reply.cost, errors)
