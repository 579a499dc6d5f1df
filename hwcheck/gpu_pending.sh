#!/usr/bin/env bash
# The H200 runs of issues 13-15, in parts that each fit one device call (< 10 min). All ran on 2026-12-01/02 (reports
# in conformance/h200/, README there); run a part again after changing what it checks.
#
#   sfu        the SFU models and the forms proven exhaustively (issue 14): every default sweep form over all 2**32
#              inputs (ex2 rcp rsqrt sqrt lg2 tanh f32, div pairs, the 16-bit forms over every pattern),
#              rcp.approx.ftz.f64 over every high word, and hwcheck.campaigns.sincos_probe (sin/cos: key tables of all 2**32
#              inputs, coefficients derived on the device, the model checked at every key, the four forms swept);
#   fuzz       ptxas's mad.hi chain on the GPU, the 10^4-program fuzz run (issue 13);
#   programs   every PTX example with the CuTe DSL flash kernels (20 seeds), every Python example program incl.
#              examples/flash_fwd.py, and the flash benchmark's launch (B=1 H=2 N=512, checked and timed:
#              gpu_kernel_ms for bench/bench_flash.py; hwcheck.runs.ptx_examples.flash_bench_command) (issues 13, 15);
#   int        the integer-forms campaign, complete: its 554 forms in five shards run at once (issue 13);
#   flash-dsl  the CuTe DSL flash kernels at the C++ set's launches, B 1..2, H 1..2, N up to 512, 10 seeds
#              (hwcheck.runs.ptx_examples.FLASH_DSL_EXAMPLES; issue 15).
#
# Issue 26 (kernels as their compilers build them; reports named after the GPU, e.g. h100-80gb-hbm3-*):
#   as-compiled  the CuTe C++ kernels built with nvcc's defaults (hwcheck.runs.ptx_examples.AS_COMPILED_EXAMPLES), 10 seeds,
#              every register, contraction decided against the cubin the GPU runs;
#   as-compiled-none  the same launches with the simulator's --ptxas none, buffers only: the differences
#              contraction makes (NAME-none-...);
#   fuzz-float FIRST COUNT [SECONDS]  COUNT random float programs from seed FIRST (hwcheck fuzz --float), every
#              register; with SECONDS, those done by then (--time-limit: 5,710 programs in 525 s on an H100);
#   corpus     the corpus of real compilers' PTX (tests/corpus: nvcc, CuTe DSL, Triton, Numba), 10 seeds;
#   regress    every PTX example, 3 seeds (the GPU side now runs ptxas's cubin, not the driver's JIT);
#   issue26 [SECONDS] [FIRST]  as much of the above as fits one device call: as-compiled, then corpus and float
#              fuzz from seed FIRST beside it, then as-compiled-none if time is left.
#
# Issue 28 (Hopper; needs HWCHECK_PTX_DIR: python -m hwcheck.runs.ptx_examples --export ptx-export --arch sm_90):
#   hopper     the Hopper set (examples/hopper: wgmma probes, the TMA GEMM), 10 seeds: split it over two device calls
#              (the probes' ten kernels take ~250 s with 10 workers; the set with 15 workers did not finish in 300 s)
#   issue28 [SECONDS] [FIRST] [SEED]  the re-run after the address fixes: cluster probe, hopper-tma (10 seeds), the wgmma
#              campaign (hwcheck campaign --instr wgmma, 10^6 per input type, seed SEED), then float fuzz chunks from
#              FIRST (issue 26)
#   hopper-tma [SECONDS] [FIRST]  the first half of issue28 in its own call: cluster probe, hopper-tma (10 seeds), then
#              float fuzz chunks from FIRST while time is left
#   wgmma [SECONDS] [SEED]  the second half: the wgmma campaign alone (it needs ~300-400 s with 15 workers, more on a
#              machine that compiles the simulator first: give it a call of its own, nothing beside it)
#   corpus-94  the corpus with Triton's sm_90 files (PTX ISA 9.4): put the nvidia-cuda-nvcc wheel's ptxas (13.4+) at
#              SITE/nvidia/cu13/bin/ptxas and run with PYTHONPATH=$PWD:SITE (auto picks the first ptxas that takes
#              the PTX; carry it xz-compressed: the device call carries at most 64 MiB with the tracked files)
#
# Usage: hwcheck/gpu_pending.sh OUT_DIR PART        (PART: sfu | fuzz | programs | int | flash-dsl | as-compiled |
#        fuzz-float FIRST COUNT [SECONDS] | corpus | regress)
# Needs: an NVIDIA GPU, CuPy, numpy, numba; for `programs` and `flash-dsl`, HWCHECK_PTX_DIR pointing at the PTX
# examples exported on a machine with nvcc and CuTe DSL (python -m hwcheck.runs.ptx_examples --export ptx-export
# --arch sm_90). Environment: PYTHON (default python3). Every report is written atomically into OUT_DIR;
# the exit status is 0 only when every step of the part passed. conformance/h200/README.md says which
# committed report each output becomes.
set -u
cd "$(dirname "$0")/.."
out="${1:?usage: hwcheck/gpu_pending.sh OUT_DIR sfu|fuzz|programs|int|flash-dsl}"
part="${2:?usage: hwcheck/gpu_pending.sh OUT_DIR sfu|fuzz|programs|int|flash-dsl}"
py="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$out"
gpu=$("$py" -c "import cupy; from hwcheck.campaigns.acceptance import report_prefix; \
print(report_prefix(cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()))" 2>/dev/null || echo gpu)
status=0
start=$(date +%s)

