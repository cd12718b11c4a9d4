#!/bin/bash
# The run directory against other local users (calltrace often runs as root):
#   - modes: a run is private (0700, files 0600, call folders too) unless --share (0755/0644
#     less the umask); export keeps them;
#   - a parent directory others may write to and that is not sticky is refused (one line,
#     nothing created); a sticky one (as /tmp) is fine;
#   - root's export and merge refuse a run directory owned by another user, or one others may
#     write to (one line, nothing changed);
#   - races, made deterministic by tests/progs/pause_shim.c (calltrace stops itself right after
#     making calls/ or calls.new/): the owner of the run's parent (user nobody) renames the run
#     away while root's `calltrace -A` writes its call folders, and while root's
#     `calltrace export` rewrites them, and puts in its place a run of theirs whose
#     calls/index.json is a link to a root-only file and whose call folder is a link to a
#     root-only directory. Neither may change, and the call folders must land in the real run.
#     (Before the run directory was held by a descriptor, the root-only file was overwritten
#     with index.json and the folders were made inside the root-only directory.)
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace
build args O0
umask 022

# modes_of DIR: "MODE TYPE" of everything under DIR, sorted and counted
modes_of() { find "$1" -mindepth 1 -printf '%m %y\n' | sort | uniq -c | awk '{print $2, $3, $1}'; }
expect_modes() { # expect_modes DIR DIR_MODE FILE_MODE
    local bad
    bad=$(find "$1" \( -type d ! -perm "$2" \) -o \( -type f ! -perm "$3" \) -printf '%m %P\n')
    [ -z "$bad" ] || fail "modes other than $2/$3 in $1: $bad"
    [ "$(stat -c %a "$1")" = "${2#0}" ] || fail "$1 has mode $(stat -c %a "$1"), expected $2"
}

CTX="[private by default]"
ct_run -A -R -- "$BIN" one two
expect_rc 0
expect_trace
[ -f "$CT_DIR/calls/show/2/call.json" ] || fail "no call folders: $(find "$CT_DIR" | head)"
expect_modes "$CT_DIR" 700 600
private=$CT_DIR
note "$(modes_of "$CT_DIR" | tr '\n' ' ')"

CTX="[export keeps the modes]"
ct_raw export "$private"
expect_rc 0
expect_modes "$private" 700 600
[ -f "$private/calls/show/2/call.json" ] && [ ! -e "$private/calls.new" ] ||
    fail "export did not rebuild calls/ in place: $(ls -A "$private")"

CTX="[--share]"
ct_run --share -A -- "$BIN" one
expect_rc 0
expect_modes "$CT_DIR" 755 644

CTX="[a parent others may write to]"
mkdir "$T/open" && chmod 0777 "$T/open" || fail "mkdir $T/open"
ct_raw -o "$T/open/run" -- "$BIN" x
one_stderr_line_error "parent writable by all, not sticky"
grep -q "other users may write to $T/open and it is not sticky" "$CT_ERR" ||
    fail "the error does not say why: $(cat "$CT_ERR")"
[ -z "$(ls -A "$T/open")" ] || fail "created in $T/open: $(ls -A "$T/open")"
chmod 1777 "$T/open"
ct_raw -o "$T/open/run" -- "$BIN" x
expect_rc 0 "in a sticky directory"
expect_modes "$T/open/run" 700 600

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    note "not root (or no setpriv): the other-user checks are left out"
    exit 0
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

CTX="[another user's run]"
cp -a "$private" "$T/theirs" && chown -R 65534:65534 "$T/theirs" || fail "cannot copy the run"
before=$(cd "$T/theirs" && find . -printf '%p %s %T@\n' | sort)
ct_raw export "$T/theirs"
one_stderr_line_error "export of nobody's run"
grep -q "owned by nobody, not by you" "$CT_ERR" || fail "the error does not say whose: $(cat "$CT_ERR")"
ct_raw merge "$T/theirs" -o "$T/merged"
one_stderr_line_error "merge of nobody's run"
[ ! -e "$T/merged" ] || fail "merge wrote $T/merged"
ct_raw view --from 0 --to 1s --server-only --port 0 --timeout 1 "$T/theirs"
one_stderr_line_error "a window of nobody's run"
[ "$before" = "$(cd "$T/theirs" && find . -printf '%p %s %T@\n' | sort)" ] ||
    fail "nobody's run was changed"
