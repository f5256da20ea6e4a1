"""Serve the recorded Tool-MAD debates (../shared/recorded) to today's graph, turn by turn.

A debater's query and argument are served by claim, debater and round; a RAGAS call by what
it quotes (the answer it scores, or the statements it checks), so a replayed turn gets the
scores the recorded turn got whatever the documents look like now. The retrieval tools give
back the documents the recorded debater saw for the query it wrote.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from factdebate.tools import dispatch
from factdebate.tools.core.records import Evidence
from tests.capable import recorded_debates

_EVIDENCE = re.compile(r'<evidence n="\d+" id="([^"]*)" title="([^"]*)">\n(.*?)\n</evidence>', re.S)
_INPUT = re.compile(r"Now perform the same with the following input\s*(.*?)\nOutput:", re.S)
_QUERY = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class Claim:
    """One recorded claim: its text, gold label and how the recorded run ended."""

    id: str
    claim: str
    gold: str
    verdict: str
    stop_reason: str


def debater_of(prompt: str) -> str:
    """Which debater a query or argument prompt is for (its tool line)."""
    return "debater_a" if "dense vector retrieval" in prompt else "debater_b"


def claim_line(prompt: str) -> str:
    """The claim of a debater or judge prompt (its last ``Claim:`` line)."""
    found = re.findall(r"^Claim: (.+)$", prompt, re.M)
    if not found:
        raise LookupError("no Claim: line in the prompt")
    return str(found[-1]).strip()


def ragas_key(kind: str, prompt: str) -> str:
    """What identifies a RAGAS call across renderings: the input it scores.

    The statements and question prompts quote the answer (the same text now as then); the
    verdict prompt quotes the documents (rendered differently now) and the statements, so
    only the statements are kept.
    """
    found = _INPUT.findall(prompt)
    if not found:
        raise LookupError("no RAGAS input section in the prompt")
    text = str(found[-1])
    if kind == "ragas-faithfulness-verdicts":
        text = text[text.rfind('"statements"') :]
    return f"{kind}\n{text.strip()}"


def ragas_kind(prompt: str) -> str | None:
    """The kind of a RAGAS prompt, None for the project's own prompts."""
    if "Your task is to judge the faithfulness" in prompt:
        return "ragas-faithfulness-verdicts"
    if "Given a question and an answer, analyze the complexity" in prompt:
        return "ragas-statements"
    if "Generate a question for the given answer" in prompt:
        return "ragas-relevance-question"
    return None


def claims(recordings: tuple[str, ...] = ("2026-11-27",)) -> list[Claim]:
    """The recorded claims of ``recordings``, in recording order."""
    seen: dict[str, Claim] = {}
    for row in recorded_debates(recordings):
        seen.setdefault(
            row["claim"],
            Claim(row["claim_id"], row["claim"], row["gold"], row["verdict"], row["stop_reason"]),
        )
    return list(seen.values())


class DebateReplay:
    """A fake provider's responder serving the recorded answers; counts what it could not."""

    def __init__(self, recordings: tuple[str, ...] = ("2026-11-27",)) -> None:
        self.turns: dict[tuple[str, str, str], list[str]] = defaultdict(list)
        self.ragas: dict[str, list[str]] = defaultdict(list)
        self.judge: dict[str, str] = {}
        self.documents: dict[str, list[Evidence]] = {}
        self.served: Counter[object] = Counter()
        self.missed: list[str] = []
        last_query: dict[tuple[str, str], str] = {}
        for row in recorded_debates(recordings):
            kind, prompt, answer, claim = row["kind"], row["prompt"], row["answer"], row["claim"]
            if kind == "judge-label":
                self.judge[claim] = answer
            elif kind in ("query", "debater-label"):
                debater = debater_of(prompt)
                self.turns[(kind, claim, debater)].append(answer)
                if kind == "query" and (found := _QUERY.search(answer)):
                    last_query[(claim, debater)] = found.group(1).strip()
                if kind == "debater-label" and (claim, debater) in last_query:
                    self.documents.setdefault(
                        last_query[(claim, debater)],
                        [
                            Evidence(id=i, title=t, text=x, source="recorded", score=1.0)
                            for i, t, x in _EVIDENCE.findall(prompt)
                        ],
                    )
            else:
                self.ragas[ragas_key(kind, prompt)].append(answer)

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        """The documents the recorded debater saw for ``query`` (a stand-in when unknown)."""
        found = self.documents.get(query.strip())
        if found is None:
            return [Evidence(id="r0", title="Replay", text=query, source="replay", score=1.0)]
        return found[:k]

    def install_tools(self) -> None:
        """Let both retrieval tools answer from the recorded documents."""
        dispatch.override_tool("rag", self.retrieve)
        dispatch.override_tool("search", self.retrieve)

    def __call__(self, prompt: str, body: dict[str, Any]) -> str:
        kind = ragas_kind(prompt)
        if kind is not None:
            key: object = ragas_key(kind, prompt)
            answers = self.ragas.get(str(key), [])
        elif "judge of a fact-checking debate" in prompt:
            key = ("judge", claim_line(prompt))
            answers = [self.judge[claim_line(prompt)]] if claim_line(prompt) in self.judge else []
        else:
            kind = "query" if "search query" in prompt or "previous query" in prompt else None
            key = (kind or "debater-label", claim_line(prompt), debater_of(prompt))
            answers = self.turns.get(key, [])
        index = self.served[key]
        self.served[key] += 1
        if not answers:
            self.missed.append(str(key)[:200])
            return "(no recorded answer)"
        return answers[index % len(answers)]