step() {   # step NAME COMMAND...: run, say how it ended and how long it took
    local name="$1" t0 rc
    shift
    t0=$(date +%s)
    "$@"
    rc=$?
    echo "== ${name}: exit ${rc}, $(( $(date +%s) - t0 )) s"
    [ "$rc" -eq 0 ] || status=1
}

fuzz_chunks() {   # fuzz_chunks FIRST MIN_LEFT MARGIN WORKERS: float fuzz from seed FIRST when more than MIN_LEFT
                  # seconds of the part's budget are left (left() of the part): one campaign whose --time-limit ends it
                  # MARGIN + 30 s early (its last tasks take ~20 s after the limit), the programs done reported
    local s="$1" rc
    [ "$(left)" -gt "$2" ] || return 0
    timeout $(( $(left) - $3 )) env NUMBA_NUM_THREADS=1 "$py" -m hwcheck fuzz --float --count 100000 --seed "$s" \
        --workers "$4" --time-limit $(( $(left) - $3 - 30 )) --report "$out/$gpu-fuzz-float-$s.json" \
        > "$out/fuzz-float-$s.log" 2>&1
    rc=$?; echo "== float fuzz from $s: exit $rc; $(grep -h '^fuzz:' "$out/fuzz-float-$s.log" | tail -n 2 | tr '\n' ' ')"
    [ "$rc" -le 1 ] || status=1
}

case "$part" in
sfu)
    step "sweep, default forms" "$py" -m hwcheck sweep --exhaustive --report "$out/h200-mufu32-sweep.json"
    step "sweep, rcp.approx.ftz.f64" "$py" -m hwcheck sweep --exhaustive --forms rcp.approx.ftz.f64 \
        --report "$out/h200-rcp-f64-sweep.json"
    step "sin/cos probe" "$py" -m hwcheck.campaigns.sincos_probe --out "$out/sincos-h200"
    ;;
fuzz)
    step "mad.hi chain (GPU test)" "$py" -m pytest -q -p no:cacheprovider -m gpu tests/hwcheck/test_ptxas_mad_hi.py
    step "fuzz 10^4" env NUMBA_NUM_THREADS=1 "$py" -m hwcheck fuzz --count 10000 --seed 100000 --workers 15 \
        --report "$out/h200-ptx-fuzz.json"
    ;;
