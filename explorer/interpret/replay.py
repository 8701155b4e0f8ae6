"""Knock-outs that recompute only what they change: what lies upstream of a knocked-out part (the blocks
before it, the attention it sits in, the encoder for a decoder part) is what the intact model computed on the
same validation batch, so the intact pass records it and each knock-out's pass replays it.

Replay is by call order. An evaluation (`ablation.metrics`) runs the teacher-forced pass, then (seq2seq) greedy
decoding: each encoder module is called once in each, on the same input, so every encoder call replays; a
decoder module's calls after the first are greedy steps, whose prefixes a knock-out changes, so only its first
(teacher-forced) call does. A call with nothing recorded is computed, so a replay is only ever a shortcut:
the numbers are those of the full pass (tests/unit/interpret/test_interpret.py compares them for every part).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn

from explorer.interpret.parts import Part, module, stack


class _Inputs:
    """Stands in for a linear layer's forward: records the inputs of its first `limit` calls (None: all)."""

    def __init__(self, fn, limit: int | None) -> None:
        self.fn, self.limit, self.kept, self.recording, self.calls = fn, limit, [], False, 0

    def __call__(self, x):
        if self.recording and (self.limit is None or self.calls < self.limit):
            self.kept.append(x)
        self.calls += 1
        return self.fn(x)


class _Tape:
    """Stands in for a module's forward: records its first `limit` outputs (None: all) and replays them, or
    (a knocked-out sublayer) runs only its last linear layer on the input that layer recorded."""

    def __init__(self, fn, limit: int | None, last: nn.Linear | None = None) -> None:
        self.fn, self.limit, self.kept, self.last = fn, limit, [], last
        self.mode, self.calls = "off", 0

    def __call__(self, *args, **kwargs):
        i, self.calls = self.calls, self.calls + 1
        if self.mode == "replay" and i < len(self.kept):
            return self.kept[i]
        if self.mode == "reproject" and i < len(self.last.forward.kept):
            return self.last(self.last.forward.kept[i])
        out = self.fn(*args, **kwargs)
        if self.mode == "record" and (self.limit is None or i < self.limit):
            self.kept.append(out)
        return out


class Tapes:
    """Tapes on a private model's blocks and sublayers (the model is changed: give it a copy)."""

    def __init__(self, model: nn.Module) -> None:
        self.model, self.tapes, self.inputs = model, {}, []
        enc = getattr(model, "encoder", None)
        for kind in ("enc_self", "dec_self"):
            where = stack(model, kind)
            if where is None or (kind == "dec_self" and where is enc):
                continue
            limit = None if where is enc else 1
            for block in where.layers:
                self._tape(block, limit)
                for sub in (block.self_attn, getattr(block, "cross_attn", None), block.ffn):
                    if sub is not None:
                        last = sub.out_proj if hasattr(sub, "out_proj") else sub.linear2
                        last.forward = _Inputs(last.forward, limit)
                        self.inputs.append(last.forward)
                        self._tape(sub, limit, last)

    def _tape(self, mod: nn.Module, limit: int | None, last: nn.Linear | None = None) -> None:
        mod.forward = self.tapes[mod] = _Tape(mod.forward, limit, last)

    def upstream(self, part: Part) -> list[tuple[_Tape, str]]:
        """(tape, mode) for what `part` does not change: the blocks of its stack before its layer and the
        sublayers before it in its block replay, the encoder too for a decoder part; its own sublayer runs
        only its last linear layer, on the input the intact pass gave it."""
        enc = getattr(self.model, "encoder", None)
        own = stack(self.model, part.kind)
        before = list(enc.layers) if enc is not None and own is not enc else []
        before += own.layers[:part.layer]
        block = own.layers[part.layer]
        subs = [block.self_attn, getattr(block, "cross_attn", None), block.ffn]
        mine = module(self.model, part)
        before += [s for s in subs[:subs.index(mine)] if s is not None]
        return [(self.tapes[m], "replay") for m in before] + [(self.tapes[mine], "reproject")]

    @contextmanager
    def _mode(self, which: list[tuple[_Tape, str]]) -> Iterator[None]:
        for tape, mode in which:
            tape.mode, tape.calls = mode, 0
        try:
            yield
        finally:
            for tape in (*self.tapes.values(), *self.inputs):
                tape.calls = 0
            for tape in self.tapes.values():
                tape.mode = "off"
            for tape in self.inputs:
                tape.recording = False

    def record(self):
        """While it runs, every tape keeps what the model computes."""
        for tape in (*self.tapes.values(), *self.inputs):
            tape.kept = []
        for tape in self.inputs:
            tape.recording = True
        return self._mode([(tape, "record") for tape in self.tapes.values()])

    def replay(self, part: Part):
        """While it runs, what lies upstream of `part` is replayed from the recording."""
        return self._mode(self.upstream(part))


__all__ = ["Tapes"]
