"""Load a base model (Hugging Face folder, hub name or GGUF file) and a trained moderator run."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_huggingface import ChatHuggingFace, HuggingFacePipeline

from factdebate.tools.core.loading import MODEL_LOADING
from factdebate.tools.core.records import ModelConfigError

RUN_MANIFEST = "run.json"
"""What a training run wrote: base model, stages finished, settings (JSON)."""
TOKENIZER_DIR = "tokenizer"
"""The tokenizer (and so the chat template) used in training, reused at inference."""
BASE_COPY_DIR = "base"
"""Dequantised copy of a GGUF base, so later loads skip the slow GGUF conversion."""
STAGES = ("sft", "dpo")
"""Training stages in order; each writes ``<stage>/adapter``."""


def adapter_dir(run_dir: Path, stage: str) -> Path:
    """Where a stage's finished LoRA adapter lives."""
    return run_dir / stage / "adapter"


def pick_device(requested: str = "auto") -> tuple[str, Any]:
    """Device and dtype: a CUDA GPU if present (bf16 where supported, else fp16), else CPU fp32."""
    import torch

    if requested not in ("auto", "cpu", "cuda"):
        raise ModelConfigError(f"device must be auto, cpu or cuda, got {requested!r}")
    if requested == "cuda" and not torch.cuda.is_available():
        raise ModelConfigError("device cuda was asked for but no CUDA GPU is available")
    if requested == "cpu" or not torch.cuda.is_available():
        return "cpu", torch.float32
    return "cuda", torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def base_location(base: str) -> tuple[str, str | None]:
    """Split a base setting into (folder or hub name, GGUF file name or None).

    ``local`` is the bundled SmolLM2-135M GGUF; a path ending in ``.gguf`` is read by
    transformers and dequantised; anything else is a Hugging Face folder or hub name.
    """
    if base == "local":
        from factdebate.tools.models.local_llm import local_model_path

        try:
            path = local_model_path()
        except FileNotFoundError as exc:
            raise ModelConfigError(f"cannot load base model 'local': {exc}") from exc
        return str(path.parent), path.name
    if base.endswith(".gguf"):
        path = Path(base).expanduser()
        if not path.is_file():
            raise ModelConfigError(f"cannot load base model {base!r}: no such GGUF file")
        return str(path.parent), path.name
    return base, None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def load_tokenizer(base: str) -> Any:
    """The base's tokenizer (a saved tokenizer folder works too); it must have a chat template."""
    from transformers import AutoTokenizer

    where, gguf = base_location(base)
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, **({"gguf_file": gguf} if gguf else {}))
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError...
        raise ModelConfigError(f"cannot load base model {base!r}: {_first_line(exc)}") from exc
    if tokenizer.chat_template is None:
        raise ModelConfigError(f"base model {base!r} has no chat template (use an instruct model)")
    return tokenizer


def load_base(
    base: str, *, dtype: Any = None, device: str = "cpu", tokenizer_from: str | None = None
) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer; any failure is one ModelConfigError line.

    Args:
        base: ``local``, a ``.gguf`` file, a model folder or a hub name (offline: cached).
        dtype: Torch dtype for the weights (None = the checkpoint's).
        device: ``cpu`` or ``cuda``.
        tokenizer_from: Folder with a saved tokenizer to use instead of the base's.
    """
    from transformers import AutoModelForCausalLM, GgufConfig

    tokenizer = load_tokenizer(tokenizer_from or base)
    where, gguf = base_location(base)
    # dequantize=True gives a plain dense model that peft can train and save_pretrained can write
    extra = {"gguf_file": gguf, "quantization_config": GgufConfig(dequantize=True)} if gguf else {}
    try:
        auto: Any = AutoModelForCausalLM  # its stubs take a model object where a name works
        with MODEL_LOADING:
            model = auto.from_pretrained(where, dtype=dtype, **extra)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError...
        raise ModelConfigError(f"cannot load base model {base!r}: {_first_line(exc)}") from exc
    return model.to(device), tokenizer


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest; a folder that is not a training run is a ModelConfigError."""
    path = run_dir / RUN_MANIFEST
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelConfigError(
            f"{run_dir} is not a train-moderator run (cannot read {RUN_MANIFEST}): "
            f"{_first_line(exc)}"
        ) from exc
    return manifest


def load_trained(
    run_dir: Path, *, upto: str = "dpo", dtype: Any = None, device: str = "cpu"
) -> tuple[Any, Any]:
    """Base model with the run's finished adapters applied in order, up to stage ``upto``.

    Each adapter is merged before the next is applied: D-DPO trained on top of the merged
    D-SFT model, so that is the model its adapter belongs to.
    """
    from peft import PeftModel

    manifest = read_manifest(run_dir)
    base = str(run_dir / BASE_COPY_DIR) if manifest.get("base_copied") else manifest["base"]
    model, tokenizer = load_base(
        base, dtype=dtype, device=device, tokenizer_from=str(run_dir / TOKENIZER_DIR)
    )
    applied = 0
    for stage in STAGES[: STAGES.index(upto) + 1]:
        folder = adapter_dir(run_dir, stage)
        if not folder.is_dir():
            break
        with MODEL_LOADING:
            model = PeftModel.from_pretrained(model, str(folder)).merge_and_unload()
        applied += 1
    if applied == 0:
        raise ModelConfigError(f"{run_dir} holds no finished adapter yet (train-moderator first)")
    model.eval()
    return model, tokenizer


_generate_lock = threading.Lock()


class HFLocalChatModel(ChatHuggingFace):
    """ChatHuggingFace over a local transformers pipeline, callable from async code.

    The pipeline has no async path, so calls run in a worker thread, one at a time, and
    report token usage like hosted providers. JSON is asked for with the schema in the
    prompt: a local pipeline's "tool calling" is not real structured output.
    """

    structured_output_mode: ClassVar[str] = "prompt"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        with _generate_lock:
            result = super()._generate(messages, *args, **kwargs)
        prompt_tokens = len(self.tokenizer.encode(self._to_chat_prompt(messages)))
        for generation in result.generations:
            output_tokens = len(self.tokenizer.encode(generation.text))
            generation.message.usage_metadata = {  # type: ignore[attr-defined]
                "input_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            }
        return result

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        stream: bool | None = None,  # noqa: FBT001
        **kwargs: Any,
    ) -> ChatResult:
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)


def load_hf_local(
    run_dir: str, *, temperature: float = 0.0, max_tokens: int = 512, device: str = "auto"
) -> HFLocalChatModel:
    """The trained moderator of ``run_dir`` (base + adapters) as a LangChain chat model.

    ``RUN_DIR`` applies every finished stage; ``RUN_DIR#sft`` stops after D-SFT (the paper's
    "w/o D-DPO" row from the same run).
    """
    from transformers import pipeline

    path, mark, stage = run_dir.rpartition("#")
    if not mark or stage not in STAGES:
        path, stage = run_dir, STAGES[-1]
    folder = Path(path).expanduser()
    where, dtype = pick_device(device)
    model, tokenizer = load_trained(folder, upto=stage, dtype=dtype, device=where)
    sampling: dict[str, Any] = (
        {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
    )
    generator = pipeline(
        "text-generation",
        model=model,
        tokenizer=tokenizer,
        max_new_tokens=max_tokens,
        return_full_text=False,
        **sampling,
    )
    llm = HuggingFacePipeline(pipeline=generator, model_id=str(folder))
    return HFLocalChatModel(llm=llm, tokenizer=tokenizer, model_id=str(folder))
