"""`bench --estimate`: expected calls, tokens and USD of a run, from measured means, no model call.

The means come from the recorded capable-model runs (``data/measured_costs.json``) or from an
earlier run of the same method on the same dataset (``--estimate-from``). An estimate covers
what the command would run (``--repeats``, a suite's members and its matched vote) and the
settings it runs with: a ``--set`` value that changes the calls made (rounds, a gate
profile...) and differs from what the means were measured under is refused, not guessed.
Input tokens follow the items the run would take: each call's prompt quotes the item's text
(and the given documents, for a method that reads them) once, so the measured means move by
how much longer or shorter this dataset's items are than the ones they were measured on.
Imports nothing of the graphs or the models: it answers in well under a second.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factdebate.bench.judging.item_lengths import (
    KEYS,
    lengths_note,
    reads_documents,
    run_items,
    with_lengths,
)
from factdebate.bench.judging.prices import Price, role_models, usd_cost, usd_text
from factdebate.tools.core.errors import FactDebateError, SettingsError
from factdebate.tools.core.files import read_bounded

MEASURED = Path(__file__).resolve().parents[2] / "data" / "measured_costs.json"
MAX_TABLE_BYTES = 1024**2  # the measured table and an earlier run's metrics.json
SAME_CALLS = frozenset(
    {
        "model",
        "temperature",
        "top_p",
        "sampling_seed",
        "current_date",
        "collection",
        "milvus_uri",
        "search_backend",
        "rag_engine",
        "embed_model",
        "rerank_model",
        "relevance_encoder",
        "call_timeout_s",
        "model_retries",
        "review",
        "max_usd",
        "usd_per_million_input",
        "usd_per_million_output",
        "max_claim_chars",
    }
)
"""Settings that change which model answers or how it is priced, not how many calls a run
makes (every ``*_model`` / ``*_models`` setting too): any value is estimated."""
ONLY_LOWER = frozenset({"max_llm_calls", "max_total_tokens"})
"""Budgets (and every ``*max_output_tokens`` cap): they can only lower the figures."""


def _read_json(path: Path, limit: int, what: str) -> Any:
    text = read_bounded(path, limit, what)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{what} {path}: not JSON ({exc})") from None


def measured_means(method: str, path: Path = MEASURED) -> dict[str, Any]:
    """Per-item means by role of a method from the recorded capable-model runs.

    Raises:
        SettingsError: no measured means for that method (the message says what to pass).
    """
    table = _read_json(path, MAX_TABLE_BYTES, "measured costs")
    methods = table.get("methods") or {}
    if method not in methods:
        raise SettingsError(
            f"no measured calls and tokens for {method} (measured: {', '.join(methods)}): pass "
            "--estimate-from RUN_DIR, a finished run of it"
        )
    entry = methods[method]
    return {
        "source": entry.get("source", ""),
        "items_measured": entry.get("items"),
        "method": method,
        "dataset": None,  # the recorded runs stand for the method on any dataset
        "settings": dict(entry.get("settings") or {}),
        "per_role": entry["per_role"],
        "by_stop_reason": {
            k: v["per_role"] for k, v in (entry.get("by_stop_reason") or {}).items()
        },
        "item_tokens": entry.get("item_tokens"),
    }


def _per_round(rounds_role: Mapping[str, float]) -> Any:
    """A structure rule: calls per item by role, each a count times the rounds setting."""
    return lambda s: {role: n * float(s.get("max_rounds", 3)) for role, n in rounds_role.items()}


STRUCTURE: dict[str, Any] = {
    "cot": lambda s: {"debater": 1.0},
    "rag-cot": lambda s: {"debater": 1.0},
    "madam-no-rag": lambda s: {"agent": 1.0},
    "madam-concat-rag": lambda s: {"agent": 1.0},
    "react": lambda s: {"debater": float(s.get("max_rounds", 3)) + 1.0},
    "mad": _per_round({"debater": 2.0, "judge": 1.0}),
    "madke": _per_round({"debater": 2.0, "judge": 1.0}),
    "cooperation": _per_round({"debater": 2.0}),
    "self-consistency": lambda s: {"debater": float(s.get("k", 5))},
    "self-consistency-cot": lambda s: {"debater": float(s.get("k", 5))},
    "self-consistency-qa": lambda s: {"agent": float(s.get("k", 5))},
}
"""Calls per item by role read from a graph's structure, for methods with no measured runs:
one answer (cot), a step per round plus the answer (ReAct), two sides and a judge per round
(MAD, MADKE), one call per sample (self-consistency)."""
CLASS_CALLS = {"low": 1.0, "medium": 4.0, "high": 30.0}
"""Calls per item of a cost class, for a method with neither measured runs nor a rule."""


def structural_means(method: str, context: Mapping[str, Any]) -> dict[str, Any]:
    """Per-item means of a method no run measured: calls from its structure or cost class.

    Tokens per call are its family's measured ones; a variant of a measured graph (a Tool-MAD
    ablation, an escalation) takes that graph's measured means.
    """
    from factdebate.graphs.registry import METHODS

    spec = METHODS[method]
    table = _read_json(MEASURED, MAX_TABLE_BYTES, "measured costs").get("methods") or {}
    family = spec.family if spec.family in table else next(iter(table))
    if spec.screens in table:  # an escalation: at most its method's cost (every item escalated)
        means = measured_means(spec.screens)
        source = f"{spec.screens}'s measured means, an upper bound (every item escalated)"
        return {**means, "method": method, "source": f"{source}: {means['source']}"}
    if method not in STRUCTURE and spec.cost == "high":  # a variant of its family's graph
        means = measured_means(family)
        source = f"{family}'s measured means (the same graph): {means['source']}"
        return {**means, "method": method, "source": source}
    total = table[family]["per_role"]["total"]
    calls = max(float(total["llm_calls"]), 1.0)
    per_call = {k: float(total[k]) / calls for k in ("input_tokens", "output_tokens")}
    settings = {**_defaults(method), **context}
    rule = STRUCTURE.get(method)
    by_role = rule(settings) if rule else {"debater": CLASS_CALLS[spec.cost]}
    per_role = {
        role: {"llm_calls": n, **{k: v * n for k, v in per_call.items()}}
        for role, n in by_role.items()
    }
    per_role["total"] = {k: sum(u[k] for u in per_role.values()) for k in KEYS}
    how = "its graph's structure" if rule else f"its cost class ({spec.cost})"
    return {
        "source": f"{how}, not a measured run (tokens per call: {family}'s measured calls)",
        "items_measured": 0,
        "method": method,
        "dataset": None,
        "settings": dict(context),
        "per_role": per_role,
        "by_stop_reason": {},
        "structural": True,
        "item_tokens": table[family].get("item_tokens"),
    }


def calls_signature(method: str, context: Mapping[str, Any]) -> str:
    """The settings of a run that change its calls and differ from the defaults, as text."""
    defaults = _defaults(method)
    changed = {
        k: v
        for k, v in context.items()
        if k in defaults and not _same_calls(k) and not _only_lower(k) and v != defaults[k]
    }
    return json.dumps(changed, sort_keys=True, default=str) if changed else ""


def learned_means(method: str, model: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Per-item means earlier runs of this method, model and settings left on this machine."""
    from factdebate.runs.pace import means_key, read_book
    from factdebate.tools.core.home import home_dir

    key = means_key(method, model, calls_signature(method, context))
    learned = read_book(home_dir()).means(key)
    if learned is None or not learned.per_role:
        return None
    per_role = {r: dict(u) for r, u in learned.per_role.items()}
    per_role["total"] = {k: sum(u.get(k, 0.0) for u in per_role.values()) for k in KEYS}
    return {
        "source": f"this machine's runs of {method} on {model} ({learned.weight:.3g} item(s), "
        "the latest weighing most)",
        "items_measured": learned.weight,
        "method": method,
        "dataset": None,
        "settings": dict(context),
        "per_role": per_role,
        "by_stop_reason": {},
        "learned": True,
        "other_s": learned.other_s,
    }


