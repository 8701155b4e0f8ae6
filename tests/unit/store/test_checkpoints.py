"""Checkpoints: safetensors + JSON round trips, refusals with useful messages, atomic saves."""

import json

import pytest
import safetensors.torch
import torch

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import atomic, checkpoints
from explorer.store.checkpoints import (
    MAX_UPLOAD_BYTES,
    CheckpointError,
    load_checkpoint,
    load_pretrained,
    load_uploaded,
    pretrained_manifest,
    read_meta,
    save_checkpoint,
)

CONFIGS = {
    "seq2seq": ModelConfig(src_vocab_size=11, tgt_vocab_size=13, d_model=16, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=2, d_ff=32, max_len=12),
    "seq2seq-tied": ModelConfig(src_vocab_size=13, tgt_vocab_size=13, d_model=16, n_heads=2, d_ff=32,
                                max_len=12, tie_embeddings=True, pos_encoding="learned"),
    "lm-tied": ModelConfig(arch="decoder", tgt_vocab_size=13, d_model=16, n_heads=2, d_ff=32, max_len=12,
                           tie_embeddings=True, pos_encoding="rope", norm="post"),
    "vectors": ModelConfig(arch="encoder", src_vocab_size=0, d_model=16, n_heads=2, d_ff=32, max_len=12),
}


def inputs(cfg):
    g = torch.Generator().manual_seed(0)
    if cfg.arch == "encoder-decoder":
        return torch.randint(1, cfg.src_vocab_size, (2, 5), generator=g), torch.randint(1, cfg.tgt_vocab_size, (2, 4),
                                                                                         generator=g)
    if cfg.arch == "decoder":
        return (torch.randint(1, cfg.tgt_vocab_size, (2, 6), generator=g),)
    return (torch.randn(2, 6, cfg.d_model, generator=g),)


def trained_looking(cfg, seed=0):
    """A model whose weights differ from a fresh build (so loading visibly matters)."""
    model = build_model(cfg, seed=seed).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=torch.Generator().manual_seed(seed + 1)))
    return model


@pytest.mark.parametrize("name", CONFIGS)
def test_round_trip_gives_identical_outputs(tmp_path, name):
    cfg = CONFIGS[name]
    model = trained_looking(cfg)
    save_checkpoint(tmp_path, model, {"note": "hello", "metrics": {"val_exact": 1.0}})
    loaded, meta = load_checkpoint(tmp_path)
    assert meta["note"] == "hello" and meta["format"] == 1 and ModelConfig.from_dict(meta["model"]) == cfg
    assert not loaded.training
    x = inputs(cfg)
    assert torch.equal(loaded(*x), model(*x))
    if cfg.tie_embeddings:  # still one shared matrix after loading, not two copies
        assert loaded.output_proj.weight is loaded.decoder.embed.weight
    if cfg.shares_src_tgt_embedding:
        assert loaded.encoder.embed is loaded.decoder.embed


