"""GPU code generation for every e2e case, on the CPU: sym-lower-to-nvvm, the host program and PTX
(llvmlite's NVPTX backend), with the disk caches off, so every kernel goes through LLVM's parser and
the NVPTX backend (a constant LLVM cannot parse, a kernel the backend rejects, fail here). Also the
code cache: a second compilation of the same graph is a cache hit with the same host program and PTX.

    pytest -q test/gpu/test_codegen_cases.py [-k name]
"""
from __future__ import annotations

import re

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from cases import CASES, Case
from mlir_sym.backend import _decompositions
from mlir_sym.capture import CompileStats, check_supported, variant_specs
from mlir_sym.codegen import ptx
from mlir_sym.gpu_compile import codegen_variant
from mlir_sym.importer import import_graph

pytestmark = pytest.mark.skipif(not ptx.nvptx_available(), reason="llvmlite without the NVPTX target")


def _codegen(case: Case) -> list:
    codes = []

    def compiler(gm, _):
        ig = import_graph(gm, target="gpu")
        check_supported(ig)
        for spec in variant_specs(ig, (), False):
            codes.append(codegen_variant(ig, "main", spec, CompileStats()))
        return make_boxed_func(gm.forward)

    torch._dynamo.reset()
    be = aot_autograd(fw_compiler=compiler, inference_compiler=compiler, decompositions=_decompositions())
    fn = case.build()
    with torch.no_grad():
        torch.compile(fn, backend=be, dynamic=True)(*case.inputs(case.sizes[0]))
    return codes


def _gpu_code_compiler(codes: list):
    """An AOTAutograd graph compiler that appends each graph's generic GPU code to `codes` (and runs
    the graph eagerly)."""
    def compiler(gm, _):
        ig = import_graph(gm, target="gpu")
        check_supported(ig)
        codes.append(codegen_variant(ig, "main", {}, CompileStats()))
        return make_boxed_func(gm.forward)

    return compiler


def _codegen_fn(fn, args, settings: dict | None = None, backward: bool = False) -> list:
    """The generic variant's GPU code of every graph `fn` compiles to (Dynamo + AOTAutograd, dynamic);
    with `backward`, its output's backward too (the last code is the backward graph's)."""
    codes = []
    compiler = _gpu_code_compiler(codes)
    torch._dynamo.reset()
    be = aot_autograd(fw_compiler=compiler, bw_compiler=compiler, inference_compiler=compiler,
                      decompositions=_decompositions())
    with torch._dynamo.config.patch(**(settings or {})), torch.set_grad_enabled(backward):
        out = torch.compile(fn, backend=be, dynamic=True)(*args)
        if backward:
            out.backward()
    return codes


def _cross_entropy_backward_code(x: torch.Tensor, t: torch.Tensor):
    """The GPU code of cross entropy's backward graph."""
    fn = lambda x, t: torch.nn.functional.cross_entropy(x.flatten(0, 1), t.flatten())  # noqa: E731
    return _codegen_fn(fn, (x, t), backward=True)[-1]


def _training_code(monkeypatch, f, *inputs, dynamic: bool = True) -> list[str]:
    """The host programs of `f`'s forward and backward graphs on the GPU, differentiated attention
    taking its library form on these CPU tensors (attention_grad_op "all")."""
    from torch._guards import detect_fake_mode

    from mlir_sym.backend import config, prepare_for_aot

    monkeypatch.setattr(config, "attention_grad_op", "all")
    codes = []
    compiler = _gpu_code_compiler(codes)
    inner = aot_autograd(fw_compiler=compiler, bw_compiler=compiler, decompositions=_decompositions())

    def be(gm, example_inputs):
        prepare_for_aot(gm, detect_fake_mode(example_inputs).shape_env)
        return inner(gm, example_inputs)

    torch._dynamo.reset()
    torch.compile(f, backend=be, dynamic=dynamic)(*inputs).backward()
    return [c.program.source for c in codes]


def _heads_attention(qkv):
    b, t, _ = qkv.shape
    q, k, v = (z.view(b, t, 4, 16).transpose(1, 2) for z in qkv.split(64, -1))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, 64)


def test_training_attention_is_library_calls_on_views(monkeypatch):
    """Differentiated causal attention over heads split from one projection: the forward's GPU code
    calls PyTorch's memory-efficient forward on that projection (attention_forward_packed: the
    input, before any kernel), and the backward its packed form, whose result is the projection's
    gradient (dq, dk, dv in one buffer)."""
    forward, backward = _training_code(monkeypatch, lambda qkv: _heads_attention(qkv).sum(),
                                       torch.randn(2, 10, 192, requires_grad=True))
    assert forward.count("rt.library_sdpa('forward_packed', True, 0.25, ('float32',),") == 1
    assert "heads=4)" in forward
    assert forward.index("rt.library_sdpa(") < forward.index("rt.launch")
    assert backward.count("rt.library_sdpa('backward_packed', True, 0.25,") == 1
    assert "rt.library_sdpa('backward', " not in backward
    assert "rt.library_einsum" not in forward + backward


