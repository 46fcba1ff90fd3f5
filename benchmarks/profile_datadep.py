"""Where a data-dependent call spends its time on a GPU: wall time per call, torch.profiler (CPU and CUDA)
and cProfile of 20 calls, the generated host programs of the count and fill graphs, and the host time
of each of their statements (MLIR_SYM_HOST_PROFILE=1, codegen/host_profile.py).

    python benchmarks/profile_datadep.py [PATTERN ...]   (names from test/python/test_datadep.py; CUDA only)
"""
import cProfile, io, os, pstats, sys, time
os.environ.setdefault("MLIR_SYM_HOST_PROFILE", "1")
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE); sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
import bench_masks as B
import test_datadep as D
import test_masks as T
from mlir_sym import backend as msb
from mlir_sym.runtime import cuda as rtc
from torch.profiler import ProfilerActivity, profile
names = sys.argv[1:] or ["masked_select_logits", "run_length"]
for case in D.CASES:
    if case.name not in names:
        continue
    seen = len(rtc.PROFILES)
    case = B.on_device(case, "cuda")
    B._reset()
    with torch._dynamo.config.patch(**T.DYNAMO_SETTINGS):
        f = torch.compile(case.fn, backend="mlir_sym", dynamic=True)
        B._safe_call(case, f, case.inputs(case.sizes[0], "random"))
        args = case.inputs(8192, "random")
        with torch.no_grad():
            for _ in range(3): f(*args)
            torch.cuda.synchronize()
            for hp in rtc.PROFILES[seen:]:
                hp.reset()  # count the timed calls only
            t0 = time.perf_counter()
            for _ in range(20): f(*args)
            torch.cuda.synchronize()
            print("=====", case.name, "ms/call", (time.perf_counter() - t0) / 20 * 1e3, flush=True)
            for hp in rtc.PROFILES[seen:]:
                print(hp.report())
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(5): f(*args)
                torch.cuda.synchronize()
            print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25, max_name_column_width=60))
            pr = cProfile.Profile(); pr.enable()
            for _ in range(20): f(*args)
            torch.cuda.synchronize(); pr.disable()
            s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue())
    for k, art in msb._CACHE.items():
        for ph in getattr(art, "phases", []):
            if ph.artifact is not None:
                print("--- count host", ph.artifact.gpu["host_source"][:3000])
        fill = getattr(art, "fill", art)
        print("--- fill host", fill.gpu["host_source"][:5000])