programs)
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    step "PTX examples" "$py" -m hwcheck acceptance --out "$out" --only ptx --seeds 20 --workers 8
    step "example programs" "$py" -m hwcheck acceptance --out "$out" --only programs
    step "flash benchmark launch, timed" "$py" -m hwcheck run examples/cute_cpp/flash_fwd.cu \
        --kernel flash_fwd_f16_d64 --grid 8,2,1 --block 128 --smem 40960 \
        --arg q=random:f16:1x2x512x64 --arg k=random:f16:1x2x512x64 --arg v=random:f16:1x2x512x64 \
        --arg o=zeros:f16:1x2x512x64 --arg lse=zeros:f32:1x2x512 --arg N=512 \
        --arg scale_log2=0.1803368777036667 --arg softmax_scale=0.125 \
        --seeds 2 --seed 0 --trace-capacity 16384 --report "$out/h200-flash-bench.json"
    ;;
int)
    shards=("setp.*32*" "setp.*64*" "cvt.*" "bfe.*,bfi.*,shr.*,shl.*"
            "add.*,sub.*,min.*,max.*,mul.*,mad.*,div.*,rem.*,abs.*,neg.*,and.*,or.*,xor.*,not.*,cnot.*,brev.*,popc.*,clz.*,bfind.*,prmt.*,shf.*,sad.*,selp.*")
    pids=()
    for i in "${!shards[@]}"; do
        NUMBA_NUM_THREADS=3 "$py" -m hwcheck campaign --instr int --count 1024 --forms "${shards[$i]}" \
            --report "$out/h200-int-forms-$((i + 1)).json" > "$out/int-forms-$((i + 1)).log" 2>&1 &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        rc=$?
        echo "== int shard $((i + 1)) (${shards[$i]}): exit ${rc}; $(tail -n 1 "$out/int-forms-$((i + 1)).log")"
        [ "$rc" -eq 0 ] || status=1
    done
    ;;
as-compiled|as-compiled-none)
    # seeds 0-4 and 5-9 in two processes at once (the N = 1024 flash launches are the long pole), then the same
    # launches with the simulator's contraction off, buffers only, also in two halves
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    both() {   # both NAME MORE...: seeds 0-4 and 5-9 of the set into NAME-a and NAME-b, at once
        local name="$1"
        shift
        "$py" -m hwcheck acceptance --out "$out" --only as-compiled --seeds 5 --seed 0 --workers 8 \
            --name "$name-a" "$@" > "$out/$name-a.log" 2>&1 &
        local a=$!
        "$py" -m hwcheck acceptance --out "$out" --only as-compiled --seeds 5 --seed 5 --workers 8 \
            --name "$name-b" "$@" > "$out/$name-b.log" 2>&1
        local rb=$?
        wait "$a"
        local ra=$?
        tail -n 3 "$out/$name-a.log" "$out/$name-b.log"
        return $(( ra | rb ))
    }
    if [ "$part" = as-compiled ]; then
        step "as-compiled kernels, 10 seeds" both "$gpu"
    else
        step "as-compiled kernels, simulator without contraction" both "$gpu-none" --ptxas none --no-trace
    fi
    ;;
issue26)
    # everything of issue 26 that fits one device call of SECONDS (default 540): the as-compiled kernels (seeds 0-4
    # and 5-9 at once); once their short launches are done, the corpus and a float fuzz campaign
    # beside the long flash launches until its time limit; then, time allowing, the as-compiled
    # launches without contraction. Every report stays in OUT_DIR (tar them: the device returns few files).
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    budget="${3:-540}" first="${4:-200000}"
    left() { echo $(( budget - ($(date +%s) - start) )); }
    bash "$0" "$out" as-compiled > "$out/as-compiled.log" 2>&1 &
    kernels=$!
    sleep "${HWCHECK_STAGGER:-120}"            # the short launches first: their workers free the cores
    timeout "$(left)" "$py" -m hwcheck acceptance --out "$out" --only corpus --seeds 10 --workers 4 \
        > "$out/corpus.log" 2>&1 &
    corpus=$!
    fuzz_chunks "$first" 100 20 10
    wait "$kernels"; rc=$?; echo "== as-compiled: exit $rc"; tail -n 8 "$out/as-compiled.log"
    [ "$rc" -eq 0 ] || status=1
    wait "$corpus"; rc=$?; echo "== corpus: exit $rc"; tail -n 4 "$out/corpus.log"
    [ "$rc" -eq 0 ] || status=1
    if [ "$(left)" -gt 150 ]; then
        timeout $(( $(left) - 10 )) bash "$0" "$out" as-compiled-none > "$out/as-compiled-none.log" 2>&1
        rc=$?; echo "== as-compiled-none: exit $rc"; tail -n 8 "$out/as-compiled-none.log"
    fi
    ;;