def test_training_attention_results_sizes_are_known(monkeypatch):
    """The projection's gradient from the packed backward feeds the products of the projection's
    backward, whose size checks torch-mlir writes on it: proven from the call's operands
    (`sym.result_dims`, sym-assert-elim), so the backward is one block (no branch splitting the host
    program, which also kept the bias gradients' copies into their outputs)."""
    w = torch.randn(32, 192, requires_grad=True)
    _, backward = _training_code(monkeypatch, lambda x, w: _heads_attention(x @ w).sum(),
                                 torch.randn(2, 10, 32, requires_grad=True), w)
    assert "rt.library_sdpa('backward_packed'" in backward
    assert "_b = " not in backward


def test_training_attention_of_separate_projections(monkeypatch):
    """q, k, v from three projections: the forward calls the unpacked kernel on [B, L, H, E] views
    read in place (the transposes to that layout and back cancel, fx_rewrites.composed_permutes:
    no kernel before the call), the backward the unpacked one (packed_qkv_grads finds no
    concatenation)."""
    def f(q, k, v):
        b, t, _ = q.shape
        q, k, v = (z.view(b, t, 4, 16).transpose(1, 2) for z in (q, k, v))
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum()

    forward, backward = _training_code(monkeypatch, f, *(torch.randn(2, 10, 64, requires_grad=True) for _ in range(3)))
    assert forward.count("rt.library_sdpa('forward', True, 0.25,") == 1
    assert forward.index("rt.library_sdpa(") < forward.index("rt.launch")
    assert backward.count("rt.library_sdpa('backward', True, 0.25,") == 1


def test_grads_concatenated_in_another_layout_are_not_packed(monkeypatch):
    """q, k, v split from a [B, T * H, 3 E] projection (heads interleaved with the sequence): the
    backward concatenates dq, dk, dv viewed as [B, T * H, E], which is not the memory-efficient
    kernel's [B, T, 3, H, E] chunk, so the backward calls the unpacked kernel (a review found the
    packed one taken here, its buffer then read in the wrong order)."""
    def f(x):
        b, th, _ = x.shape
        q, k, v = (z.view(b, th // 4, 4, 16).transpose(1, 2) for z in x.split(16, -1))
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum()

    # static sizes: with a symbolic length Dynamo's heads dim is `s // (s // 4)`, which takes the math form
    _, backward = _training_code(monkeypatch, f, torch.randn(2, 40, 48, requires_grad=True), dynamic=False)
    assert "rt.library_sdpa('backward', " in backward
    assert "rt.library_sdpa('backward_packed'" not in backward


def _cross_attention(x, y):
    """q from x [B, L, 64], k and v from y [B, S, 128] (another length)."""
    b, t, _ = x.shape
    s = y.shape[1]
    q = x.view(b, t, 4, 16).transpose(1, 2)
    k, v = (z.view(b, s, 4, 16).transpose(1, 2) for z in y.split(64, -1))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v).sum()


@pytest.mark.parametrize("form", ["bf16_packed", "cross_attention", "head_dim_128"])
def test_training_attention_forms_lower(monkeypatch, form):
    """Other forms of differentiated attention lower to the library calls on the GPU: a bf16
    projection (half operands, a float32 log-sum-exp), cross attention (key length other than the
    query's: the results' sizes from q and v, `sym.result_dims`), a head dim of 128."""
    if form == "bf16_packed":
        args, f, call = (torch.randn(2, 10, 192, dtype=torch.bfloat16, requires_grad=True),), \
            lambda qkv: _heads_attention(qkv).float().sum(), "rt.library_sdpa('forward_packed', True, 0.25, ('bfloat16',),"
    elif form == "cross_attention":
        args, f, call = (torch.randn(2, 10, 64, requires_grad=True), torch.randn(2, 7, 128, requires_grad=True)), \
            _cross_attention, "rt.library_sdpa('forward', False, 0.25,"
    else:
        def f(qkv):
            b, t, _ = qkv.shape
            q, k, v = (z.view(b, t, 2, 128).transpose(1, 2) for z in qkv.split(256, -1))
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).sum()
        args, call = (torch.randn(2, 10, 768, requires_grad=True),), f"rt.library_sdpa('forward_packed', True, {1.0 / 128 ** 0.5!r},"
    forward, backward = _training_code(monkeypatch, f, *args)
    assert forward.count(call) == 1, forward
    assert "rt.library_sdpa('backward" in backward
    assert "_b = " not in forward + backward


