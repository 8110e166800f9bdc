#!/usr/bin/env bash
# The GPU session in one device call: install the carried wheels (`make gpu-wheels`) without network, then run
# bench/gpu_check.py (identity against the CPU path, per-step device times, throughput, memory, first-write
# compile time) within 6 minutes, writing gpu_check.json and gpu_check.txt to the folder given.
#
#   bash bench/gpu_session.sh OUT_DIR [WHEEL_DIR] [gpu_check.py arguments...]
#   device run:  bash bench/gpu_session.sh $OUT .whl        (carry: .whl)
#
# PYTHON (default python3) is the interpreter; the wheels go to a private --target folder put first on PYTHONPATH,
# so the image's own packages are left as they are.
set -euo pipefail
out=${1:?usage: gpu_session.sh OUT_DIR [WHEEL_DIR] [gpu_check args...]}
wheels=${2:-.whl}
shift $(( $# >= 2 ? 2 : 1 ))
python=${PYTHON:-python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
site=$(mktemp -d "${TMPDIR:-/tmp}/gpuwrite-site.XXXXXX")
trap 'rm -rf "$site"' EXIT
mkdir -p "$out"
start=$(date +%s)
"$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
    --target "$site" "$wheels"/*.whl
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
installed=$(date +%s)
cd "$repo/bench"  # not the repository root: gpuwrite must come from the installed wheel, not the checkout
"$python" -c 'import gpuwrite, sys; print("gpuwrite", gpuwrite.__version__, "from", gpuwrite.__file__); sys.exit(0)' \
    | tee "$out/gpu_check.txt"
set +e
timeout 330 "$python" "$repo/bench/gpu_check.py" --budget-s 240 --out "$out/gpu_check.json" "$@" 2>&1 \
    | tee -a "$out/gpu_check.txt"
code=${PIPESTATUS[0]}
set -e
end=$(date +%s)
echo "gpu_session: install $((installed - start)) s, check $((end - installed)) s, exit $code" | tee -a "$out/gpu_check.txt"
exit "$code"
