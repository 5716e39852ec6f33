#!/usr/bin/env bash
# Array API conformance: runs the vendored data-apis/array-api-tests suite (bench/array-api-tests,
# see its VENDORED.md) against carray and then against NumPy, in one call, and prints both
# pass/fail/skip counts. Fetches nothing; needs the `arrayapi` extra (pip install -e .[arrayapi]).
# Not part of the CI test run.
#
#   bench/array_api.sh [MAX_EXAMPLES] [extra pytest args...]
#
# Environment: ARRAY_API_TESTS_VERSION (default 2025.12), SEED (default 0), MODULES (default
# "carray numpy"), TESTS (default array_api_tests: test files or node ids), REPORT_DIR (default
# /tmp/array-api-report: one log per module). The standard's dtypes a module lacks are skipped
# (ARRAY_API_TESTS_SKIP_DTYPES) and named in the summary; the fft extension is tested when the
# module has one (carray has none yet: those tests skip).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
max_examples="${1:-20}"
shift || true
export ARRAY_API_TESTS_VERSION="${ARRAY_API_TESTS_VERSION:-2025.12}"
seed="${SEED:-0}"
report="${REPORT_DIR:-/tmp/array-api-report}"
mkdir -p "$report"
python -c "import hypothesis, ndindex" 2>/dev/null || {
    echo "missing test dependencies: pip install -e '$root[arrayapi]'" >&2; exit 2; }

summary=""
for module in ${MODULES:-carray numpy}; do
    log="$report/$module.log"
    # the standard's dtypes the module lacks are skipped (the suite's own switch), and reported
    skip=$(PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" python -c "
import importlib; m = importlib.import_module('$module')
names = 'bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128'
print(','.join(n for n in names.split() if not hasattr(m, n)))")
    start=$(date +%s)
    (cd "$here/array-api-tests" && \
        PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" ARRAY_API_TESTS_MODULE="$module" \
        ARRAY_API_TESTS_SKIP_DTYPES="$skip" \
        python -m pytest ${TESTS:-array_api_tests} -q -rf -p no:cacheprovider \
            --hypothesis-seed="$seed" --max-examples="$max_examples" --disable-deadline \
            "$@" > "$log" 2>&1)
    took=$(( $(date +%s) - start ))
    line=$(grep -E "(passed|failed|error).* in [0-9.]+s" "$log" | tail -1 | sed 's/=//g')
    line=${line:-"did not run (see the log)"}
    summary="$summary$(printf '%-7s %s (wall %ss; dtypes skipped: %s; log %s)' "$module" "$line" \
        "$took" "${skip:-none}" "$log")"$'\n'
done
echo "array API tests (standard $ARRAY_API_TESTS_VERSION, seed $seed, max-examples $max_examples):"
printf '%s' "$summary"
