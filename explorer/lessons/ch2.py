"""The chapter as a lesson (steps follow)."""

from __future__ import annotations

from . import facts
from .base import Lesson, Step

LESSON = Lesson("ch2", "The Transformer architecture", "the chapter",
                "Why order needs positions, the encoder and decoder blocks, Pre-LN and Post-LN, training "
                "with label smoothing, attention maps and beam search.",
                (Step("Why order needs positional encoding", "Self-attention is permutation-equivariant.",
                      facts.pe_view, (facts.D_MODEL, facts.POSITIONS), try_it=facts.pe_try_it),))
