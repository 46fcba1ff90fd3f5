#!/usr/bin/env bash
# The GPU path's checks on a machine with a GPU, logs under $OUT (default /tmp/gpu_out), a short
# summary on stdout. From the project root, after `bash ../shared/gpu/stage.sh` here and, there,
# `source .gpu/gpu-env.sh`:
#   bash scripts/gpu_check.sh tests     # test/gpu on the device, in two halves (tests1: e2e, data-dependent,
#                                       # masked, gathers; tests2: the rest), each under 9 minutes
#   bash scripts/gpu_check.sh kernels   # gpu_reference.py kernels + tiny graph, inductor side by side
#   bash scripts/gpu_check.sh masks     # bench_masks.py --device cuda, both suites
#   bash scripts/gpu_check.sh compile   # bench_hf_gpu.py (one process per row; about 10 minutes)
#   bash scripts/gpu_check.sh training  # bench_training.py in bf16 and float32, eager and inductor beside (about 5 minutes)
set -u
out=${OUT:-/tmp/gpu_out}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
export MLIR_SYM_CACHE_DIR=${MLIR_SYM_CACHE_DIR:-/tmp/mlir_sym_cache}
for what in "${@:-tests}"; do
  case $what in
    tests|tests1|tests2)
      # two halves, each under the device's 10-minute limit a command: `tests` runs both
      part1="test/gpu/test_gpu_e2e.py test/gpu/test_gpu_datadep.py test/gpu/test_gpu_masks.py test/gpu/test_gpu_gathers_and_cache.py"
      part2="test/gpu/test_cuda_graphs.py test/gpu/test_cublas.py test/gpu/test_attention_kernel.py test/gpu/test_training_attention_kernels.py test/gpu/test_ptx.py test/gpu/test_cubin.py test/gpu/test_host_outputs.py test/gpu/test_gpu_generate_autocast.py test/gpu/test_gpu_mutations.py test/python/test_mutations.py test/python/test_artifact_cache.py test/python/test_variants.py test/python/test_direct_calls.py test/python/test_fast_call.py test/gpu/test_fast_call_gpu.py test/python/test_float_inputs.py test/python/test_nan_arg_reductions.py test/python/test_library_conv.py test/python/test_autocast.py"
      case $what in tests) parts="1 2" ;; tests1) parts=1 ;; tests2) parts=2 ;; esac
      for k in $parts; do
        files=part$k
        timeout 540 python3 -m pytest -q ${!files} > "$out/tests$k.log" 2>&1
        tail -1 "$out/tests$k.log"; grep -E "^FAILED" "$out/tests$k.log" | head -20
      done ;;
    kernels)
      timeout 300 python3 .gpu/gpu_reference.py --backends inductor,mlir_sym --skip-hf --json "$out/reference.json" \
        > "$out/reference.log" 2>&1
      grep -E "tiny graph" "$out/reference.log" ;;
    masks)
      for suite in masks datadep; do
        timeout 280 python3 benchmarks/bench_masks.py --device cuda --no-inductor --repeat 5 --suite $suite \
          > "$out/masks_$suite.log" 2>&1
        grep -E "^[a-z_]+ +(masks|datadep) " "$out/masks_$suite.log"
      done ;;
    compile)
      timeout 590 python3 benchmarks/bench_hf_gpu.py --json "$out/hf_compile.json" > "$out/hf_compile.log" 2>&1
      tail -12 "$out/hf_compile.log" ;;
    training)
      for dtype in bfloat16 float32; do
        timeout 280 python3 benchmarks/bench_training.py --dtype $dtype --lengths 64,256,100 \
          --backends eager,inductor,mlir_sym --top 40 > "$out/training_$dtype.txt" 2>&1
        grep -E "^\| (inductor|mlir_sym) " "$out/training_$dtype.txt"
      done ;;
    *) echo "unknown check: $what (tests, kernels, masks, compile, training)"; exit 2 ;;
  esac
done
