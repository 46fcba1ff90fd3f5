"""Fixtures of the GPU tests (test/gpu): a clean Dynamo and backend per test, and the e2e cases of
test/python/cases.py on the import path."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))


@pytest.fixture(autouse=True)
def fresh_compiler():
    torch = pytest.importorskip("torch")
    import torch._dynamo

    from mlir_sym import backend

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    backend.stats.reset()
    backend._CACHE.clear()
    saved = dict(vars(backend.config))
    torch.manual_seed(0)
    yield
    for k, v in saved.items():  # a test's config changes (cuda_graphs, ...) end with it
        setattr(backend.config, k, v)
    torch._dynamo.reset()


@pytest.fixture(autouse=True)
def private_artifact_cache(tmp_path, monkeypatch):
    """Each test stores compiled artifacts in a directory of its own (see test/python/conftest.py)."""
    pytest.importorskip("torch")
    from mlir_sym import artifact_cache

    monkeypatch.setattr(artifact_cache, "cache_dir", lambda: tmp_path / "artifacts")


@pytest.fixture
def dynamo_graphs():
    import torch._dynamo

    return lambda: torch._dynamo.utils.counters["stats"]["unique_graphs"]
