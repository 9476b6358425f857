#!/usr/bin/env bash
# The GPU check of issue 39, in one command from the repository root of a lent GPU machine:
#
#   bash benchmarks/gpu_check.sh            # ~6 minutes on one H100, 7 at most: CUDA tests (<= 130 s), throughput (<= 285 s)
#   bash benchmarks/gpu_check.sh --smoke    # the rehearsal on a machine without a GPU: the CUDA tests on the CPU
#                                           # (STATICVEC_CUDA_STANDIN=cpu) and the throughput script's smoke mode
#
# 1. installs the wheels in .whl/ (packages the GPU image lacks; none may be needed) into /tmp/site;
# 2. prints the GPU, driver, CUDA, cuDNN, torch and transformers versions (nvidia-smi, torch);
# 3. runs the test suite's CUDA tests (pytest -m cuda on the files of tests/cuda_fixtures.py CUDA_TEST_FILES);
# 4. runs benchmarks/gpu_check.py (paper shapes, each section time-boxed), which writes gpu_check.json and
#    gpu_check.md after every section.
# Everything goes to $OUT (default ./gpu_check_out): env.txt, pytest.txt, pytest.xml, gpu_check.log, gpu_check.json,
# gpu_check.md. The exit status is non-zero when a test failed or a section did not complete; each step runs anyway.
set -u
cd "$(dirname "$0")/.."
SMOKE=0
if [ "${1:-}" = "--smoke" ]; then SMOKE=1; fi
# wall-clock limits of the two steps (a CPU rehearsal on a busy machine needs more)
if [ "$SMOKE" = 1 ]; then TESTS_LIMIT=${TESTS_LIMIT:-1200}; BENCH_LIMIT=${BENCH_LIMIT:-900}; fi
TESTS_LIMIT=${TESTS_LIMIT:-130}
BENCH_LIMIT=${BENCH_LIMIT:-285}
PY=${PYTHON:-python3}
OUT=${OUT:-$PWD/gpu_check_out}
mkdir -p "$OUT"
export OUT HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/staticvec-numba}
started=$(date +%s)

if compgen -G ".whl/*.whl" > /dev/null; then
    echo "== installing $(ls .whl/*.whl | wc -l) wheel(s) from .whl/ into /tmp/site"
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || echo "!! wheel installation failed (going on)"
    export PYTHONPATH=/tmp/site:$PWD/workflow
else
    echo "== no wheels in .whl/: the image's packages only"
    export PYTHONPATH=$PWD/workflow
fi

{
    echo "== $(date -u +%FT%TZ) $(hostname) $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/2^20}' /proc/meminfo)"
    nvidia-smi 2>&1 || echo "(no nvidia-smi)"
    $PY - <<'EOF'
import platform
import torch
import transformers
import numba
import numpy
print(f"python {platform.python_version()}, torch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN "
      f"{torch.backends.cudnn.version()}), transformers {transformers.__version__}, numba {numba.__version__}, "
      f"numpy {numpy.__version__}")
if torch.cuda.is_available():
    print(f"GPU {torch.cuda.get_device_name()}, capability {torch.cuda.get_device_capability()}, "
          f"bf16 {torch.cuda.is_bf16_supported()}, {torch.cuda.get_device_properties(0).total_memory / 2**30:.1f} GiB")
else:
    print("torch sees no CUDA device")
EOF
} 2>&1 | tee "$OUT/env.txt"

files=$($PY -c "import sys; sys.path.insert(0, 'tests'); from cuda_fixtures import CUDA_TEST_FILES; print(' '.join(CUDA_TEST_FILES))")
echo "== CUDA tests: $files"
if [ "$SMOKE" = 1 ]; then export STATICVEC_CUDA_STANDIN=cpu; fi
if [ -z "$files" ]; then  # never a bare `pytest -m cuda`: it would import every test module (gensim, spaCy, ...)
    echo "!! could not read tests/cuda_fixtures.py CUDA_TEST_FILES" | tee "$OUT/pytest.txt"
    tests=1
else
    # shellcheck disable=SC2086
    timeout -k 10 "$TESTS_LIMIT" $PY -m pytest -q -m cuda -p no:cacheprovider -rfEs --durations=8 \
        --junitxml "$OUT/pytest.xml" $files 2>&1 | tee "$OUT/pytest.txt"
    tests=${PIPESTATUS[0]}
fi
unset STATICVEC_CUDA_STANDIN

echo "== throughput (benchmarks/gpu_check.py)"
if [ "$SMOKE" = 1 ]; then mode=--smoke; else mode=--paper; fi
timeout -k 10 "$BENCH_LIMIT" $PY benchmarks/gpu_check.py "$mode" --out "$OUT" 2>&1 | tee "$OUT/gpu_check.log"
bench=${PIPESTATUS[0]}

echo "== done in $(( $(date +%s) - started )) s: CUDA tests exit $tests, throughput exit $bench; results in $OUT"
[ -f "$OUT/gpu_check.md" ] && cat "$OUT/gpu_check.md"
[ "$tests" = 0 ] && [ "$bench" = 0 ]
