"""Packing: a right-padded batch with its pads left out, for the position-wise layers.

LayerNorm, the attention projections, the FFN and the output layer act on each position alone, so
they can run on the N real tokens of a padded (B, T) batch instead of all B * T slots (a quarter
less work at lengths 10-20). Attention needs the padded layout: `to_heads` scatters its packed
projections straight into the padded heads, `from_heads` gathers its output back into packed rows.
Every real position gets exactly what it gets without packing.
"""

from __future__ import annotations

import torch
from torch import Tensor


class Packing:
    """Where the real tokens of a right-padded batch sit. Position-wise layers (LayerNorm, projections,
    FFN, output) run on those N rows only, a quarter less work at lengths 10-20; attention unpacks to
    the padded (B, T, ...) layout and packs its output back. Same function, pads simply left out."""

    def __init__(self, mask: Tensor) -> None:                           # (B, 1, 1, T) from padding_mask
        self.b, self.t = mask.size(0), mask.size(-1)
        self.idx = mask.flatten().nonzero().squeeze(1)                  # (N,) flat (row, position)
        self._head_rows: dict[tuple[int, int], Tensor] = {}

    def pack(self, x: Tensor) -> Tensor:
        return x.flatten(0, 1).index_select(0, self.idx)                # (B, T, *) -> (N, *)

    def unpack(self, x: Tensor) -> Tensor:
        """(N, *) -> (B, T, *), zeros at the pads."""
        # in place into fresh zeros: the out-of-place index_copy would first copy the zeros
        out = x.new_zeros(self.b * self.t, *x.shape[1:]).index_copy_(0, self.idx, x)
        return out.view(self.b, self.t, *x.shape[1:])

    def head_rows(self, n: int, heads: int) -> Tensor:
        """For the N tokens' n * heads d_head-wide pieces, in their order in a packed projection
        (token, projection, head), the row each takes in a (n, B, H, T, d_head) layout."""
        if (n, heads) not in self._head_rows:
            row, pos = self.idx // self.t, self.idx % self.t               # (N,) each
            i, h = torch.arange(n)[:, None], torch.arange(heads)[None, :]   # (n, 1), (1, H)
            rows = ((i * self.b + row[:, None, None]) * heads + h) * self.t + pos[:, None, None]
            self._head_rows[n, heads] = rows.flatten()                  # (N * n * H,)
        return self._head_rows[n, heads]


def to_heads(packing: Packing | None, x: Tensor, n: int, heads: int) -> Tensor:
    """n projections side by side, (N, n*d_model) packed or (B, T, n*d_model), as (n, B, H, T, d_head).
    From packed rows in one pass each way (d_head-wide pieces straight to their places among zeros):
    unpacking and then splitting the heads would copy everything twice, and back three times."""
    if packing is None:
        b, t, _ = x.shape
        return x.view(b, t, n, heads, -1).permute(2, 0, 3, 1, 4).contiguous()
    d_head = x.size(-1) // (n * heads)
    out = x.new_zeros(n * packing.b * heads * packing.t, d_head)
    out.index_copy_(0, packing.head_rows(n, heads), x.reshape(-1, d_head))
    return out.view(n, packing.b, heads, packing.t, d_head)


def from_heads(packing: Packing | None, x: Tensor) -> Tensor:
    """Attention's output (B, H, T, d_head) back to (N, d_model) packed, or (B, T, d_model)."""
    b, h, t, d_head = x.shape
    if packing is None:
        return x.transpose(1, 2).reshape(b, t, h * d_head)
    return x.reshape(-1, d_head).index_select(0, packing.head_rows(1, h)).view(-1, h * d_head)


def unpack_if(packing: Packing | None, x: Tensor) -> Tensor:
    return x if packing is None else packing.unpack(x)


def pack_if(packing: Packing | None, x: Tensor) -> Tensor:
    return x if packing is None else packing.pack(x)