def test_saved_attention_output_is_one_buffer(monkeypatch):
    """The forward saves attention's output twice, as an alias for attention's backward and flattened
    for the projection's weight gradient: the second is a view of the first output (importer
    `_alias_plans`), so the host program copies it into one output buffer, not two."""
    w = torch.randn(64, 32, requires_grad=True)
    forward, _ = _training_code(monkeypatch, lambda qkv, w: (_heads_attention(qkv) @ w).sum(),
                                torch.randn(2, 10, 192, requires_grad=True), w)
    # out and lse (3 with the flattened out a copy of its own): outputs on the kernel's own results
    # (Runtime.adopt), as nothing reads them after
    assert forward.count("rt.adopt(") == 2 and ".copy_(" not in forward, forward


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES if not c.xfail])
def test_ptx_for_case(case: Case, tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    codes = _codegen(case)
    assert codes
    for code in codes:
        for kernel in code.program.kernels:
            assert f".entry {kernel}(" in code.ptx, kernel
        assert ("def host(" in code.program.source)


def test_code_cache_second_compile_hits(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    case = next(c for c in CASES if c.name == "softmax_logsoftmax")
    first = _codegen(case)
    assert list((tmp_path / "code").glob("*.json"))
    again = _codegen(case)
    assert [c.ptx for c in again] == [c.ptx for c in first]
    assert [c.program.source for c in again] == [c.program.source for c in first]
    assert not again[0].llvm_ir  # not lowered again: from the cache


@pytest.mark.parametrize("name", ["masked_amax", "masked_sum_over_numel", "image_token_merge", "masked_max_pool"])
def test_masked_patterns_read_counts_back_on_the_host(name, tmp_path, monkeypatch):
    """These masked patterns check or divide by a count computed on the device: the host program
    reads it back (`rt.read`) instead of failing to lower ('arith.cmpi' computes a value the host
    needs, on the H100)."""
    from test_masks import BY_NAME, DYNAMO_SETTINGS

    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    case = BY_NAME[name]
    codes = _codegen_fn(case.fn, case.inputs(6, "random"), DYNAMO_SETTINGS)
    assert codes and any("rt.read(" in c.program.source for c in codes)


def test_topk_sorts_with_a_library_call(tmp_path, monkeypatch):
    """top-k filtering sorts each row: a stable torch.sort call from the host program (a one-thread
    bubble sort took 425 ms at [2048, 2048] on the H100)."""
    from test_masks import BY_NAME, DYNAMO_SETTINGS

    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    case = BY_NAME["top_k_filter"]
    codes = _codegen_fn(case.fn, case.inputs(6, "random"), DYNAMO_SETTINGS)
    assert "rt.library_sort(True, 1, " in codes[0].program.source


def test_cumsum_scans_with_a_library_call(tmp_path, monkeypatch):
    """cumsum is a torch.cumsum call from the host program, not a one-thread loop over the rows."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    codes = _codegen_fn(lambda x: torch.cumsum(x, 1) * 2, (torch.randn(5, 7),))
    assert "rt.library_scan('add', True, 1, " in codes[0].program.source


def test_cummax_scans_with_library_calls(tmp_path, monkeypatch):
    """cummax's two scans (its values, then the positions taken) are torch.cummax calls from the host
    program, not one-thread loops."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    codes = _codegen_fn(lambda x: torch.cummax(x, 1), (torch.randn(5, 7),))
    assert codes[0].program.source.count("rt.library_scan('max', True, 1, ") == 2


def test_data_dependent_fill_runs_in_parallel(tmp_path, monkeypatch):
    """The fill phase of `x[mask]` (positions by cumsum, rows placed by scatter): torch.cumsum from the
    host program, the scatter a kernel of its own (sym-scatter-to-parallel: a thread per update, no
    index_put_ call); no one-thread loop over the elements remains."""

    from mlir_sym import datadep
    from mlir_sym.capture import compile_graph
    from test_datadep import BY_NAME as DD, DYNAMO_SETTINGS as DD_SETTINGS

    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    codes = []

    def compile_and_codegen(gm, name="main", **kw):
        art, ig, st = compile_graph(gm, name=name, **kw)
        codes.append(codegen_variant(ig, name, {}, CompileStats()))
        return art, ig, st

    def compiler(gm, _):
        datadep.compile_graph(gm, compile_and_codegen)
        return make_boxed_func(gm.forward)

    torch._dynamo.reset()
    be = aot_autograd(fw_compiler=compiler, inference_compiler=compiler, decompositions=_decompositions())
    case = DD["ragged_pack"]
    with torch._dynamo.config.patch(**DD_SETTINGS), torch.no_grad():
        torch.compile(case.fn, backend=be, dynamic=True)(*case.inputs(6, "random"))
    fill = codes[-1].program.source
    assert "rt.library_scan(" in fill and "rt.library_scatter(" not in fill
    acc = re.search(r"rt\.library_scan\('add', True, 0, v\d+, v\d+, (v\d+)\)", fill).group(1)
    assert f"{acc} = None" in fill  # the inclusive scan's accumulator: read by nothing, not allocated
    serial = re.findall(r"rt\.launch\((K_\w+), (v\d+), \2, \2, \2, \2, \2,", fill)
    for kernel, _ in serial:  # what still runs in one thread is straight-line scalar code
        body = codes[-1].ptx.split(f".entry {kernel[2:]}(")[1].split(".entry")[0]
        assert not re.search(r"bra(\.uni)?\s+\$L__BB", body), kernel


def test_generalized_contraction_is_a_library_call(tmp_path, monkeypatch):
    """GPT-2's `x.view(-1, C) @ W` (Conv1D's addmm): elementwise fusion folds the reshape through the
    matmul and generalizes it; it still goes to cuBLAS (an einsum call, adding the bias in its
    epilogue), not to our loops."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    w, b = torch.randn(8, 12), torch.randn(12)

    def conv1d(x):
        return torch.addmm(b, x.view(-1, x.size(-1)), w).view(x.size(0), x.size(1), 12)

    codes = _codegen_fn(conv1d, (torch.randn(2, 5, 8),))
    src = codes[0].program.source
    assert "rt.library_einsum_bias('abd,dc->abc', ('float32', 'float32', 'float32', 'float32'), " in src, src


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_half_contractions_are_library_calls(dtype, tmp_path, monkeypatch):
    """A half nn.Linear (whose decomposition upcasts input and weight to float32), GPT-2's Conv1D
    addmm and attention's q @ k^T in bf16 / f16: every product is a library call on the half buffers
    (sym-matmul-half-operands), none a loop kernel of ours (the bf16 GPT-2 took 1.33 times
    inductor's time a call at length 128 before)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 12).to(dtype)
    w, b = torch.randn(8, 12, dtype=dtype), torch.randn(12, dtype=dtype)

    def f(x, q, k):
        conv1d = torch.addmm(b, x.view(-1, x.size(-1)), w).view(x.size(0), x.size(1), 12)
        return lin(x) + conv1d, q @ k.transpose(-1, -2)

    x, q = torch.randn(2, 5, 8, dtype=dtype), torch.randn(2, 4, 5, 16, dtype=dtype)
    src = _codegen_fn(f, (x, q, q.clone()))[0].program.source
    calls = re.findall(r"rt\.library_einsum(_bias)?\(", src)
    assert len(calls) == 3, src


def test_half_linear_multiplies_the_half_buffers(tmp_path, monkeypatch):
    """A bf16 nn.Linear on a 2-D input: one library call on the bf16 input and weight, adding the
    bias in its epilogue and writing the bf16 result (sym-gpu-gemm-bias-epilogue, then
    sym-gpu-library-half-results): no kernel of ours. Without sym-matmul-half-operands, two
    conversion kernels (the weight's at every call) and a float32 GEMM; without the epilogue, a
    float32 product and a kernel adding the bias and rounding."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 12).to(torch.bfloat16)
    src = _codegen_fn(lambda x: lin(x), (torch.randn(5, 8, dtype=torch.bfloat16),))[0].program.source
    assert len(re.findall(r"rt\.library_einsum_bias\('ik,kj->ij', \(('bfloat16', ){3}'bfloat16'\)", src)) == 1, src
    assert "rt.library_einsum(" not in src and "rt.launch(" not in src, src


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_linear_bias_is_added_in_the_gemm(dtype, tmp_path, monkeypatch):
    """A [B, L, D] linear layer whose output feeds a residual add and a GELU: the GEMM adds the bias
    (cuBLASLt's epilogue, as eager's addmm), the kernels that read its result do not read the bias
    (sym-gpu-gemm-bias-epilogue). bf16: the GEMM writes the rounded bf16 result, so no kernel reads
    a float32 product."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    fc = torch.nn.Linear(16, 16).to(dtype)

    def f(x):
        y = fc(x)
        return x + y, torch.nn.functional.gelu(y)

    src = _codegen_fn(f, (torch.randn(2, 5, 16, dtype=dtype),))[0].program.source
    t = "'bfloat16'" if dtype == torch.bfloat16 else "'float32'"
    calls = re.findall(rf"rt\.library_einsum_bias\('abd,cd->abc', \(({t}, ){{3}}{t}\), (v\d+), (v\d+), (v\d+), ", src)
    assert len(calls) == 1 and "rt.library_einsum(" not in src, src
    bias = calls[0][3]
    launches = re.findall(r"rt\.launch\([^\n]*", src)
    assert len(launches) == 1 and f"rt.desc({bias})" not in launches[0], src  # one kernel, not reading the bias


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_linear_bias_gradient_is_computed_by_the_weight_gradient(dtype, tmp_path, monkeypatch):
    """A linear layer's backward: the weight gradient's GEMM also sums dY over the rows into the bias
    gradient (cuBLASLt's BGRADB epilogue, sym-gpu-gemm-bias-grad): one launch is left (dY itself),
    where the column sum took two (its partials and their sum)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 24).to(dtype)
    x = torch.randn(3, 5, 16, dtype=dtype, requires_grad=True)
    src = _codegen_fn(lambda x: (lin(x) * 1.5).sum(), (x,), backward=True)[-1].program.source
    t = "'bfloat16'" if dtype == torch.bfloat16 else "'float32'"
    assert len(re.findall(rf"rt\.library_einsum_bgrad\('ca,cb->ab', \(({t}, ){{3}}{t}\), ", src)) == 1, src
    assert src.count("rt.launch(") == 1, src


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_half_products_write_half_results(dtype, tmp_path, monkeypatch):
    """Attention's `probs @ v` and a linear without bias in bf16 / f16: cuBLAS writes the half result
    (sym-gpu-library-half-results), no float32 buffer and no rounding kernel; the product with a bias
    too, adding its bias in the epilogue (sym-gpu-gemm-bias-epilogue)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    torch.manual_seed(0)
    proj = torch.nn.Linear(16, 16, bias=False).to(dtype)
    lin = torch.nn.Linear(16, 8).to(dtype)

    def f(p, v):
        return lin(proj(torch.softmax(p, dim=-1) @ v))

    t = {"bfloat16": "'bfloat16'", "float16": "'float16'"}[str(dtype).split(".")[1]]
    p, v = torch.randn(2, 4, 5, 5, dtype=dtype), torch.randn(2, 4, 5, 16, dtype=dtype)
    src = _codegen_fn(f, (p, v))[0].program.source
    assert len(re.findall(rf"rt\.library_einsum\(True, '[a-z,>-]+', \({t}, {t}, {t}\)", src)) == 2, src
    assert len(re.findall(rf"rt\.library_einsum_bias\('[a-z,>-]+', \({t}, {t}, {t}, {t}\)", src)) == 1, src
    assert "'float32'" not in src, src
    # softmax (2), v's copy for the batched product: no rounding kernel after the half products, no
    # bias add (5 launches without sym-gpu-library-half-results, 4 without sym-gpu-gemm-bias-epilogue)
    assert src.count("rt.launch(") == 3, src


@pytest.mark.parametrize("mask", ["causal", "bool", "float"])
def test_attention_is_one_fused_launch(mask, tmp_path, monkeypatch):
    """mlir_sym::attention of the heads split of one qkv buffer (GPT-2's form): one warp-synchronous
    launch (sym-gpu-attention) with shuffles and shared memory, q / k / v read in place (no copy
    kernels), no cuBLAS call; a mask's producer (here a bool input, converted for the float mask) is
    computed in the kernel; the output's transpose back is fused into the consumer's kernel."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    import mlir_sym.attention  # noqa: F401 - registers the op

    def f(qkv, m):
        b, s, _ = qkv.shape
        q, k, v = (t.view(b, s, 4, 16).transpose(1, 2) for t in qkv.split(64, dim=2))
        mk = {"causal": None, "bool": m, "float": None if m is None else m.to(qkv.dtype)}[mask]
        o = torch.ops.mlir_sym.attention(q, k, v, mk, mask == "causal", None)
        return o.transpose(1, 2).reshape(b, s, 64) * 2

    code = _codegen_fn(f, (torch.randn(2, 8, 192), torch.rand(2, 1, 1, 8) > 0.3))[0]
    src = code.program.source
    assert "library_einsum" not in src, src
    # past 2^21 scores the runtime calls PyTorch's attention (a mask first computed at its broadcast
    # shape [B, 1, 1, S] by a kernel of its own), else the fused kernel; then `* 2` reading it transposed
    lines = src.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("if ") and "rt." not in ln)
    assert "2097152" in src and lines[at - 1].endswith(")") and " > v" in lines[at - 1], src
    end = next(i for i in range(at + 1, len(lines)) if lines[i].strip() == "else:")
    library, rest = "\n".join(lines[at:end]), "\n".join(lines[end:])
    assert library.count("rt.library_attention(") == 1 and library.count("rt.launch(") == (mask != "causal"), src
    if mask != "causal":
        assert "1, 1, v" in library and "_A.take((" in library, library
    assert src.count("rt.launch(") == 2 + (mask != "causal"), src
    assert f"rt.library_attention({mask == 'causal'}, 0.25, " in library, library
    assert rest.count("rt.launch(") == 2, rest
    ptx = code.ptx if isinstance(code.ptx, str) else "\n".join(code.ptx)
    assert "shfl.sync.idx" in ptx and "shfl.sync.bfly" in ptx and ".shared" in ptx


def test_assert_async_is_checked_by_the_host(tmp_path, monkeypatch):
    """torch._assert_async on the GPU: the host program reads the condition back and returns the
    check's failure status (it used to be dropped)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))

    def f(x):
        torch._assert_async(x.sum() > 0, "sum must be positive")
        return x * 2

    codes = _codegen_fn(f, (torch.ones(4),))
    assert "rt.read(" in codes[0].program.source
    assert any("sum must be positive" in m for m in codes[0].assert_msgs)


@pytest.mark.parametrize("fn,x", [
    (lambda x, i: x.index_select(0, i) * 2, torch.randn(5, 3)),
    (lambda x, i: x.index_select(1, i) * 2, torch.randn(3, 5, 7)),
    (lambda x, i: x[i] * 2, torch.randn(5)),
    (lambda x, i: x[i, i] * 2, torch.randn(5, 7)),
], ids=["rows", "dim1_of_3d", "1d", "pairs"])
def test_gather_checks_stay_on_the_device(fn, x, tmp_path, monkeypatch):
    """Gathers (index_select, x[i]) are bounds-checked in their gather loop (an embedding): on the GPU
    a device assert, not a value the host reads back (no synchronization per call)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    codes = _codegen_fn(fn, (x, torch.tensor([0, 4, 1, 2])))
    assert "rt.read(" not in codes[0].program.source
    assert "__assertfail" in codes[0].ptx  # CUDA's device-side assert, with torch-mlir's message


def test_identical_layers_share_their_kernels(tmp_path, monkeypatch):
    """Two identical layers (matmul, then softmax) launch the same kernel: it is compiled once
    (sym-gpu-dedup-kernels), and the host program launches it from both layers."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")

    def f(x, w1, w2):
        return torch.softmax(torch.softmax(x @ w1, -1) @ w2, -1)

    (code,) = _codegen_fn(f, (torch.randn(7, 32), torch.randn(32, 32), torch.randn(32, 32)))
    kernels = code.program.kernels
    assert len(code.llvm_ir) == len(kernels)
    launched = re.findall(r"rt\.launch\(K_(\w+),", code.program.source)
    assert len(launched) == code.program.launches and set(launched) == set(kernels)
    assert any(launched.count(k) == 2 for k in kernels), launched  # the second layer launches the first's kernel


def test_kernel_only_buffers_come_from_the_call_arena(tmp_path, monkeypatch):
    """A temporary only kernels and contractions read and write (a column sum's partials and result,
    a matmul's operand and result: cuBLAS takes descriptors) is carved from the call's arena as a
    descriptor; a buffer a scan call reads stays a torch tensor."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    w = torch.randn(8, 8)

    def f(x):
        y = (x / x.sum(0)).cumsum(-1) + 1  # kernels into temporaries, then a scan call
        return (y.exp() @ w).relu()

    src = _codegen_fn(f, (torch.randn(5, 8),))[0].program.source
    assert src.splitlines()[1] == "    _A = rt.Arena(rt)"
    taken = re.findall(r"(v\d+) = _A\.take\(", src)
    assert len(taken) == 4
    for v in taken:  # descriptors: only launches (as *v), contractions and dims read them
        for line in src.splitlines():
            if re.search(rf"\b{v}\b", line) and "_A.take" not in line:
                assert ("rt.launch(" in line and f"*{v}" in line or f"{v}[3 + " in line
                        or line.strip().startswith("rt.library_einsum(True, 'ik,kj->ij'")), line
    assert len(re.findall(r"rt\.library_einsum\(True, 'ik,kj->ij', \('float32', 'float32', 'float32'\), v\d+, v\d+, v\d+\)", src)) == 1
    assert "rt.empty(" in src  # the scan's buffers are tensors


def test_static_offset_slices_stay_descriptors(tmp_path, monkeypatch):
    """x.split at batch 1: the slices have static offsets, which sym-gpu-dynamic-offsets casts to
    `offset: ?` for the kernels; the casts are aliases on the host, so the slices stay descriptors
    computed in Python (no tensor views)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))

    def f(x):
        a, b, c = x.split(4, dim=-1)
        return b * 2 + c.exp() - a

    src = _codegen_fn(f, (torch.randn(1, 5, 12),))[0].program.source
    assert "rt.as_desc(" in src and "rt.dsubview(" in src
    assert "rt.subview(" not in src


