# Sourced by scripts/test, scripts/bench and scripts/run (needs ROOT = the clone):
# one compiler cache per user, shared by every clone. CCACHE_BASEDIR makes paths
# relative to the clone, so a fresh clone hits what an earlier one compiled, and
# the benchmarks build from what the tests compiled. A CCACHE_DIR, CCACHE_BASEDIR or
# CCACHE_MAXSIZE already set wins.
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"  # what the PCH needs
export CCACHE_DIR="${CCACHE_DIR:-${HOME:-/root}/.cache/trainhook-ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
