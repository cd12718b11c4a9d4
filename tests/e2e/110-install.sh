#!/bin/bash
# Installing: `make install` puts the binary, the man page and the bash and zsh completions
# under DESTDIR, and `make uninstall` removes exactly those (a file of someone else's beside
# them stays); the bash completion completes subcommands, options (from --help), option values,
# run directories and the traced program's arguments; scripts/install-deps.sh installs what
# building and running need by default, what the tests need with --test (every tool the tests
# run that this machine has comes from one of its packages, asked of dpkg), and waits for the
# package manager's lock. apt-get, dpkg-query, pkg-config and sudo are stubs here: nothing is
# installed.
source "$(dirname "$0")/../lib/testlib.sh"
require_calltrace

# ---- make install / uninstall
CTX="[make install]"
[ -x "$ROOT/calltrace" ] || fail "no $ROOT/calltrace: run make first"
DEST=$T/dest
mkdir -p "$DEST/usr/local/bin" && echo theirs >"$DEST/usr/local/bin/other"
# -o calltrace: the binary as built, not rebuilt here (make check SANITIZE=1 builds another one)
make -s -C "$ROOT" -o calltrace install DESTDIR="$DEST" >"$T/install.log" 2>&1 ||
    fail "make install: $(cat "$T/install.log")"
(cd "$DEST" && find . -type f | sort) >"$T/files"
cat >"$T/want" <<'EOF'
./usr/local/bin/calltrace
./usr/local/bin/other
./usr/local/share/bash-completion/completions/calltrace
./usr/local/share/man/man1/calltrace.1
./usr/local/share/zsh/site-functions/_calltrace
EOF
diff "$T/want" "$T/files" >/dev/null || fail "installed files (- expected, + got):
$(diff "$T/want" "$T/files")"
[ "$(stat -c %a "$DEST/usr/local/bin/calltrace")" = 755 ] || fail "the binary is not mode 755"
"$DEST/usr/local/bin/calltrace" --version | grep -q '^calltrace ' || fail "the installed calltrace does not run"
CTX="[make uninstall]"
make -s -C "$ROOT" uninstall DESTDIR="$DEST" >"$T/uninstall.log" 2>&1 ||
    fail "make uninstall: $(cat "$T/uninstall.log")"
[ "$(cd "$DEST" && find . -type f)" = ./usr/local/bin/other ] ||
    fail "left after uninstall, or removed: $(cd "$DEST" && find . -type f)"

# ---- bash completion
CTX="[bash completion]"
mkdir -p "$T/here/run1" "$T/here/run2" "$T/here/notarun" && touch "$T/here/run1/events.ctr" "$T/here/run2/events.ctr" "$T/here/afile"
# complete WORD...: the completions of the last word of "calltrace WORD...", one a line
complete_words() {
    (
        cd "$T/here" || exit 1
        # shellcheck disable=SC1091
        source "$ROOT/scripts/completion/calltrace.bash"
        COMP_WORDS=("$CALLTRACE" "$@")
        COMP_CWORD=$#
        _calltrace
        printf '%s\n' "${COMPREPLY[@]}" | sort
    )
}
has() { # has "WORDS" COMPLETION...: the completions of WORDS (a last space: an empty word to
    # complete) include every COMPLETION
    local words=$1 list
    shift
    read -ra list <<<"$words"
    [[ $words == *" " ]] && list+=("")
    complete_words "${list[@]}" >"$T/got"
    local c
    for c in "$@"; do
        grep -qxF -- "$c" "$T/got" || fail "'calltrace $words<TAB>' does not offer $c: $(tr '\n' ' ' <"$T/got")"
    done
}
has "rep" report
has "re" record report
has "--eng" --engine
has "--min-d" --min-duration
has "graph --gr" --group
has "tree --inc" --include
has "calls --ti" --tid
has "export --fr" --from
complete_words report "" >"$T/got"
[ "$(tr '\n' ' ' <"$T/got")" = "run1 run2 " ] || fail "'calltrace report <TAB>' offers $(tr '\n' ' ' <"$T/got"), not the runs"
complete_words --engine "" >"$T/got"
[ "$(tr '\n' ' ' <"$T/got")" = "inject ptrace " ] || fail "'--engine <TAB>': $(cat "$T/got")"
complete_words report -s c >"$T/got"
[ "$(cat "$T/got")" = calls ] || fail "'report -s c<TAB>': $(cat "$T/got")"
has "-o out ./prog a" afile
has "-A=fib -t 2s ./prog " afile run1 notarun
if command -v zsh >/dev/null; then
    zsh -n "$ROOT/scripts/completion/_calltrace" || fail "the zsh completion does not parse"
fi