cp -a "$private" "$T/open-run" && chmod 0777 "$T/open-run" || fail "cannot copy the run"
ct_raw export "$T/open-run"
one_stderr_line_error "export of a run others may write to"
grep -q "other users may write to it" "$CT_ERR" || fail "the error does not say why: $(cat "$CT_ERR")"

# ---- the races ----------------------------------------------------------------------------
if [ -n "${CALLTRACE_REAL:-}" ]; then
    note "under valgrind: the races (calltrace stopping itself through an LD_PRELOAD) are left out"
    exit 0
fi
build_shared pause_shim O2 shim/pause_shim.so -ldl
SHIM=$LIB
echo "root's secret" >"$T/secret" && chmod 0600 "$T/secret"
mkdir "$T/victim" && echo keep >"$T/victim/keep" && chmod 0700 "$T/victim"
secret_before=$(md5sum <"$T/secret")
HOME_DIR=$T/home
mkdir "$HOME_DIR" && chown 65534:65534 "$HOME_DIR" && chmod 0755 "$T" "$HOME_DIR" ||
    fail "cannot make nobody's directory"

stopped() { [ "$(proc_state "$1")" = T ]; }
# swap RUN: as nobody, RUN goes to RUN.moved and a run of nobody's takes its place, with
# calls/index.json (and calls.new/index.json) a link to the secret and calls/show a link to
# the root-only directory, and a copy of the record when nobody can read it (a run of 0644
# files, as calltrace made them before)
swap() {
    as_nobody sh -c '
        mv "$1" "$1.moved" && mkdir -p "$1/calls" "$1/calls.new" &&
        { cp "$1.moved/events.ctr" "$1/" 2>/dev/null || :; } &&
        for d in calls calls.new; do
            ln -s "$2" "$1/$d/index.json" && ln -s "$3" "$1/$d/show" || exit 1
        done' sh "$1" "$T/secret" "$T/victim" || fail "nobody could not swap $1"
}
# paused_run RUN CALLTRACE_ARGS...: calltrace in the background, stopped at its call folders,
# RUN swapped, then let go; CT_RC, CT_ERR
paused_run() {
    local run=$1
    shift
    _next_files
    CT_OUT=$_OUT CT_ERR=$_ERR
    LD_PRELOAD=$SHIM CT_PAUSE_NAMES=calls:calls.new \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
        "$CALLTRACE" "$@" </dev/null >"$CT_OUT" 2>"$CT_ERR" &
    BG=$!
    wait_until 30 "calltrace to stop at its call folders" stopped "$BG"
    swap "$run"
    kill -CONT "$BG"
    ct_wait_bg 30
    CT_DIR=$run.moved CT_TRACE=$run.moved/trace.json
}
check_untouched() {
    [ "$(md5sum <"$T/secret")" = "$secret_before" ] ||
        fail "the root-only file was written: $(head -c 200 "$T/secret")"
    [ "$(ls -A "$T/victim")" = keep ] || fail "written into the root-only directory: $(ls -A "$T/victim")"
    local ours
    ours=$(find "$1" -user root -printf '%P\n')
    [ -z "$ours" ] || fail "root wrote into nobody's run: $ours"
}
check_real_run() { # the run moved away holds the call folders, written there
    [ -f "$1/calls/index.json" ] && [ ! -L "$1/calls/index.json" ] &&
        [ -f "$1/calls/show/2/call.json" ] ||
        fail "the call folders are not in the real run: $(find "$1" | head -20)"
    grep -q '"name":.*"show"' "$1/calls/index.json" || fail "index.json: $(cat "$1/calls/index.json")"
    expect_modes "$1" 700 600
}

CTX="[run swapped while recording -A]"
paused_run "$HOME_DIR/run" "${CT_ENGINE_OPT[@]}" -A -o "$HOME_DIR/run" -- "$BIN" one two
expect_rc 0 "recording"
check_untouched "$HOME_DIR/run"
check_real_run "$HOME_DIR/run.moved"
expect_trace

CTX="[run swapped while exporting]"
ct_run -A -- "$BIN" one two
mv "$CT_DIR" "$HOME_DIR/run2" || fail "mv"
paused_run "$HOME_DIR/run2" export "$HOME_DIR/run2"
expect_rc 0 "export"
check_untouched "$HOME_DIR/run2"
check_real_run "$HOME_DIR/run2.moved"
note "secret and root-only directory untouched; call folders in the runs moved away"
