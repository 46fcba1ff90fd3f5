"""The README's main job (`make demo`) on a fresh cache and again on the cache the first run filled:
the second run loads the artifact from the disk instead of compiling it, and both must pass (a
second `make demo` once failed: the loaded artifact was not among the process's artifacts)."""
from __future__ import annotations

import os
import subprocess
import sys


def _demo(cache_dir: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MLIR_SYM_CACHE_DIR=cache_dir)
    return subprocess.run([sys.executable, "-m", "mlir_sym.demo", "--sizes", "8,13"], env=env,
                          capture_output=True, text=True, timeout=600)


def test_demo_runs_cold_and_warm(tmp_path):
    cold = _demo(str(tmp_path))
    assert cold.returncode == 0, cold.stderr[-2000:]
    assert "compilations: 1 for 2 different input shapes, artifacts loaded from the disk cache: 0" in cold.stdout
    assert "sym.symbol" in cold.stdout  # the imported module is printed
    warm = _demo(str(tmp_path))
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert "compilations: 0 for 2 different input shapes, artifacts loaded from the disk cache: 1" in warm.stdout
    assert "OK: one compiled artifact served every size" in warm.stdout