fuzz-float)
    first="${3:?fuzz-float FIRST COUNT [SECONDS]}" count="${4:?fuzz-float FIRST COUNT [SECONDS]}"
    step "float fuzz ${first}+${count}" env NUMBA_NUM_THREADS=1 "$py" -m hwcheck fuzz --float --count "$count" \
        --seed "$first" --workers 15 ${5:+--time-limit "$5"} --report "$out/$gpu-fuzz-float-$first.json"
    ;;
hopper)
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    step "hopper" "$py" -m hwcheck acceptance --out "$out" --only hopper --seeds 10 --workers 10
    ;;
issue28|hopper-tma|wgmma)
    # the Hopper re-run of issue 28 in one device call of SECONDS (default 560), or in two (hopper-tma, wgmma): the
    # cluster probe, the TMA set (hopper-tma, 10 seeds), the streamed wgmma campaign (10^6 instructions per input type,
    # seed SEED: inputs the model was not fitted on), then float fuzz from FIRST (issue 26) while time
    # is left. Needs, in HWCHECK_PTX_DIR, the exported PTX and cluster_probe.sm_90a.cubin, wgmma_types.sm_90a.cubin
    # (nvcc -arch=sm_90a -cubin examples/hopper/NAME.cu).
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    budget="${3:-560}"
    if [ "$part" = wgmma ]; then first=""; seed="${4:-1}"; else first="${4:-253000}"; seed="${5:-1}"; fi
    left() { echo $(( budget - ($(date +%s) - start) )); }
    probe() {
        "$py" -m hwcheck.device.cluster_check "$HWCHECK_PTX_DIR/cluster_probe.sm_90a.cubin" > "$out/cluster-check.txt" 2>&1
        local rc=$?
        cat "$out/cluster-check.txt"
        return $rc
    }
    if [ "$part" != wgmma ]; then
        step "cluster probe" probe
        step "hopper-tma, 10 seeds" "$py" -m hwcheck acceptance --out "$out" --only hopper-tma --seeds 10 --workers 15
    fi
    if [ "$part" != hopper-tma ]; then
        # its progress goes to a file under OUT (a pipe's tail is lost when the call's limit strikes first); SIGTERM
        # a minute before the budget ends leaves the workers' CUDA contexts time to close and the partial report
        # (status "partial": the chunks done) time to be written
        step "wgmma, 10^6 instructions per input type, seed $seed" timeout $(( $(left) - 60 )) "$py" -m hwcheck \
            campaign --instr wgmma --count 1000000 --seed "$seed" --workers 15 --chunk 1024 \
            --module "$HWCHECK_PTX_DIR/wgmma_types.sm_90a.cubin" --report "$out/$gpu-wgmma-types.json" \
            > "$out/wgmma.log" 2>&1
        tail -n 12 "$out/wgmma.log"
    fi
    [ -z "$first" ] || fuzz_chunks "$first" 130 15 15
    ;;
corpus-94|corpus)
    step "corpus" "$py" -m hwcheck acceptance --out "$out" --only corpus --seeds 10 --workers 15
    ;;
regress)
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    step "PTX examples, 3 seeds" "$py" -m hwcheck acceptance --out "$out" --only ptx --seeds 3 --workers 15 \
        --name "$gpu-regress"
    ;;
flash-dsl)
    : "${HWCHECK_PTX_DIR:?set HWCHECK_PTX_DIR to the exported PTX examples}"
    step "CuTe DSL flash kernels, N up to 512" "$py" -m hwcheck acceptance --out "$out" --only flash-dsl --seeds 10 \
        --workers 8
    ;;
*)
    echo "gpu_pending.sh: unknown part '${part}' (sfu, fuzz, programs, int, flash-dsl, as-compiled, fuzz-float," \
         "corpus or regress)" >&2
    exit 2
    ;;
esac
echo "gpu_pending.sh ${part}: exit ${status}, $(( $(date +%s) - start )) s in all"
exit "$status"