@pytest.mark.parametrize("name", ["cols_from_1", "cols_7_to_14", "split_7"])
def test_odd_slices_compile_with_the_flat_path(name, tmp_path, monkeypatch):
    """Elementwise kernels over slices with a static offset at an odd innermost size take the flat
    128-bit path (its 1-D views are made from the metadata's base buffer: a view of the slice inside
    the launch was rejected by sym-gpu-dynamic-offsets, a review's finding) and compile to PTX with
    its vector accesses."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    fns = {"cols_from_1": (lambda x: x[:, 1:] * 2, torch.randn(6, 17)),
           "cols_7_to_14": (lambda x: x[:, 7:14] + 1, torch.randn(6, 21)),
           "split_7": (lambda x: [t * 2 for t in x.split(7, dim=-1)], torch.randn(6, 21))}
    fn, x = fns[name]
    for code in _codegen_fn(fn, (x,)):
        assert "ld.global.v4" in code.ptx and "st.global.v4" in code.ptx


def test_one_hot_scatter_is_an_elementwise_kernel(tmp_path, monkeypatch):
    """Cross entropy's backward scatters -1 at each row's target into zeros and multiplies: one
    elementwise kernel for the where and the product, beside the positions' table and its embedding
    of the index (the bounds check) (fx_rewrites.scatter_as_where). As a scatter it was a fill, a
    scatter kernel of one thread (no pass could prove its indices unique) and the product."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    fn = lambda x, i: torch.zeros_like(x).scatter_(1, i, -1.0) * x  # noqa: E731
    (code,) = _codegen_fn(fn, (torch.randn(6, 50), torch.randint(0, 50, (6, 1))))
    src = code.program.source
    assert src.count("rt.launch(") == 3, src
    assert not re.search(r"rt\.launch\(K_\w+, (\w+), \1, \1, \1, \1, \1,", src), src  # no one-thread launch


