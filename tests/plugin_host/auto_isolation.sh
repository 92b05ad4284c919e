#!/usr/bin/env bash
# --plugin_isolation auto (the default) through the real CLI, with no site file
# but the ones made here (the suite's TRAINHOOK_SITE_CONFIG is unset): a plugin
# outside the trainer's own folder runs in its own process (its pid is not the
# trainer's) and the log says how to trust it; pinned (the site file's lock or
# TRAINHOOK_PLUGIN_LOCK), in a site trusted folder, under none (flag or site
# file) or with its plugin_config isolation=in_process it runs in the trainer's
# process; a plugin that needs the model's tensors, isolated because nothing
# vouches for it, stops the run before training, naming it and how to trust it
# (and trusted, it runs); `trainhook plugins` prints each library's mode and
# why; the site file's lock pins without refusing what it does not list; a bad
# site file is refused naming the file and the key.
# usage: auto_isolation.sh <trainhook binary> <work dir> <folder of isolated_faults>
#        <folder of tensor_reader> <folder of the test pack (pack-hello)>
set -uo pipefail
CLI="$1"
WORK="$2"
PLUGINS="$(cd "$3" && pwd -P)"
READER="$(cd "$4" && pwd -P)"
PACK="$(cd "$5" && pwd -P)"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$WORK"
mkdir -p "$WORK"
KEEP_GOING=1
source "$HERE/../lib/test_lib.sh"
unset TRAINHOOK_SITE_CONFIG TRAINHOOK_PLUGIN_LOCK
# The build tree holds no etc/trainhook/site.json: nothing is trusted but the
# trainer's own folder unless a case says so.
SITE_DEFAULT="$(cd "$(dirname "$CLI")/.." && pwd)/etc/trainhook/site.json"
[[ ! -e $SITE_DEFAULT ]] || fail "$SITE_DEFAULT exists; this test needs the default site file absent"

"$HERE/../early_stopping/make_data.sh" "$WORK/data"
BASE=(train --train_file "$WORK/data/train.csv" --per_device_train_batch_size 16 --hidden_size 8
  --disable_tqdm true --do_train --max_steps 3 --logging_steps 1 --save_strategy no --seed 3
)
source "$(dirname "${BASH_SOURCE[0]}")/cli_runs.sh"
CB=(--plugin_dir "$PLUGINS" --callbacks isolated_faults)

# where NAME: "isolated" or "in process", from the plugin's pid against the trainer's.
where() {
  local plugin_pid trainer_pid
  plugin_pid=$(grep -oE "isolated_faults: created in pid [0-9]+" "$WORK/$1.out" | grep -oE "[0-9]+$")
  trainer_pid=$(cat "$WORK/$1.pid")
  if [[ -z $plugin_pid ]]; then
    echo "not created"
  elif [[ $plugin_pid == "$trainer_pid" ]]; then
    echo "in process"
  else
    echo "isolated"
  fi
}

# expect NAME WHERE: the run ended 0 and its plugin ran WHERE.
expect() {
  local got
  got=$(where "$1")
  if ((rc != 0)); then
    fail "$1: exit $rc"
    tail -8 "$WORK/$1.out"
  elif [[ $got != "$2" ]]; then
    fail "$1: the plugin ran $got, expected $2"
    tail -8 "$WORK/$1.out"
  else
    echo "ok $1 ($2)"
  fi
}

# 1. auto by default: outside the trainer's folder and not trusted: isolated,
#    with the reason and the ways to trust it in the log.
run auto "${CB[@]}"
expect auto isolated
has_line auto "'isolated_faults' runs in its own process ($PLUGINS/libtrainhook_isolated_faults.so, not trusted"
has_line auto "add $PLUGINS to trusted_plugin_dirs in the site file $SITE_DEFAULT"