def expected_means(method: str, model: str, context: Mapping[str, Any]) -> dict[str, Any]:
    """The best per-item means known before a run of ``method`` on ``model``.

    This machine's runs of it with this model and settings, else the recorded capable-model
    runs, else the method's structure (``structural_means``).

    Raises:
        SettingsError: measured means taken with other call-changing settings (the refusal of
            ``check_estimable``).
    """
    learned = learned_means(method, model, context)
    if learned is not None:
        return learned
    try:
        return measured_means(method)
    except SettingsError as exc:
        if not str(exc).startswith("no measured"):
            raise
    return structural_means(method, context)


def run_seconds(model: str, per_role: Mapping[str, Mapping[str, float]]) -> float | None:
    """Seconds calls with these tokens by role take on ``model`` at this machine's pace."""
    from factdebate.runs.pace import read_book
    from factdebate.tools.core.home import home_dir

    return read_book(home_dir()).seconds(model, per_role)


def run_means(run_dir: Path) -> dict[str, Any]:
    """Per-item means by role of an earlier run folder (its metrics.json, read and checked).

    Raises:
        SettingsError: no metrics.json, a damaged one (the run reader's refusal: counts that
            are negative, fractional or not numbers), or no finished item.
    """
    from factdebate.runs.reader import read_metrics

    try:
        metrics = read_metrics(run_dir)
    except FactDebateError as exc:
        raise SettingsError(f"--estimate-from {run_dir}: {exc}") from None
    n, cost = metrics.n, metrics.cost
    if n < 1:
        raise SettingsError(f"{run_dir} holds no finished item to take means from")
    per_role = {
        role: {k: float(getattr(usage, k)) / n for k in KEYS}
        for role, usage in {**cost.per_role}.items()
    }
    per_role["total"] = {k: float(getattr(cost, k)) / n for k in KEYS}
    run = metrics.run
    return {
        "source": f"{n} item(s) of {run.method} on {run.dataset} in {run_dir}",
        "items_measured": n,
        "method": run.method,
        "dataset": run.dataset,
        "settings": dict(run.context),
        "per_role": per_role,
        "by_stop_reason": {},
    }


