#!/bin/bash
# On a lent GPU machine, in the repository root, after tools/device_payload.py's two carries
# (.dev1's library copied to /tmp/w): install TVM under /tmp/site, then run STEP (default all):
#   bundle  the exported bundle's checks and bench (.dev2/gpu-bundle)
#   tests   python -m pytest tests/gpu -n 12
#   formats sparsetir bench --device cuda: SpMM on CSR and on the hybrid format (spmm_hyb) on the
#           bundle's matrices, both against cuSPARSE; then bench/cuda_formats.py (the widths' variants)
#   grad    bench/cuda_gradients.py (forward + backward against torch.sparse)
# Outputs go to $OUT (the device tool's folder that comes back).
export PYTHONUNBUFFERED=1
S=/tmp/site; mkdir -p "$S"; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L; python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name())"
if [ ! -f $S/tvm/lib/libtvm_compiler.so ]; then
  python3 -m zipfile -e .dev2/tvm_slim.zip $S || exit 1
  python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('/tmp/w/libtvm_compiler.so.xz'), open('$S/tvm/lib/libtvm_compiler.so', 'wb'))" || exit 1
  python3 -m pip install -q --no-index --no-deps --target $S .dev2/apache_tvm_ffi-*.whl || exit 1
fi
export PYTHONPATH=$S:$PWD
python3 -c "import tvm, sparsetir; print('tvm', tvm.__version__)" || exit 1
step=${1:-all}
if [ "$step" = all ] || [ "$step" = bundle ]; then
  timeout 120 python3 .dev2/gpu-bundle/run.py --out "$OUT" > "$OUT/bundle.log" 2>&1; echo "bundle rc $?"
  grep -E "^checks:|geometric-mean" "$OUT/bundle.log"
fi
if [ "$step" = all ] || [ "$step" = tests ]; then
  timeout 300 python3 -m pytest -q tests/gpu -n 12 -p no:cacheprovider > "$OUT/pytest.log" 2>&1; echo "pytest rc $?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest.log" | tail -20
fi
if [ "$step" = all ] || [ "$step" = formats ]; then
  timeout 180 python3 -m sparsetir bench --device cuda --kernels spmm,spmm_hyb .dev2/gpu-bundle/matrices/*.npz \
    --out "$OUT/formats" > "$OUT/formats.log" 2>&1; echo "formats rc $?"
  grep -E "geometric|geomean" "$OUT/formats.log"
  timeout 200 python3 bench/cuda_formats.py "$OUT/formats" 2>&1 | grep -v Warning > "$OUT/cuda_formats.log"
  tail -8 "$OUT/cuda_formats.log"
fi
if [ "$step" = all ] || [ "$step" = grad ]; then
  timeout 120 python3 bench/cuda_gradients.py "$OUT/gradients.json" 2>&1 | grep -v Warning | tee "$OUT/gradients.log"
fi