def _marked_cross_entropy_backward_source(tmp_path, monkeypatch) -> str:
    """The host program of cross entropy's backward over logits [4, 9, 50] and targets [4, 9], both
    marked dynamic: sizes with symbols of their own (s0*s1 rows, s2*s3 targets), no disk caches."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    x, t = torch.randn(4, 9, 50, requires_grad=True), torch.randint(0, 50, (4, 9))
    for a in (x, t):
        torch._dynamo.mark_dynamic(a, 0)
        torch._dynamo.mark_dynamic(a, 1)
    return _cross_entropy_backward_code(x, t).program.source


def test_one_hot_scatter_of_targets_with_symbols_of_their_own(tmp_path, monkeypatch):
    """Cross entropy's backward when the targets' sizes are symbols of their own (inputs marked
    dynamic are not duck-sized; a benchmark that compiled them with another backend first marked
    them): the one-hot is still a where, because the ShapeEnv holds the targets' count equal to the
    logits' rows (fx_rewrites.known_equal). It was a scatter kernel of one thread over every target
    (454 µs of a 5.7 ms training step on an H200)."""
    src = _marked_cross_entropy_backward_source(tmp_path, monkeypatch)
    serial = re.findall(r"rt\.launch\(K_\w+, (\w+), \1, \1, \1, \1, \1,", src)
    assert len(serial) <= 1, src  # at most the 0-d division of the loss's grad; not a scatter's loop
    assert "rt.int64" not in src, src  # no [targets, 2] coordinates of a scatter


def test_sizes_a_guard_holds_equal_are_one_size(tmp_path, monkeypatch):
    """Cross entropy's backward when the logits' rows (s0*s1) and the targets' count (s2*s3) have
    symbols of their own: Dynamo guards them equal, and the passes read them as one size (the
    module's `sym.equalities`). Read apart, torch-mlir's check between them was a branch of the host
    program, and the one-hot of the targets a byte tensor [N, V] of its own kernel (16 MiB, 20 µs
    of a bf16 training step on an H200), which the gradient's kernel then read."""
    src = _marked_cross_entropy_backward_source(tmp_path, monkeypatch)
    assert "_b = " not in src, src  # one block: no size check left between the kernels
    assert not re.search(r"_A\.take\(\(\w+, 50\), 1\)", src), src  # no one-hot bytes [N, 50]


def test_layer_norm_backward_input_grad_runs_with_its_row_sums(tmp_path, monkeypatch):
    """A layer norm's backward over [B, L, D]: the input's grad reads the per-row sums, which come
    before the weight and bias grads' column reductions in torch-mlir's order; sym-gpu-gather-rows
    moves it up to them, so it runs in their row group's launch: 4 launches (the row group, the two
    column launches, the grads' conversion), not 5. The row kernel indexes [B*L, D] rows
    (sym-collapse-leading-dims): no division by the length."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(256).to(torch.bfloat16)
    x = torch.randn(8, 64, 256, dtype=torch.bfloat16, requires_grad=True)
    codes = _codegen_fn(lambda x: (ln(x) * 1.5).sum(), (x,), backward=True)
    backward = codes[-1]
    assert backward.program.source.count("rt.launch") == 4, backward.program.source
    row_kernel = backward.ptx.split(".entry main_kernel(")[1].split("\n}\n")[0]
    assert not re.search(r"\b(div|rem)\.[us](32|64)", row_kernel), row_kernel


def test_one_hot_positions_come_from_the_loop_index(tmp_path, monkeypatch):
    """Cross entropy's backward (a static vocabulary, as a model's): the one-hot compares each target
    with positions computed from the loop index, not with the float64 table that checks the target's
    bounds, so the row kernel loads no float64 per element and reads and writes four floats at a
    time (it read the table at every element, two floats at a time)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    x, t = torch.randn(4, 9, 512, requires_grad=True), torch.randint(0, 512, (4, 9))
    torch._dynamo.mark_static(x, 2)
    ptx = _cross_entropy_backward_code(x, t).ptx
    assert "setp.eq.f64" not in ptx and "ld.global.v2.b64" not in ptx, ptx
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx


def test_safe_softmax_is_one_launch(tmp_path, monkeypatch):
    """PyTorch's safe softmax (attention's math form in training): rows all -inf give 0. The
    `(x == -inf).all(-1)` is a row max compared with -inf (fx_rewrites.all_infinite_as_extremum), a
    sibling of softmax's own reductions: one launch, where the boolean `all` made it five (a kernel
    of a thread per row reading its row with a stride, 49 us a layer in a training step on an H200)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    fn = lambda x: torch.where((x == float("-inf")).all(-1, keepdim=True), 0.0, x.softmax(-1))  # noqa: E731
    (code,) = _codegen_fn(fn, (torch.randn(6, 4, 50),))
    assert code.program.source.count("rt.launch(") == 1, code.program.source


def test_layer_norm_of_a_saved_sum_is_one_launch(tmp_path, monkeypatch):
    """A training forward's layer norm whose input is computed and saved for the backward (an output):
    the normalization, mean and rstd (outputs too) are one row group. The out-params' sizes were
    unknown to sym-unify-sizes, so the loops reading the saved sum had other sizes than those
    writing the statistics: five launches (sym-results-to-out-params' facts). The gather's own copy,
    unused once fused into the add, checked the indices again in a launch of its own
    (sym-erase-dead-checks)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    table = torch.randn(50, 256)

    def fn(x, i):
        h = table[i] + x
        return (*torch.ops.aten.native_layer_norm(h, [256], None, None, 1e-5), h)

    (code,) = _codegen_fn(fn, (torch.randn(4, 9, 256), torch.randint(0, 50, (4, 9))))
    src = code.program.source
    # the gather and add, the layer norm
    assert src.count("rt.launch(") == 2, src


def test_layer_norm_weight_and_bias_grads_share_their_launches(tmp_path, monkeypatch):
    """A layer norm's backward sums its weight and bias grads over the rows: two column reductions
    of the same gradient, which share one launch of partials and one that combines them
    (sym-gpu-map-parallel's sibling column reductions), instead of two each. The rest: the rows'
    statistics with the input's grad (one row group, sym-gpu-gather-rows), and the float32 sums
    rounded to the bf16 grads."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MLIR_SYM_CODE_CACHE", "0")
    ln = torch.nn.LayerNorm(64).to(torch.bfloat16)
    x = torch.randn(2, 8, 64, dtype=torch.bfloat16, requires_grad=True)
    backward = _codegen_fn(lambda x: ln(x).sin().sum(), (x,), backward=True)[-1].program.source
    assert backward.count("rt.launch(") == 4, backward  # 6 with a pair of launches per column sum


def test_convolutions_are_library_calls(tmp_path, monkeypatch):
    """Every convolution of case conv2d_layouts (padded, strided grouped, dilated depthwise, 1x1
    without bias) is a torch.convolution call from the host program with its padding and bias folded
    in: no padding copy, no bias broadcast kernel, and only the ReLU between the first two is a
    kernel (a thread per output summing channels x window products otherwise). The first one's bias
    is added by that ReLU kernel (sym-gpu-conv-bias-epilogue: cuDNN's path would add it in a kernel
    of its own)."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    case = next(c for c in CASES if c.name == "conv2d_layouts")
    (code,) = _codegen(case)
    src = code.program.source
    assert src.count("rt.library_conv(") == 4, src
    assert "rt.library_conv(True, 'plain', (1, 1), (1, 1), (1, 1), False, True, " in src
    assert "rt.library_conv(True, 'grouped', (2, 2), (1, 1), (1, 1), True, True, " in src
    assert "rt.library_conv(True, 'depthwise', (1, 1), (2, 2), (2, 2), True, True, " in src
    assert "rt.library_conv(True, 'plain', (1, 1), (0, 0), (1, 1), False, False, " in src
    assert code.program.launches == 1 and ".copy_(" not in src, src


def test_half_convolutions_write_half_buffers(tmp_path, monkeypatch):
    """bf16 convolutions (case bf16_conv: a padded one with bias, ReLU, a grouped one with bias) write
    bf16 buffers: no float32 accumulator, conversion or rounding kernel; the grouped one's bias is
    folded (its bf16 vector) and it writes the graph's output; the first hands its result out as a
    buffer the host program never allocates (its (shape, dtype)). One kernel (the ReLU) is left."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    case = next(c for c in CASES if c.name == "bf16_conv")
    (code,) = _codegen(case)
    src = code.program.source
    assert "float32" not in src, src
    assert "rt.library_conv(True, 'plain', (1, 1), (1, 1), (1, 1), True, True, " in src
    assert "rt.library_conv(True, 'grouped', (1, 1), (0, 0), (1, 1), True, False, " in src
    assert re.search(r"v\d+ = \(\(v\d+, 8, v\d+, v\d+\), rt\.bfloat16\)", src), src
    assert code.program.launches == 1, src


def test_conv1d_conv3d_and_transposed_convolutions_are_library_calls(tmp_path, monkeypatch):
    """A grouped dilated 1-d convolution (a 2-d one over a unit dim), a padded 3-d one and a
    transposed 2-d one (a 2-d one over the upsampled input) call torch.convolution."""
    monkeypatch.setenv("MLIR_SYM_CACHE_DIR", str(tmp_path))
    by_name = {c.name: c for c in CASES}
    (c1,) = _codegen(by_name["conv1d_grouped_dilated"])
    assert "rt.library_conv(True, 'grouped', (1, 1), (2, 0), (2, 1), True, False, " in c1.program.source
    (c3,) = _codegen(by_name["conv3d_transposed2d"])
    assert "rt.library_conv(True, 'plain', (1, 1, 1), (1, 1, 1), (1, 1, 1), True, False, " in c3.program.source
    assert c3.program.source.count("rt.library_conv(") == 2


def test_a_block_under_autocast_generates_gpu_code():
    """A linear layer under autocast reads its weight's bf16 cast transposed, through the matmul
    sym-matmul-half-operands builds (without an `indexing_maps` attribute): sym-fold-transposes
    failed on it (GPU test_gpu_generate_autocast.py)."""
    import torch.nn as nn

    torch.manual_seed(0)
    m = nn.Sequential(nn.LayerNorm(64), nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        (code,) = _codegen_fn(m, (torch.randn(5, 64),))
    assert code.program.source.count("rt.library_einsum(") == 2  # both products are library calls
