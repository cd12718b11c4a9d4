# bash completion for calltrace: subcommands, the options of each (read from its --help, so
# they are always those of the calltrace installed), option values with a fixed set of
# choices, run directories (those holding an events.ctr) where a subcommand reads a run, and
# the traced program's own arguments after the program. `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/calltrace.

# The options calltrace SUBCOMMAND --help lists (the record command's without one).
_calltrace_options()
{
    "${1:-calltrace}" ${2:+"$2"} --help 2>/dev/null |
        grep -E '^ +-' | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | tr -d ' ,' | sort -u
}

# The run directories under DIR (default .): those with a record.
_calltrace_runs()
{
    local d base=${1:-.}
    for d in "$base"/*/ "$base"/.[!.]*/; do
        [ -f "$d/events.ctr" ] || continue
        d=${d%/}
        [ "$base" = . ] && d=${d#./}
        printf '%s\n' "$d"
    done
    return 0
}

# Does option OPT of SUBCOMMAND take a value in the next word?
_calltrace_takes_value()
{
    case $1 in
    -o | --output | -p | --pid | -t | --duration | --tid | -F | --filter | --include | -N | \
        --exclude | -D | --max-depth | --depth | -l | --lib | --min-duration | --string-max | \
        --capture | --max-call-dirs | --engine | --buffer-size | --format | --port | \
        --timeout | --ui-origin | --from | --to | --max-calls | -s | --sort | -n | --top | \
        -f | -g | --group | --hist)
        return 0 ;;
    esac
    return 1
}

_calltrace()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local prog=${COMP_WORDS[0]} sub="" first=1 i
    local subs="record export view report graph tree flame diff merge calls"
    case " $subs " in *" ${COMP_WORDS[1]:-} "*) [ "$COMP_CWORD" -gt 1 ] && sub=${COMP_WORDS[1]} first=2 ;; esac
    [ "$sub" = record ] && sub=""
    COMPREPLY=()

    # The value of the option before the cursor.
    case $prev in
    --engine) mapfile -t COMPREPLY < <(compgen -W "inject ptrace" -- "$cur"); return ;;
    --format)
        if [ "$sub" = report ] || [ "$sub" = diff ]; then
            mapfile -t COMPREPLY < <(compgen -W "table csv json" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "json perfetto both" -- "$cur")
        fi
        return ;;
    -f) [ -n "$sub" ] && mapfile -t COMPREPLY < <(compgen -W "table csv json" -- "$cur"); return ;;
    -s | --sort) mapfile -t COMPREPLY < <(compgen -W "total self calls avg min max name" -- "$cur"); return ;;
    -g | --group) mapfile -t COMPREPLY < <(compgen -W "file image none" -- "$cur"); return ;;
    -p | --pid) mapfile -t COMPREPLY < <(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur"); return ;;
    -o | --output) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    esac
    if _calltrace_takes_value "$prev"; then
        return
    fi

    if [ -z "$sub" ]; then
        # the record command: once the program is named, its arguments are the program's
        for ((i = first; i < COMP_CWORD; i++)); do
            local w=${COMP_WORDS[i]}
            if [ "$w" = -- ]; then
                i=$((i + 1))
                break
            fi
            if _calltrace_takes_value "$w"; then
                i=$((i + 1))
            elif [[ $w != -* ]]; then
                break
            fi
        done
        if [ "$i" -lt "$COMP_CWORD" ]; then
            if declare -F _command_offset >/dev/null; then
                _command_offset "$i"
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return
        fi
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_calltrace_options "$prog")" -- "$cur")
        elif [ "$i" = 1 ] && [ "$COMP_CWORD" = 1 ]; then
            mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur"; compgen -c -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -c -- "$cur"; compgen -f -- "$cur")
        fi
        return
    fi

    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_calltrace_options "$prog" "$sub")" -- "$cur")
        return
    fi
    # a run directory, or for view a trace file or a directory of runs too
    local dir=.
    [[ $cur == */* ]] && dir=${cur%/*}
    mapfile -t COMPREPLY < <(compgen -W "$(_calltrace_runs "$dir")" -- "$cur")
    if [ "$sub" = view ] || [ ${#COMPREPLY[@]} = 0 ]; then
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur")
        [ "$sub" = view ] && mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -X '!*.@(json|pftrace|gz)' -- "$cur")
    fi
    return 0
}
complete -F _calltrace -o filenames calltrace
