#!/usr/bin/env bash
# Prints the version the tools report for --version: VERSION and the git commit of the sources, e.g. `0.1.0 (f5c5e6c)`
# (the bare VERSION outside a git checkout, e.g. in a source tarball). Given a file, writes it instead as the Swift
# source that stamps CastVersion (Modules/CastVersion), `let stampedVersion = "0.1.0 (f5c5e6c)"`: the VersionStamp
# build plugin runs it so whenever VERSION, this script or git's HEAD changes. Tools/package.sh reads the version here.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d ' \t\r\n' < VERSION)
# Debian's rules for an upstream version (dpkg-deb rejects others).
if ! [[ "$version" =~ ^[0-9][0-9A-Za-z.+~]*$ ]]; then
    echo "version-stamp.sh: VERSION must hold one version such as 0.1.0, not '$version'" >&2
    exit 1
fi
# --no-optional-locks: never takes the index lock of a tree in use.
if commit=$(git --no-optional-locks rev-parse --short=7 HEAD 2> /dev/null); then
    version="$version ($commit)"
fi
if [ $# = 0 ]; then
    echo "$version"
else
    mkdir -p "$(dirname "$1")"
    printf '// Written by Tools/version-stamp.sh (the VersionStamp build plugin); not in git.\nlet stampedVersion = "%s"\n' \
        "$version" > "$1.tmp"
    mv "$1.tmp" "$1"
fi
