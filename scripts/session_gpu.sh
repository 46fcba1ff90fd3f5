#!/usr/bin/env bash
# Device runs of a session, logs under $OUT: `tests` (gpu_check.sh tests at this tree), `prof-new` /
# `prof-base` (profile_hf_calls.py, CUDA graphs, GPT-2 and BERT at length 32, batch 1 and 2, bf16 and
# float32; base: the tree in base.tar, made with `git archive <commit> -o base.tar`), `calls`
# (bench_hf_calls.py in bf16 against inductor). The same scripts run for base and HEAD.
set -u
cd "$(dirname "$0")/.."
here=$PWD
export MLIR_SYM_CACHE_DIR=$(mktemp -d)
python3 -m pip install -q ml_dtypes >/dev/null 2>&1
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
cp benchmarks/profile_hf_calls.py benchmarks/bench_hf_calls.py /tmp/
prof() {  # tag
  for dt in bfloat16 float32; do
    for b in 1 2; do
      timeout 200 python3 /tmp/profile_hf_calls.py --models gpt2,bert --length 32 --batch $b --calls 30 \
        --backends mlir_sym_graphs --dtype $dt --top 0 > "$OUT/prof-$1-$dt-b$b.txt" 2>&1
      grep "==" "$OUT/prof-$1-$dt-b$b.txt"
    done
  done
}
for what in "$@"; do
  case $what in
    tests) bash scripts/gpu_check.sh tests ;;
    prof-new) PYTHONPATH=$here/benchmarks:${PYTHONPATH:-} prof new ;;
    prof-base)
      rm -rf /tmp/base && mkdir -p /tmp/base && tar -xf base.tar -C /tmp/base && cp -r .gpu /tmp/base/
      (cd /tmp/base && python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1)
      PYTHONPATH=/tmp/base/benchmarks:${PYTHONPATH:-} MLIR_SYM_CACHE_DIR=$(mktemp -d) prof base
      python3 -m pip install -q --no-deps --no-build-isolation -e "$here" >/dev/null 2>&1 ;;
    calls)
      timeout 400 python3 benchmarks/bench_hf_calls.py --dtype bfloat16 --calls 100 --backends inductor,mlir_sym,mlir_sym_graphs \
        > "$OUT/hf-calls-bf16.txt" 2>&1
      tail -8 "$OUT/hf-calls-bf16.txt" ;;
    *) echo "unknown: $what"; exit 2 ;;
  esac
done
