# Sourced by the reliability CLI tests that run small trainings against a test
# plugin folder (end_of_run.sh, plugin_exit.sh, output_dir_lock.sh): their
# arguments <trainhook binary> <work dir> <plugin folder>, a clean work dir,
# fail() counting failed cases (the caller reports $failures at its end), and
# $WORK/train.csv, 32 rows of two features and a class (seed 5).
set -uo pipefail
CLI="$1"
WORK="$2"
PLUGINS="$3"
rm -rf "$WORK"
mkdir -p "$WORK"
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

python3 - "$WORK" <<'PY'
import random, sys
r = random.Random(5)
with open(f"{sys.argv[1]}/train.csv", "w") as f:
    for _ in range(32):
        a, b = r.uniform(-1, 1), r.uniform(-1, 1)
        f.write(f"{a:.4f},{b:.4f},{int(a + b > 0)}\n")
PY