# ---- scripts/install-deps.sh
STUBS=$T/stubs
mkdir -p "$STUBS"
# apt-get: logs its command; `update` fails with apt's lock message while $T/locked holds a
# number above 0 (taken down by one each time), or forever when it holds "always"
cat >"$STUBS/apt-get" <<EOF
#!/bin/bash
echo "\$*" >>"$T/apt.log"
[[ " \$* " = *" update "* ]] || exit 0
n=\$(cat "$T/locked" 2>/dev/null || echo 0)
[ "\$n" = always ] || [ "\$n" -gt 0 ] || exit 0
[ "\$n" = always ] || echo \$((n - 1)) >"$T/locked"
echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
exit 100
EOF
printf '#!/bin/sh\necho "install ok installed"\n' >"$STUBS/dpkg-query"
printf '#!/bin/sh\nexit 0\n' >"$STUBS/pkg-config"
printf '#!/bin/sh\nexec "$@"\n' >"$STUBS/sudo"
chmod +x "$STUBS"/*
mkdir -p "$T/tp/trace-processor" && touch "$T/tp/trace-processor/trace_processor.wasm"
# deps OPTIONS...: the script with the stubs; its status in DEPS_RC, its output in $T/deps.out
deps() {
    : >"$T/apt.log"
    PATH=$STUBS:$PATH CALLTRACE_LOCK_POLL_S=0 CALLTRACE_POLICY_RC_D=$T/policy-rc.d \
        CALLTRACE_TRACE_PROCESSOR_DIR=$T/tp "$ROOT/scripts/install-deps.sh" "$@" >"$T/deps.out" 2>&1
    DEPS_RC=$?
}
installed() { sed -n 's/.* install --no-install-recommends //p' "$T/apt.log" | tr ' ' '\n' | sort; }

CTX="[install-deps.sh]"
echo 2 >"$T/locked"
deps
[ "$DEPS_RC" = 0 ] || fail "exit status $DEPS_RC: $(cat "$T/deps.out")"
[ "$(grep -c ' update$' "$T/apt.log")" = 3 ] || fail "apt-get update was not tried again until the lock was free: $(cat "$T/apt.log")"
[ "$(grep -c "waiting for the package manager's lock" "$T/deps.out")" = 1 ] ||
    fail "the wait for the lock was not said once: $(cat "$T/deps.out")"
printf '%s\n' build-essential pkg-config libelf-dev libdw-dev libcapstone-dev libcjson-dev \
    libbsd-dev libmicrohttpd-dev zlib1g-dev | sort >"$T/want"
installed | diff "$T/want" - >/dev/null || fail "by default it installs (- building and running need, + it installs):
$(installed | diff "$T/want" -)"
[ -e "$T/policy-rc.d" ] && fail "a policy-rc.d was left"

CTX="[install-deps.sh --test]"
deps --test
[ "$DEPS_RC" = 0 ] || fail "exit status $DEPS_RC: $(cat "$T/deps.out")"
installed >"$T/test-pkgs"
# Node.js and npm come from Debian unless the machine has its own (the script keeps those)
node_pkgs="nodejs npm"
type -P node >/dev/null && type -P npm >/dev/null && node_pkgs=""
for p in $(cat "$T/want") python3 graphviz chromium clang valgrind gdb strace redis-server nginx $node_pkgs ltrace uftrace; do
    grep -qx "$p" "$T/test-pkgs" || fail "--test does not install $p: $(tr '\n' ' ' <"$T/test-pkgs")"
done
# every tool the tests run, that this machine has, comes from a package --test installs (or
# one of their own dependencies, or an essential package)
cp "$T/test-pkgs" "$T/provided"
# shellcheck disable=SC2046
apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances $(cat "$T/test-pkgs") 2>/dev/null | sed -n 's/^ *\(Pre\)\{0,1\}Depends: //p' >>"$T/provided"
for tool in dot chromium gdb strace valgrind redis-server redis-benchmark redis-cli nginx ab sqlite3 \
    objdump nm strip objcopy curl ss pgrep ps file python3 ${node_pkgs:+node npm} clang openssl taskset setpriv time \
    ltrace uftrace; do
    path=$(type -P "$tool") || continue
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null) || continue
    pkg=${pkg%%:*}
    [ "$(dpkg-query -W -f='${Essential}' "$pkg" 2>/dev/null)" = yes ] && continue
    grep -qx "$pkg" "$T/provided" ||
        fail "the tests run $tool (package $pkg), which install-deps.sh --test does not install"
done

CTX="[install-deps.sh, the lock never free]"
echo always >"$T/locked"
CALLTRACE_LOCK_WAIT_S=0 deps
[ "$DEPS_RC" != 0 ] || fail "it went on without the lock"
grep -q 'Could not get lock' "$T/deps.out" || fail "apt's message was not shown: $(cat "$T/deps.out")"
exit 0
