#!/usr/bin/env bash
# Create .venv and install mlir_sym with its test tools. torch comes first, pinned to the CPU build
# that this workplace keeps on disk: a bare `torch` requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/python -c "import torch, torch_mlir, mlir_sym; print('mlir_sym ready: torch', torch.__version__)"