def check_source(
    method: str, dataset_name: str, means: Mapping[str, Any], where: Path, any_source: bool
) -> None:
    """Refuse means taken from a run of another method or dataset, unless ``any_source``.

    Raises:
        SettingsError: one line naming what the run was of.
    """
    if any_source:
        return
    theirs = (means.get("method"), means.get("dataset"))
    if theirs != (method, dataset_name):
        raise SettingsError(
            f"--estimate-from {where} is a run of {theirs[0]} on {theirs[1]}, not of {method} "
            f"on {dataset_name}: its figures are not this run's (add --estimate-any-source to "
            f"see {theirs[0]}'s figures, titled as such)"
        )


def _defaults(method: str) -> dict[str, Any]:
    """Every setting of ``method`` with its default (the catalog's class, no graph loaded)."""
    from factdebate.settings import context_class, defaults

    return defaults(context_class(method))


def _same_calls(name: str) -> bool:
    return name in SAME_CALLS or name.endswith(("_model", "_models"))


def _only_lower(name: str) -> bool:
    return name in ONLY_LOWER or name.endswith("max_output_tokens")


def check_estimable(method: str, context: Mapping[str, Any], means: Mapping[str, Any]) -> float:
    """Refuse a ``--set`` value that changes the calls and differs from the means' settings.

    ``k`` of a self-consistency method is not refused: one sample is one call, so the means
    scale by the ratio of the ``k`` asked to the ``k`` measured (returned; 1.0 otherwise).

    Raises:
        SettingsError: naming the setting, its value and the value the means ran with.
    """
    defaults = _defaults(method)
    measured = {**defaults, **(means.get("settings") or {})}
    for key in sorted(context):
        if key == "k" or _same_calls(key) or _only_lower(key):
            continue
        if context[key] != measured.get(key):
            raise SettingsError(
                f"--estimate: --set {key}={context[key]} changes the calls, and the means "
                f"({means['source']}) were measured with {key}={measured.get(key)}: pass "
                "--estimate-from RUN_DIR, a run made with it"
            )
    if "k" not in defaults:
        return 1.0
    return float(context.get("k", defaults["k"])) / float(measured.get("k") or defaults["k"])


def _scaled(
    per_role: Mapping[str, Mapping[str, float]], factor: float
) -> dict[str, dict[str, float]]:
    return {role: {k: float(u.get(k, 0)) * factor for k in KEYS} for role, u in per_role.items()}


