#!/usr/bin/env bash
# Reads a build's output on stdin and, when stderr is a terminal, shows its
# progress lines (cargo's "Compiling ...", pip's "Collecting ..." and the
# like) on one line of stderr redrawn in place, cleared at the end; off a
# terminal it shows nothing. scripts/setup.sh pipes pip's output through it
# (keeping the whole output for a failure).
if [ ! -t 2 ]; then
    cat >/dev/null
    exit 0
fi
cols=$(tput cols 2>/dev/null || echo 80)
while IFS= read -r line; do
    line=${line#"${line%%[![:space:]]*}"}   # (leading blanks off)
    case "$line" in
        Compiling\ *|Collecting\ *|Downloading\ *|Installing\ *|Building\ *|Finished\ *|Successfully\ *)
            printf '\r\033[K  %s' "${line:0:$((cols - 3))}" >&2 ;;
    esac
done
printf '\r\033[K' >&2