# 2. The site file's trusted folder: in process.
printf '{"trusted_plugin_dirs": ["%s"]}\n' "$PLUGINS" >"$WORK/trusted.json"
TRAINHOOK_SITE_CONFIG="$WORK/trusted.json" run trusted "${CB[@]}"
expect trusted "in process"

# 3. Pinned: the site file's lock, then TRAINHOOK_PLUGIN_LOCK (a relative lock
#    path in the site file is the site file's folder's).
"$CLI" plugins lock "$PLUGINS/libtrainhook_isolated_faults.so" >"$WORK/plugins.lock" 2>"$WORK/lock.err" ||
  fail "trainhook plugins lock: $(cat "$WORK/lock.err")"
printf '{"plugin_lock": "plugins.lock"}\n' >"$WORK/locked.json"
TRAINHOOK_SITE_CONFIG="$WORK/locked.json" run pinned_site "${CB[@]}"
expect pinned_site "in process"
TRAINHOOK_PLUGIN_LOCK="$WORK/plugins.lock" run pinned_env "${CB[@]}"
expect pinned_env "in process"

# 4. none, on the command line or as the site's default; the section's own key.
run none "${CB[@]}" --plugin_isolation none
expect none "in process"
printf '{"plugin_isolation": "none"}\n' >"$WORK/none.json"
TRAINHOOK_SITE_CONFIG="$WORK/none.json" run site_none "${CB[@]}"
expect site_none "in process"
run section "${CB[@]}" --plugin_config isolated_faults.isolation=in_process
expect section "in process"
# The command line wins over the site file.
TRAINHOOK_SITE_CONFIG="$WORK/none.json" run flag_auto "${CB[@]}" --plugin_isolation auto
expect flag_auto isolated

# 5. A plugin that needs the model's tensors, untrusted: refused at creation in
#    its helper with its own words, then what isolated it and how to trust it;
#    no model trained. Trusted, it runs in process.
READER_ARGS=(--plugin_dir "$READER" --callbacks tensor_reader)
run reader_auto "${READER_ARGS[@]}"
if ((rc == 0)); then
  fail "reader_auto: an untrusted tensor_reader under auto ran; it should have stopped the run at creation"
else
  has_line reader_auto "tensor_reader reads the model's tensors, which an isolated callback is not given"
  has_line reader_auto "'tensor_reader' runs isolated under plugin_isolation auto (the default) (not trusted"
  has_line reader_auto "to run 'tensor_reader' in process, trust it: add $READER to trusted_plugin_dirs"
  [[ ! -e $WORK/reader_auto/model.safetensors ]] || fail "reader_auto: the refused run trained a model"
fi
printf '{"trusted_plugin_dirs": ["%s"]}\n' "$READER" >"$WORK/reader.json"
TRAINHOOK_SITE_CONFIG="$WORK/reader.json" run reader_trusted "${READER_ARGS[@]}"
if ((rc != 0)); then
  fail "reader_trusted: exit $rc"
  tail -5 "$WORK/reader_trusted.out"
else
  echo "ok an untrusted plugin that needs the model is stopped with how to trust it; trusted, it runs"
fi

# 6. `trainhook plugins` prints each library's mode and why.
listing() {  # name args...: the listing in $WORK/NAME.list
  local name="$1"
  shift
  "$CLI" plugins --plugin_dir "$PLUGINS" "$@" >"$WORK/$name.list" 2>"$WORK/$name.err" ||
    fail "trainhook plugins ($name): exit $?: $(tail -3 "$WORK/$name.err")"
}
list_has() {  # name text
  grep -qF -- "$2" "$WORK/$1.list" || fail "trainhook plugins ($1): no line '$2' in: $(tail -6 "$WORK/$1.list")"
}
listing list_auto
list_has list_auto "Isolation under plugin_isolation auto (the default):"
list_has list_auto "$PLUGINS/libtrainhook_isolated_faults.so: isolated (not trusted"
list_has list_auto "libtrainhook_progress.so: in process (the trainer's own plugin folder)"
TRAINHOOK_SITE_CONFIG="$WORK/trusted.json" listing list_trusted
list_has list_trusted "$PLUGINS/libtrainhook_isolated_faults.so: in process (a trusted folder of site file $WORK/trusted.json)"
TRAINHOOK_PLUGIN_LOCK="$WORK/plugins.lock" listing list_pinned
list_has list_pinned "$PLUGINS/libtrainhook_isolated_faults.so: in process (pinned in $WORK/plugins.lock)"
listing list_none --plugin_isolation none
list_has list_none "Isolation under plugin_isolation none (--plugin_isolation):"
list_has list_none "$PLUGINS/libtrainhook_isolated_faults.so: in process"
((failures == 0)) && echo "ok trainhook plugins lists the modes"