def estimate_run(
    method: str,
    dataset_name: str,
    limit: int | None,
    context: Mapping[str, Any],
    prices: Mapping[str, Price],
    *,
    data_dir: Path | None = None,
    from_run: Path | None = None,
    repeats: int = 1,
    any_source: bool = False,
    seed: int = 0,
) -> dict[str, Any]:
    """Expected calls, tokens and USD per item and for the run; no model is loaded or called.

    ``repeats`` runs of the sample multiply the run's figures. With ``any_source`` a run of
    another method or dataset is accepted, and the estimate is titled with that method.
    Recorded or structural means have their input tokens moved by the lengths of the items
    the run would take (``seed``'s sample of ``limit``; ``with_lengths``); a run's own means
    (this machine's, or ``from_run``'s) are taken as they are.

    Raises:
        SettingsError: no means for the method, means of another method or dataset, or a
            setting that changes the calls and differs from the means' (``check_estimable``).
    """
    if from_run is not None:
        means = run_means(from_run)
        check_source(method, dataset_name, means, from_run, any_source)
    else:
        means = expected_means(method, run_model_of(context), context)
    factor = 1.0
    if means.get("method") == method and not means.get("learned") and not means.get("structural"):
        factor = check_estimable(method, context, means)
    items, lengths, why_not = run_items(dataset_name, data_dir, limit, seed)
    per_role = _scaled(means["per_role"], factor)
    stop_reasons = {r: _scaled(u, factor) for r, u in means["by_stop_reason"].items()}
    lengths_line = ""
    if from_run is None and not means.get("learned"):
        documents = reads_documents(method)
        reference = means.get("item_tokens")
        per_role, delta = with_lengths(per_role, reference, lengths, documents)
        stop_reasons = {
            r: with_lengths(u, reference, lengths, documents)[0] for r, u in stop_reasons.items()
        }
        lengths_line = lengths_note(dataset_name, lengths, reference, documents, delta, why_not)
    models = role_models(context, [r for r in per_role if r != "total"])
    return {
        "method": method,
        "figures_of": means.get("method") or method,
        "figures_dataset": means.get("dataset"),
        "dataset": dataset_name,
        "items": items,
        "repeats": repeats,
        "source": means["source"],
        "items_measured": means["items_measured"],
        "k_scale": factor,
        "lowered_by": sorted(k for k in context if _only_lower(k)),
        "models": models,
        "per_item": usage_and_usd(per_role, models, prices, 1),
        "run": usage_and_usd(per_role, models, prices, items * repeats),
        "by_stop_reason": {
            reason: usage_and_usd(roles, models, prices, 1)
            for reason, roles in stop_reasons.items()
        },
        "lengths": lengths_line,
        **_timed(context, per_role, items * repeats, means.get("other_s", 0.0)),
    }


def run_model_of(context: Mapping[str, Any]) -> str:
    """The model a run's settings name for every role (``model``, else FACTDEBATE_MODEL)."""
    import os

    return str(context.get("model") or os.environ.get("FACTDEBATE_MODEL") or "local")


def _timed(
    context: Mapping[str, Any],
    per_role: Mapping[str, Mapping[str, float]],
    items: int,
    other_s: float = 0.0,
) -> dict[str, Any]:
    """The run's expected seconds on its model at this machine's pace (none when unknown)."""
    model = run_model_of(context)
    per_item = run_seconds(model, per_role)
    if per_item is not None:
        per_item += float(other_s)
    if per_item is None:
        return {"seconds": None, "timed_model": model}
    return {"seconds": per_item * items, "timed_model": model}


def usage_and_usd(
    per_role: Mapping[str, Mapping[str, float]],
    models: Mapping[str, list[str]],
    prices: Mapping[str, Price],
    items: int,
) -> dict[str, Any]:
    """Calls, tokens and USD of ``items`` items at these per-item means."""
    scaled = _scaled(per_role, items)
    total = scaled.pop("total", None) or {k: sum(u[k] for u in scaled.values()) for k in KEYS}
    return {**total, **usd_cost(scaled, models, prices)}


def _row(name: str, u: Mapping[str, Any]) -> str:
    return (
        f"| {name} | {u['llm_calls']:,.1f} | {u['input_tokens']:,.0f} | "
        f"{u['output_tokens']:,.0f} | {usd_text(u['usd'])} |"
    )