def test_no_pickle_anywhere(tmp_path):
    model = trained_looking(CONFIGS["seq2seq"])
    save_checkpoint(tmp_path, model, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json", "model.safetensors"]
    torch.save(model.state_dict(), tmp_path / "model.safetensors")  # a pickle in disguise
    with pytest.raises(CheckpointError, match="pickle"):
        load_checkpoint(tmp_path)


def corrupt(tmp_path, what):
    cfg = CONFIGS["seq2seq"]
    save_checkpoint(tmp_path, trained_looking(cfg), {})
    meta_path, weights = tmp_path / "meta.json", tmp_path / "model.safetensors"
    meta = json.loads(meta_path.read_text())
    if what == "bad json":
        meta_path.write_text("{not json")
    elif what == "no meta":
        meta_path.unlink()
    elif what == "no weights":
        weights.unlink()
    elif what == "version":
        meta_path.write_text(json.dumps({**meta, "format": 99}))
    elif what == "invalid config":
        meta_path.write_text(json.dumps({**meta, "model": {**meta["model"], "n_heads": 3}}))
    elif what == "unknown field":
        meta_path.write_text(json.dumps({**meta, "model": {**meta["model"], "colour": "red"}}))
    elif what == "shape":
        meta_path.write_text(json.dumps({**meta, "model": {**meta["model"], "d_ff": 64}}))
    elif what == "layers":
        meta_path.write_text(json.dumps({**meta, "model": {**meta["model"], "n_decoder_layers": 3}}))
    elif what == "garbage":
        weights.write_bytes(b"\x07" * 200)
    elif what == "truncated":
        weights.write_bytes(weights.read_bytes()[:300])
    elif what == "extra tensor":
        state = {k: v.contiguous() for k, v in build_model(cfg).state_dict().items()}
        safetensors.torch.save_file({**state, "spare.weight": torch.zeros(2)}, weights)


@pytest.mark.parametrize("what, message", [
    ("bad json", "not valid JSON"), ("no meta", "meta.json is missing"), ("no weights", "model.safetensors is missing"),
    ("version", "format version 99"), ("invalid config", "n_heads=3"), ("unknown field", "colour"),
    ("shape", r"ffn\.linear1\.weight is \[64, 16\]|linear1.weight"), ("layers", "decoder.layers.2"),
    ("garbage", "not a safetensors file"), ("truncated", "safetensors"), ("extra tensor", "spare.weight"),
])
def test_broken_checkpoints_raise_a_useful_error(tmp_path, what, message):
    corrupt(tmp_path, what)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(tmp_path)


def test_an_interrupted_save_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    cfg = CONFIGS["seq2seq"]
    old = trained_looking(cfg, seed=0)
    save_checkpoint(tmp_path, old, {"version": "old"})

    def crash(path):
        assert path.exists()  # the temp file was written; now the machine "dies"
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic, "sync", crash)
    with pytest.raises(OSError, match="disk on fire"):
        save_checkpoint(tmp_path, trained_looking(cfg, seed=5), {"version": "new"})
    monkeypatch.undo()
    loaded, meta = load_checkpoint(tmp_path)
    assert meta["version"] == "old"
    x = inputs(cfg)
    assert torch.equal(loaded(*x), old(*x))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json", "model.safetensors"]  # no temp left


def test_upload_round_trip_and_limits(tmp_path):
    cfg = CONFIGS["seq2seq-tied"]
    model = trained_looking(cfg)
    save_checkpoint(tmp_path, model, {"task": "copy"})
    data, meta_json = (tmp_path / "model.safetensors").read_bytes(), (tmp_path / "meta.json").read_bytes()
    loaded, meta = load_uploaded(data, meta_json)
    x = inputs(cfg)
    assert meta["task"] == "copy" and torch.equal(loaded(*x), model(*x))
    with pytest.raises(CheckpointError, match="limit"):
        load_uploaded(b"\0" * (MAX_UPLOAD_BYTES + 1), meta_json)
    huge = json.loads(meta_json)
    huge["model"].update(d_model=4096, n_heads=8, d_ff=16384)
    with pytest.raises(CheckpointError, match="more than an upload"):
        load_uploaded(data, json.dumps(huge).encode())
    with pytest.raises(CheckpointError, match="pickle"):
        load_uploaded(b"PK\x03\x04" + b"\0" * 100, meta_json)
    with pytest.raises(CheckpointError, match="format version"):
        load_uploaded(data, b'{"model": {}}')


def test_read_meta_alone(tmp_path):
    save_checkpoint(tmp_path, trained_looking(CONFIGS["vectors"]), {"steps": 3})
    assert read_meta(tmp_path)["steps"] == 3


def test_pretrained_manifest_and_loading(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoints, "PRETRAINED_DIR", tmp_path)
    assert pretrained_manifest() == []
    model = trained_looking(CONFIGS["lm-tied"])
    save_checkpoint(tmp_path / "lm", model, {"task": "char-lm"})
    entries = [{"name": "lm", "path": "lm", "task": "char-lm", "description": "d", "val_exact": 0.5},
               {"name": "escape", "path": "../../etc", "task": "x", "description": "d"}]
    (tmp_path / "manifest.json").write_text(json.dumps(entries))
    assert [e["name"] for e in pretrained_manifest()] == ["lm", "escape"]
    loaded, meta = load_pretrained("lm")
    x = inputs(CONFIGS["lm-tied"])
    assert meta["task"] == "char-lm" and torch.equal(loaded(*x), model(*x))
    with pytest.raises(CheckpointError, match="available"):
        load_pretrained("nope")
    with pytest.raises(CheckpointError, match="outside"):
        load_pretrained("escape")
