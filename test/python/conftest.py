"""Shared fixtures of the Python test suite: a clean Dynamo and a clean backend for every test."""
from __future__ import annotations

import logging

import pytest
import torch
import torch._dynamo

from mlir_sym import backend


@pytest.fixture(autouse=True)
def fresh_compiler():
    """Reset Dynamo (its caches and counters) and the backend (stats, artifact cache, config) so that
    each test counts its own compilations."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    backend.stats.reset()
    backend._CACHE.clear()
    saved = dict(vars(backend.config))
    torch.manual_seed(0)
    yield
    for k, v in saved.items():
        setattr(backend.config, k, v)
    torch._dynamo.reset()


@pytest.fixture(autouse=True)
def private_artifact_cache(tmp_path, monkeypatch):
    """Each test stores compiled artifacts (artifact_cache.py) in a directory of its own, so that one
    test's graphs are never loaded by another (each counts its own compiles) and the store path runs
    over the whole suite."""
    from mlir_sym import artifact_cache

    monkeypatch.setattr(artifact_cache, "cache_dir", lambda: tmp_path / "artifacts")


@pytest.fixture
def dynamo_graphs():
    """How many graphs Dynamo has compiled (a recompile adds one) since the test began."""
    return lambda: torch._dynamo.utils.counters["stats"]["unique_graphs"]


@pytest.fixture
def mlir_sym_logs(caplog):
    """caplog capturing the backend's `mlir_sym` loggers (which may not propagate to the root)."""
    logger = logging.getLogger("mlir_sym")
    old = logger.propagate
    logger.propagate = True
    caplog.set_level(logging.WARNING, logger="mlir_sym")
    yield caplog
    logger.propagate = old