def _title(est: Mapping[str, Any]) -> str:
    times = f" x {est['repeats']} repeats" if est.get("repeats", 1) > 1 else ""
    shown = f"{est['method']} on {est['dataset']}, {est['items']} item(s){times}"
    theirs = est.get("figures_of") or est["method"]
    if theirs != est["method"] or est.get("figures_dataset") not in (None, est["dataset"]):
        return (
            f"# Estimate from {theirs}'s figures (its run on {est.get('figures_dataset')}), "
            f"not {est['method']}'s: {shown}"
        )
    return f"# Estimate: {shown}"


def render_estimate(est: Mapping[str, Any]) -> str:
    """The estimate as Markdown: a table per item and for the run, and where the means came from."""
    models = ", ".join(f"{r} {' / '.join(m) or '(none)'}" for r, m in est["models"].items())
    repeats = est.get("repeats", 1)
    whole = f"{est['items']} items" + (f" x {repeats} repeats" if repeats > 1 else "")
    lines = [
        _title(est),
        "",
        "| | LLM calls | input tokens | output tokens | USD |",
        "|---|---:|---:|---:|---:|",
        _row("per item", est["per_item"]),
        _row(f"whole run ({whole})", est["run"]),
        *(_row(f"per item, {r}", u) for r, u in est["by_stop_reason"].items()),
        "",
        f"Means from {est['source']}. Models: {models}.",
    ]
    if est.get("lengths"):
        lines.append(est["lengths"])
    if est.get("k_scale", 1.0) != 1.0:
        lines.append(f"Scaled by {est['k_scale']:g} for the k asked (one call per sample).")
    if est.get("lowered_by"):
        lines.append(f"{', '.join(est['lowered_by'])} can only lower these figures.")
    unpriced = sorted(set(est["per_item"]["unpriced"]))
    if unpriced:
        lines.append(
            f"Unpriced: {', '.join(unpriced)} (set a price with --price MODEL=IN,OUT, USD per "
            "million tokens, or in the prices file)."
        )
    lines.append(_time_line(est))
    lines.append("Nothing was run and no model was called.")
    return "\n".join(lines) + "\n"


def _time_line(est: Mapping[str, Any]) -> str:
    """What the run should take, or why no time is given."""
    from factdebate.runs.pace import clock_text

    model = est.get("timed_model") or "the model"
    if est.get("seconds") is None:
        return (
            f"No time: no call of {model} was timed on this machine yet (a run of it records one)."
        )
    return (
        f"Expected time on {model}: {clock_text(est['seconds'])}, at this machine's measured pace."
    )


