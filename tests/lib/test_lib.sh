# The shell helpers every CLI test shares. Source it from a test script:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
# Set KEEP_GOING=1 before sourcing in a script that runs many cases and reports
# every failure before it exits (it ends with `exit $((failures > 0))`).

failures=0

# fail MESSAGE: "FAIL: MESSAGE" on stderr, then exit 1 (KEEP_GOING=1: counted in
# $failures, and the script goes on).
fail() {
  echo "FAIL: $*" >&2
  if [[ ${KEEP_GOING:-0} == 1 ]]; then
    failures=$((failures + 1))
    return 0
  fi
  exit 1
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.1 s until it succeeds;
# after SECONDS, fails naming WHAT. Returns 1 then (KEEP_GOING=1), so a caller
# can skip what depended on it. The one bounded poll loop the tests use.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      fail "waited ${seconds} s for $what"
      return 1
    fi
    sleep 0.1
  done
}

# A TCP port free on 127.0.0.1 now (the kernel picks it).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The test venv (PyPI tools: tensorboard, mlflow, moto): TRAINHOOK_TEST_VENV,
# else <source>/build/venv; fails naming how to make it.
test_venv() {
  local venv="${TRAINHOOK_TEST_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/venv}"
  [[ -x $venv/bin/python ]] || fail "no test venv at $venv (run scripts/venv test, or set TRAINHOOK_TEST_VENV)"
  echo "$venv"
}

# need_file PATH WHAT-MAKES-IT: fails unless PATH is a non-empty file.
need_file() {
  [[ -s $1 ]] || fail "$1 is missing; $2 makes it"
}

# wait_for_text FILE TEXT PID [SECONDS]: 0 once FILE holds TEXT; 1 when process
# PID ended first or SECONDS (default 120) passed. The caller says what failed.
wait_for_text() {
  local file=$1 text=$2 pid=$3 deadline=$((SECONDS + ${4:-120}))
  until grep -qF -- "$text" "$file" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || return 1
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}
