"""Inputs of the masked-code tests (test_masks.py, test_datadep.py): masks that are random, all true
or all false (`KINDS`), and random tensors, seeded by size, kind and a salt so every run and every
process sees the same values."""
from __future__ import annotations

from typing import Callable

import torch

KINDS = ("random", "all", "none")  # the mask: random, all true, all false
# Dynamo settings under which masked and data-dependent code reaches the backend (README, "Dynamo settings")
DYNAMO_SETTINGS = dict(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True)


def seeded(a: int, b: int) -> tuple[Callable, Callable, Callable]:
    """(generator, mask, randn) for a suite whose seeds are a * size + b * kind index + salt."""

    def g(n: int, kind: str, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(a * n + b * KINDS.index(kind) + salt)

    def mask(shape, n: int, kind: str, salt: int = 0) -> torch.Tensor:
        if kind == "all":
            return torch.ones(shape, dtype=torch.bool)
        if kind == "none":
            return torch.zeros(shape, dtype=torch.bool)
        return torch.rand(shape, generator=g(n, kind, salt)) > 0.5

    def randn(*shape, n: int, kind: str, salt: int = 0) -> torch.Tensor:
        return torch.randn(*shape, generator=g(n, kind, salt + 1))

    return g, mask, randn