def estimate_suite(
    suite: str,
    method: str,
    dataset_name: str,
    limit: int | None,
    context: Mapping[str, Any],
    prices: Mapping[str, Price],
    *,
    match_on: str,
    data_dir: Path | None = None,
    from_dir: Path | None = None,
    repeats: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """Estimate every member of a suite, its matched vote's ``k`` included, and their sum.

    Each member's means are the measured ones, or with ``from_dir`` (a finished suite's
    folder) those of ``from_dir/<member>``. The vote's ``k`` is chosen as the suite would:
    the debate's calls per item (one call per sample), or its tokens per item over one
    sample's tokens, plus the ``k = 1`` pilot that measures them.

    Raises:
        SettingsError: a member without means (naming every such member), a bad matching
            rule, or a setting no means were measured with.
    """
    from factdebate.bench.judging.matching import MATCH_ON, PILOT_ITEMS, pick_k
    from factdebate.bench.judging.suite import check_shared_settings, plan_suite

    if match_on not in MATCH_ON:
        raise SettingsError(f"--match-on must be calls or tokens, got {match_on!r}")
    plan = plan_suite(suite, method, dataset_name)
    check_shared_settings(plan, dict(context))  # a setting some member does not take

    def one(
        name: str, settings: Mapping[str, Any], items: int | None = limit, times: int = repeats
    ) -> dict[str, Any]:
        source = None if from_dir is None else Path(from_dir) / name
        return estimate_run(
            name, dataset_name, items, settings, prices,
            data_dir=data_dir, from_run=source, repeats=times, seed=seed,
        )  # fmt: skip

    members: list[dict[str, Any]] = []
    missing: list[str] = []
    reasons: list[str] = []
    for name in plan.members:  # the matched vote last
        try:
            if name != plan.matched:
                members.append(one(name, context))
                continue
            sample = one(name, {**context, "k": 1})  # one sample's figures
            if missing:  # no debate figures to match k to
                continue
            if match_on == "calls":
                wanted, per_sample = members[0]["per_item"]["llm_calls"], 1.0
            else:
                per_item = members[0]["per_item"]
                wanted = per_item["input_tokens"] + per_item["output_tokens"]
                per_sample = (
                    sample["per_item"]["input_tokens"] + sample["per_item"]["output_tokens"]
                )
            k = pick_k(wanted, per_sample)
            members.append({**one(name, {**context, "k": k}), "k": k})
            if match_on == "tokens":
                pilot = one(name, {**context, "k": 1}, min(PILOT_ITEMS, limit or PILOT_ITEMS), 1)
                members.append({**pilot, "method": f"{name} pilot (k = 1)"})
        except SettingsError as exc:
            missing.append(name)
            if not str(exc).startswith("no measured"):
                reasons.append(str(exc).splitlines()[0])
    if missing:
        raise SettingsError(
            f"cannot estimate --suite {suite}: no usable means for {', '.join(missing)}"
            + (f" ({reasons[0]})" if reasons else "")
            + "; pass --estimate-from SUITE_DIR, a finished suite's folder"
        )
    total = {k: sum(m["run"][k] for m in members) for k in KEYS}
    usd = [m["run"]["usd"] for m in members]
    total["usd"] = None if None in usd else sum(u for u in usd if u is not None)
    return {"suite": suite, "dataset": dataset_name, "members": members, "total": total,
            "match_on": match_on, "repeats": repeats}  # fmt: skip


def render_suite_estimate(est: Mapping[str, Any]) -> str:
    """A suite's estimate as Markdown: one row per member run, then the whole suite."""
    times = f", {est['repeats']} repeats each" if est["repeats"] > 1 else ""
    lines = [
        f"# Estimate: suite {est['suite']} on {est['dataset']}{times}",
        "",
        "| run | items | LLM calls / item | tokens / item | USD / item | LLM calls | USD |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in est["members"]:
        p, r = m["per_item"], m["run"]
        name = m["method"] + (f" (k = {m['k']}, matched on {est['match_on']})" if "k" in m else "")
        lines.append(
            f"| {name} | {m['items'] * m['repeats']} | {p['llm_calls']:,.1f} | "
            f"{p['input_tokens'] + p['output_tokens']:,.0f} | {usd_text(p['usd'])} | "
            f"{r['llm_calls']:,.0f} | {usd_text(r['usd'])} |"
        )
    total = est["total"]
    lines += [
        f"| whole suite | | | | | {total['llm_calls']:,.0f} | {usd_text(total['usd'])} |",
        "",
        *(
            f"- {m['method']}: means from {m['source']}."
            + (f" {m['lengths']}" if m.get("lengths") else "")
            for m in est["members"]
        ),
        "",
        "Nothing was run and no model was called.",
    ]
    return "\n".join(lines) + "\n"


def matched_sample(
    method: str, run_dir: Path, match_on: str, context: Mapping[str, Any]
) -> dict[str, Any]:
    """What ``--match-compute RUN_DIR`` would run: its dataset, data, limit and ``k``.

    Matching calls needs no model (one call per sample); matching tokens needs the ``k = 1``
    pilot's measurement, so it is refused here.

    Raises:
        SettingsError: a method without ``k``, a token match, or a run that cannot be matched.
    """
    from factdebate.bench.judging.matching import (
        CALLS_PER_SAMPLE,
        check_method,
        pick_k,
        read_target,
    )

    check_method(method)
    if "k" in context:
        raise SettingsError("--match-compute picks k itself: drop --set k=...")
    if match_on != "calls":
        raise SettingsError(
            "--estimate with --match-compute matches calls only (a token match needs its "
            "pilot run): estimate with --set k=N instead"
        )
    target = read_target(run_dir)
    return {
        "dataset": target.dataset,
        "data_dir": Path(target.data_dir) if target.data_dir else None,
        "limit": target.limit,
        "k": pick_k(target.calls, CALLS_PER_SAMPLE),
    }