# 7. The site file's lock decides trust, not what may load (TRAINHOOK_PLUGIN_LOCK
#    refuses the unlisted; the site's lock does not): under it, the test pack's
#    unlisted library is listed isolated beside the pinned isolated_faults, and
#    its command (pack-hello) still runs.
TRAINHOOK_SITE_CONFIG="$WORK/locked.json" TRAINHOOK_PLUGIN_PATH="$PACK" listing list_site_lock
list_has list_site_lock "$PLUGINS/libtrainhook_isolated_faults.so: in process (pinned in $WORK/plugins.lock)"
list_has list_site_lock "$PACK/"
grep -F -- "$PACK/" "$WORK/list_site_lock.list" | grep -qF ": isolated (not trusted" ||
  fail "trainhook plugins under the site's lock: the pack's unlisted library is not listed isolated: $(grep -F -- "$PACK/" "$WORK/list_site_lock.list")"
TRAINHOOK_SITE_CONFIG="$WORK/locked.json" TRAINHOOK_PLUGIN_PATH="$PACK" "$CLI" pack-hello one \
  >"$WORK/hello_locked.out" 2>&1
rc=$?
((rc == 1)) && grep -qF "[pack-hello] hello one" "$WORK/hello_locked.out" ||
  fail "pack-hello under the site file's lock: exit $rc, expected 1 (its argument count): $(tail -3 "$WORK/hello_locked.out")"
((failures == 0)) && echo "ok the site's lock pins without refusing the unlisted"

# 8. A bad site file: refused, naming the file and the key, by the trainer and
#    by the listing.
printf '{"plugin_isolation": "auto", "trusted_dir": ["%s"]}\n' "$PLUGINS" >"$WORK/bad.json"
TRAINHOOK_SITE_CONFIG="$WORK/bad.json" run bad "${CB[@]}"
want="site file $WORK/bad.json: unknown key 'trusted_dir' (expected plugin_isolation, trusted_plugin_dirs, plugin_lock)"
if ((rc == 0)); then
  fail "bad: a run with a bad site file exited 0"
else
  has_line bad "$want"
fi
if TRAINHOOK_SITE_CONFIG="$WORK/bad.json" "$CLI" plugins >"$WORK/bad_list.out" 2>&1; then
  fail "bad: trainhook plugins accepted a bad site file"
elif ! grep -qF -- "$want" "$WORK/bad_list.out"; then
  fail "bad: trainhook plugins did not name the bad key: $(tail -3 "$WORK/bad_list.out")"
fi
printf '{"plugin_isolation": "process"}\n' >"$WORK/bad_mode.json"
TRAINHOOK_SITE_CONFIG="$WORK/bad_mode.json" run bad_mode "${CB[@]}"
((rc != 0)) || fail "bad_mode: a run with plugin_isolation \"process\" in the site file exited 0"
has_line bad_mode "site file $WORK/bad_mode.json: key 'plugin_isolation': expected \"auto\" or \"none\", got \"process\""
((failures == 0)) && echo "ok bad site files refused"

exit $((failures > 0))
