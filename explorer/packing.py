"""Packing: a right-padded batch with its pads left out, for the position-wise layers.

LayerNorm, the attention projections, the FFN and the output layer act on each position alone, so
they can run on the N real tokens of a padded (B, T) batch instead of all B * T slots (a quarter
less work at lengths 10-20). Attention needs the padded layout: it unpacks its projections and packs
its output back. Every real position gets exactly what it gets without packing.
"""

from __future__ import annotations

from torch import Tensor


class Packing:
    """Where the real tokens of a right-padded batch sit. Position-wise layers (LayerNorm, projections,
    FFN, output) run on those N rows only, a quarter less work at lengths 10-20; attention unpacks to
    the padded (B, T, ...) layout and packs its output back. Same function, pads simply left out."""

    def __init__(self, mask: Tensor) -> None:                           # (B, 1, 1, T) from padding_mask
        self.b, self.t = mask.size(0), mask.size(-1)
        self.idx = mask.flatten().nonzero().squeeze(1)                  # (N,) flat (row, position)

    def pack(self, x: Tensor) -> Tensor:
        return x.flatten(0, 1).index_select(0, self.idx)                # (B, T, *) -> (N, *)

    def unpack(self, x: Tensor) -> Tensor:
        """(N, *) -> (B, T, *), zeros at the pads."""
        # in place into fresh zeros: the out-of-place index_copy would first copy the zeros
        out = x.new_zeros(self.b * self.t, *x.shape[1:]).index_copy_(0, self.idx, x)
        return out.view(self.b, self.t, *x.shape[1:])


def _unpack(packing: Packing | None, x: Tensor) -> Tensor:
    return x if packing is None else packing.unpack(x)


def _pack(packing: Packing | None, x: Tensor) -> Tensor:
    return x if packing is None else packing.pack(x)
