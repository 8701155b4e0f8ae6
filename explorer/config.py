"""Frozen configurations: the single source of truth for every shape.

`ModelConfig.__post_init__` rejects bad combinations with a `ValueError` that names the
field and says what is valid, so the UI can show the message as it is.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

ARCHITECTURES = ("encoder-decoder", "encoder", "decoder")
POS_ENCODINGS = ("sinusoidal", "learned", "rope", "alibi", "none")
NORMS = ("pre", "post")
RESIDUALS = ("add", "none")   # x + f(x) around every sublayer, or f(x) alone (the ablation)
ATTN_SCALES = ("sqrt_d_k", "none")   # q·k / sqrt(d_k) as in the chapter, or unscaled (the ablation)
ACTIVATIONS = ("relu", "gelu", "swiglu")


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _choice(field: str, value: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise ValueError(f"{field}={value!r} is not known; choose one of {', '.join(valid)}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _at_least(field: str, value, low) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{field}={value!r} must be a whole number >= {low}")


class FromDict:
    """`cls.from_dict(data)`: a config read back from its dict (a checkpoint's JSON, a link, a CLI file), the
    names it does not know refused by name, each value then checked by the config's own __post_init__."""

    @classmethod
    def from_dict(cls, data: dict):
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown {cls.__name__} fields {unknown}; valid: {sorted(known)}")
        return cls(**data)


@dataclass(frozen=True)
class ModelConfig(FromDict):
    """Architecture of one Transformer.

    `arch` picks the model: "encoder-decoder" (seq2seq), "encoder" (pooled classifier) or
    "decoder" (language model). Fields that an architecture does not use are ignored by it
    (an encoder classifier has no decoder layers). `src_vocab_size=0` means the encoder reads
    continuous vectors of width `d_model` instead of token ids (the notebook's order task).
    `residual="none"` drops the residual connections (x + f(x) becomes f(x)), to test what they do.
    `attn_scale="none"` leaves q·k unscaled instead of dividing it by sqrt(d_k) (d_k = d_head).
    `tie_embeddings` shares the decoder's input embedding with the output projection, and with
    the encoder's embedding too when both vocabularies are the same (Vaswani et al.).
    """

    arch: str = "encoder-decoder"
    src_vocab_size: int = 16
    tgt_vocab_size: int = 16
    d_model: int = 64
    n_heads: int = 4
    n_encoder_layers: int = 2
    n_decoder_layers: int = 2
    d_ff: int = 256
    dropout: float = 0.0
    pos_encoding: str = "sinusoidal"
    pe_base: float = 10_000.0
    norm: str = "pre"
    residual: str = "add"
    attn_scale: str = "sqrt_d_k"
    activation: str = "relu"
    max_len: int = 64
    tie_embeddings: bool = False
    n_classes: int = 2
    pad_idx: int = 0

    def __post_init__(self) -> None:
        _choice("arch", self.arch, ARCHITECTURES)
        _choice("pos_encoding", self.pos_encoding, POS_ENCODINGS)
        _choice("norm", self.norm, NORMS)
        _choice("residual", self.residual, RESIDUALS)
        _choice("attn_scale", self.attn_scale, ATTN_SCALES)
        _choice("activation", self.activation, ACTIVATIONS)
        for name in ("d_model", "n_heads", "d_ff", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}={value!r} must be a whole number >= 1")
        if self.uses_encoder:
            _at_least("n_encoder_layers", self.n_encoder_layers, 1)
        if self.uses_decoder:
            _at_least("n_decoder_layers", self.n_decoder_layers, 1)
            _at_least("tgt_vocab_size", self.tgt_vocab_size, 2)
        if self.uses_encoder:
            if self.src_vocab_size == 0 and self.arch != "encoder":
                raise ValueError("src_vocab_size=0 (continuous inputs) is only valid for arch='encoder'")
            if self.src_vocab_size != 0:
                _at_least("src_vocab_size", self.src_vocab_size, 2)
        if self.arch == "encoder":
            _at_least("n_classes", self.n_classes, 2)
        if not _is_number(self.dropout) or not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout!r} must be a number in [0, 1)")
        if not _is_number(self.pe_base) or not 1.0 < self.pe_base < math.inf:
            raise ValueError(f"pe_base={self.pe_base!r} must be a finite number > 1 (10000 in the paper)")
        if not isinstance(self.tie_embeddings, bool):
            raise ValueError(f"tie_embeddings={self.tie_embeddings!r} must be True or False")
        if not isinstance(self.pad_idx, int) or isinstance(self.pad_idx, bool):
            raise ValueError(f"pad_idx={self.pad_idx!r} must be a whole number (the id of <pad>)")
        if self.d_model % self.n_heads:
            near = [h for h in _divisors(self.d_model) if h <= max(16, self.n_heads * 2)][-4:]
            raise ValueError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; "
                f"try n_heads in {near}"
            )
        if self.pos_encoding == "rope" and self.d_head % 2:
            raise ValueError(
                f"pos_encoding='rope' rotates pairs of dimensions, so the head dimension "
                f"d_model/n_heads={self.d_head} must be even; change d_model or n_heads"
            )
        vocabs = [self.src_vocab_size if self.uses_encoder else None,
                  self.tgt_vocab_size if self.uses_decoder else None]
        for name, v in zip(("src_vocab_size", "tgt_vocab_size"), vocabs):
            if v and not 0 <= self.pad_idx < v:
                raise ValueError(f"pad_idx={self.pad_idx} must be a token id below {name}={v}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def uses_encoder(self) -> bool:
        return self.arch in ("encoder-decoder", "encoder")

    @property
    def uses_decoder(self) -> bool:
        return self.arch in ("encoder-decoder", "decoder")

    @property
    def shares_src_tgt_embedding(self) -> bool:
        return (self.tie_embeddings and self.arch == "encoder-decoder"
                and self.src_vocab_size == self.tgt_vocab_size)

    def replace(self, **changes) -> ModelConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------------------------
# Parameter count, FLOPs and memory: closed forms, nothing allocated (GPT-3 is instant).
# A test checks param_count against sum(p.numel()) of the built model.
# ---------------------------------------------------------------------------------------------

def attention_params(d: int) -> int:
    return 4 * d * d + 4 * d  # packed Q/K/V projection + output projection, with biases


def ffn_params(cfg: ModelConfig) -> int:
    d, f = cfg.d_model, cfg.d_ff
    width = 2 * f if cfg.activation == "swiglu" else f  # SwiGLU: gate and value in one matrix
    return d * width + width + f * d + d


def param_count(cfg: ModelConfig) -> dict[str, int]:
    """Parameters by part; "total" is their sum."""
    d = cfg.d_model
    parts = dict(embeddings=0, positional=0, attention=0, ffn=0, norms=0, output=0)
    stacks = []  # (n_layers, attentions per block, norms per block, vocab of its embedding)
    if cfg.uses_encoder:
        stacks.append((cfg.n_encoder_layers, 1, 2, cfg.src_vocab_size))
    if cfg.uses_decoder:
        cross = cfg.arch == "encoder-decoder"
        stacks.append((cfg.n_decoder_layers, 2 if cross else 1, 3 if cross else 2, cfg.tgt_vocab_size))
    for n_layers, n_attn, n_norm, vocab in stacks:
        parts["embeddings"] += vocab * d
        parts["positional"] += cfg.max_len * d if cfg.pos_encoding == "learned" else 0
        parts["attention"] += n_layers * n_attn * attention_params(d)
        parts["ffn"] += n_layers * ffn_params(cfg)
        parts["norms"] += n_layers * n_norm * 2 * d + (2 * d if cfg.norm == "pre" else 0)
    if cfg.shares_src_tgt_embedding:
        parts["embeddings"] -= cfg.tgt_vocab_size * d
    if cfg.arch == "encoder":
        parts["output"] = d * cfg.n_classes + cfg.n_classes
    else:
        v = cfg.tgt_vocab_size
        parts["output"] = v + (0 if cfg.tie_embeddings else d * v)
    parts["total"] = sum(parts.values())
    return parts


def param_story(cfg: ModelConfig) -> dict[str, int]:
    """The total split the way a rule of thumb counts: the blocks' self-attention and FFN (4·d² + 2·d·d_ff
    a block, what a table's "approx. params" usually means), then what such a rule leaves out."""
    p, d = param_count(cfg), cfg.d_model
    blocks = (cfg.n_encoder_layers if cfg.uses_encoder else 0) + (cfg.n_decoder_layers if cfg.uses_decoder else 0)
    cross = cfg.n_decoder_layers * attention_params(d) if cfg.arch == "encoder-decoder" else 0
    story = {"self-attention and FFN blocks": blocks * (attention_params(d) + ffn_params(cfg)),
             "cross-attention": cross, "embeddings and output": p["embeddings"] + p["positional"] + p["output"],
             "LayerNorms": p["norms"]}
    return story


def approx(text: str) -> float | None:
    """A table's "~300M" as a number; None for an empty cell."""
    text = text.strip().lstrip("~")
    if not text:
        return None
    scale = {"k": 1e3, "M": 1e6, "B": 1e9}.get(text[-1], 1.0)
    return float(text.rstrip("kMB")) * scale


def flops_per_token(cfg: ModelConfig, seq_len: int | None = None) -> dict[str, float]:
    """Approximate FLOPs per token: 2 per weight multiply-add plus the attention matmuls.

    Follows Kaplan et al. (2020): forward = 2*N_matmul + 2 * n_attn_layers * seq_len * d_model
    * 2 (scores and weighted sum); training (forward + backward) is about three times forward.
    """
    seq_len = seq_len or cfg.max_len
    p = param_count(cfg)
    matmul = p["attention"] + p["ffn"] + (p["output"] if cfg.arch != "encoder" else 0)
    if cfg.tie_embeddings and cfg.arch != "encoder":
        matmul += cfg.tgt_vocab_size * cfg.d_model  # the tied matrix still multiplies
    n_attn = 0
    if cfg.uses_encoder:
        n_attn += cfg.n_encoder_layers
    if cfg.uses_decoder:
        n_attn += cfg.n_decoder_layers * (2 if cfg.arch == "encoder-decoder" else 1)
    forward = 2.0 * matmul + 4.0 * n_attn * seq_len * cfg.d_model
    return {"forward": forward, "train": 3.0 * forward}


def train_memory_bytes(cfg: ModelConfig, batch_size: int, seq_len: int | None = None) -> dict[str, float]:
    """Estimated memory of one fp32 AdamW training step.

    Weights, gradients and two Adam moments take 16 bytes per parameter. Activations per
    layer follow Korthikanti et al. (2022), s*b*d*(34 + 5*h*s/d) bytes at half precision,
    doubled for fp32; a decoder block with cross-attention counts as 1.5 layers.
    """
    seq_len = seq_len or cfg.max_len
    n = param_count(cfg)["total"]
    layers = 0.0
    if cfg.uses_encoder:
        layers += cfg.n_encoder_layers
    if cfg.uses_decoder:
        layers += cfg.n_decoder_layers * (1.5 if cfg.arch == "encoder-decoder" else 1.0)
    s, b, d, h = seq_len, batch_size, cfg.d_model, cfg.n_heads
    activations = 2.0 * layers * s * b * d * (34 + 5 * h * s / d)
    vocab = cfg.tgt_vocab_size if cfg.uses_decoder else cfg.n_classes
    logits = 4.0 * 3 * b * s * vocab  # logits, softmax and their gradient
    out = {"weights": 4.0 * n, "gradients": 4.0 * n, "optimizer": 8.0 * n,
           "activations": activations + logits}
    out["total"] = sum(out.values())
    return out


# ---------------------------------------------------------------------------------------------
# Presets
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReferencePreset:
    name: str
    config: ModelConfig
    published_params: float | None  # as published by the model's authors
    seed_params: str                # the chapter's "approx. params" column
    note: str


def _seq2seq(d, h, n, f, vocab=37_000, **kw) -> ModelConfig:
    return ModelConfig(arch="encoder-decoder", src_vocab_size=vocab, tgt_vocab_size=vocab,
                       d_model=d, n_heads=h, n_encoder_layers=n, n_decoder_layers=n, d_ff=f,
                       dropout=0.1, norm="post", max_len=512, tie_embeddings=True, **kw)


REFERENCE_PRESETS: dict[str, ReferencePreset] = {p.name: p for p in [
    ReferencePreset("Small", _seq2seq(256, 4, 4, 1024, vocab=10_000), None, "~10M",
                    "encoder-decoder, 4+4 layers, shared 10k vocabulary"),
    ReferencePreset("Base", _seq2seq(512, 8, 6, 2048), 65e6, "~65M",
                    "Vaswani et al. base, 6+6 layers, shared 37k vocabulary"),
    ReferencePreset("Large", _seq2seq(1024, 16, 12, 4096), None, "~300M",
                    "encoder-decoder, 12+12 layers, shared 37k vocabulary"),
    ReferencePreset("Transformer big", _seq2seq(1024, 16, 6, 4096, ), 213e6, "",
                    "Vaswani et al. big, 6+6 layers, shared 37k vocabulary"),
    ReferencePreset("BERT-Base", ModelConfig(
        arch="encoder", src_vocab_size=30_522, d_model=768, n_heads=12, n_encoder_layers=12,
        d_ff=3072, dropout=0.1, pos_encoding="learned", norm="post", activation="gelu",
        max_len=512, n_classes=2), 110e6, "~110M", "encoder, learned positions, 30,522 WordPiece"),
    ReferencePreset("GPT-2 Medium", ModelConfig(
        arch="decoder", tgt_vocab_size=50_257, d_model=1024, n_heads=16, n_decoder_layers=24,
        d_ff=4096, dropout=0.1, pos_encoding="learned", norm="pre", activation="gelu",
        max_len=1024, tie_embeddings=True), 345e6, "~345M", "decoder LM, 50,257 byte-level BPE"),
    ReferencePreset("GPT-3 175B", ModelConfig(
        arch="decoder", tgt_vocab_size=50_257, d_model=12_288, n_heads=96, n_decoder_layers=96,
        d_ff=49_152, dropout=0.0, pos_encoding="learned", norm="pre", activation="gelu",
        max_len=2048, tie_embeddings=True), 175e9, "~175B", "decoder LM, context 2048"),
]}

# Sizes that train in seconds on a laptop CPU; vocabularies are filled in from the task.
CLASSROOM_PRESETS: dict[str, ModelConfig] = {
    "tiny": ModelConfig(d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64),
    "small": ModelConfig(d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=256),
    "medium": ModelConfig(d_model=128, n_heads=4, n_encoder_layers=3, n_decoder_layers=3, d_ff=512),
}


def human(n: float) -> str:
    """12_345_678 -> '12.3M'."""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.3g}" if not float(n).is_integer() else str(int(n))


def nearest_valid_heads(d_model: int, n_heads: int) -> int:
    """The divisor of d_model closest to n_heads (for UI suggestions)."""
    return min(_divisors(d_model), key=lambda h: (abs(h - n_heads), h))


__all__ = [
    "ACTIVATIONS", "ARCHITECTURES", "NORMS", "POS_ENCODINGS", "RESIDUALS", "ATTN_SCALES", "FromDict", "ModelConfig",
    "param_count",
    "flops_per_token", "train_memory_bytes", "REFERENCE_PRESETS", "CLASSROOM_PRESETS",
    "ReferencePreset", "human", "nearest_valid_heads", "param_story", "approx",
]
