#!/usr/bin/env bash
# Builds the installable swift-cast: cast, cast-receiver and castd as one release binary (the multi-call swift-cast,
# installed as cast with castd and cast-receiver symlinked to it) with the Swift standard library and Foundation
# linked statically (run-time dependencies: the wrapped system libraries and libc), stripped, then
#   swift-cast_<version>_<arch>.deb              Debian package (dpkg-deb; Depends computed by dpkg-shlibdeps)
#   swift-cast-<version>-linux-<machine>.tar.gz  the same files for other distributions (unpack into /usr/local)
# in the output folder (default .build/package). The version is VERSION's; man pages come from the argument
# parser's own help (swift-argument-parser's generate-manual), completions from --generate-completion-script.
#   Tools/package.sh [--out DIR] [--no-build]     --no-build: package the release binary already built
# CAST_PACKAGE_MAINTAINER='Name <address>' sets the Maintainer (default: the last commit's author).
# Tools/package-test.sh checks what this makes (contents, lintian, optionally an install into a clean Debian root).
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build/package
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        *) echo "usage: Tools/package.sh [--out DIR] [--no-build]" >&2; exit 2 ;;
    esac
done

Tools/setup.sh
for tool in dpkg-deb dpkg-shlibdeps strip perl python3; do
    command -v "$tool" > /dev/null || { echo "package.sh: needs $tool (apt-get install dpkg-dev binutils)" >&2; exit 1; }
done

tools=(cast cast-receiver castd)  # /usr/bin/cast is the binary; the other two are symlinks to it
version=$(Tools/version-stamp.sh)  # "0.1.0 (f5c5e6c)"
version=${version%% *}
commit=$(git rev-parse --short=7 HEAD 2> /dev/null || true)
if [ -n "$commit" ] && [ -n "$(git --no-optional-locks status --porcelain --untracked-files=no)" ]; then
    echo "package.sh: note: the sources have uncommitted changes; the version says commit $commit" >&2
fi
arch=$(dpkg --print-architecture)
machine=$(uname -m)
maintainer=${CAST_PACKAGE_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2> /dev/null || true)}
[ -n "$maintainer" ] || { echo "package.sh: set CAST_PACKAGE_MAINTAINER='Name <address>'" >&2; exit 1; }
# Every date and file time in the artefacts is the last commit's (dpkg-deb, gzip -n and tar use it).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || date +%s)}

# --- the release binary ---
# --static-swift-stdlib links the Swift runtime, Foundation (with its ICU data), Dispatch and every Swift package
# statically; --gc-sections (which SwiftPM's release link passes too) drops the sections nothing refers to.
# One multi-call binary rather than three: 82 MB stripped instead of 224 MB, 20 MB instead of 55 MB in the .deb.
# -z now: all symbols bound at start-up, so the relocations can be read-only (full RELRO), as Debian's hardening.
flags=(-c release --static-swift-stdlib -Xlinker --gc-sections -Xlinker -z -Xlinker now)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$build" = 1 ]; then
    # --disable-build-manifest-caching: plan the build afresh, so the build plugins (VersionStamp) surely run.
    swift build "${flags[@]}" --disable-build-manifest-caching --product swift-cast > "$work/build.log" 2>&1 \
        || { grep -v "^\[[0-9]*/[0-9]*\]" "$work/build.log" | tail -40; echo "package.sh: swift build failed" >&2; exit 1; }
fi
bin=$(swift build "${flags[@]}" --show-bin-path)
[ -x "$bin/swift-cast" ] || { echo "package.sh: $bin/swift-cast is missing (run without --no-build)" >&2; exit 1; }

# The copyright file (Debian's machine-readable format): the project's licence, and what the binary links statically.
copyright() {
    local packages checkout years
    # The years of the project's history (its commits), e.g. 2025-2026.
    years=$(git log --format=%ad --date=format:%Y 2> /dev/null | sort -u | sed -n '1p;$p' | paste -sd- | sed -E 's/^([0-9]+)-\1$/\1/')
    packages=$(swift package show-dependencies --format json | python3 -c '
import json, sys
found = {}
def walk(node):
    for child in node["dependencies"]:
        found[child["identity"]] = (child["url"].removesuffix(".git"), child["version"])
        walk(child)
walk(json.load(sys.stdin))
for name, (url, version) in sorted(found.items()):
    print(f"   {name} {version} ({url})")')
    # Every package resolved must be Apache-2.0 for the text below to hold.
    for checkout in .build/checkouts/*/; do
        cat "$checkout"LICENSE* 2> /dev/null | grep -q "Apache License" \
            || { echo "package.sh: $checkout is not Apache-2.0: extend copyright() in Tools/package.sh" >&2; return 1; }
    done
    cat << EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: swift-cast
Upstream-Contact: $maintainer
Comment: /usr/bin/cast is statically linked with the Swift $(swift --version 2>&1 | grep -Eo "Swift version [0-9.]+" | grep -Eo "[0-9.]+$")
 runtime, standard library, Foundation and Dispatch (Apache-2.0 with the
 Runtime Library Exception, https://swift.org/LICENSE.txt), Foundation's copy
 of ICU and its data (the Unicode licence, https://www.unicode.org/copyright.html),
 and with code from these Swift packages, each Apache-2.0:
$packages

Files: *
Copyright: ${years:-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)} the swift-cast authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in /usr/share/common-licenses/Apache-2.0.
EOF
}

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$work/root  # the staged tree, as installed

# --- /usr/bin: cast stripped as dh_strip does (symbols, .comment and .note); castd, cast-receiver -> cast ---
mkdir -p "$root/usr/bin"
strip --strip-all --remove-section=.comment --remove-section=.note -o "$root/usr/bin/cast" "$bin/swift-cast"
chmod 755 "$root/usr/bin/cast"
ln -s cast "$root/usr/bin/castd"
ln -s cast "$root/usr/bin/cast-receiver"

# --- man pages: swift-argument-parser's generate-manual tool on each tool's --experimental-dump-help ---
# `swift package generate-manual` (the plugin) would build every product of the package again, without
# --static-swift-stdlib; asked for --help it builds just its tool, which then reads the packaged binary. Characters
# beyond ASCII become groff's \[uXXXX] escapes and blank lines paragraph breaks, which man reads without warnings.
swift package generate-manual --help > "$work/manual-tool.log" 2>&1 || { cat "$work/manual-tool.log" >&2; exit 1; }
manual_tool=$(swift build --show-bin-path)/generate-manual-tool
[ -x "$manual_tool" ] || { echo "package.sh: no $manual_tool (swift-argument-parser's generate-manual)" >&2; exit 1; }
mkdir -p "$root/usr/share/man/man1" "$work/man"
for tool in "${tools[@]}"; do
    "$manual_tool" "$root/usr/bin/$tool" --output-directory "$work/man" \
        --date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)" --authors "${maintainer/ </<}" > /dev/null
    [ -s "$work/man/$tool.1" ] || { echo "package.sh: generate-manual wrote no $tool.1" >&2; exit 1; }
    perl -CSD -pe 's/([^\x00-\x7f])/sprintf("\\[u%04X]", ord($1))/ge; $_ = ".Pp\n" if /^$/' "$work/man/$tool.1" \
        | gzip -9n > "$root/usr/share/man/man1/$tool.1.gz"
done

# --- shell completions, from the argument parser ---
install -d "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d"
for tool in "${tools[@]}"; do
    # bash-completion sources the script: no #! line (lintian's bash-completion-with-hashbang).
    "$root/usr/bin/$tool" --generate-completion-script bash | sed '1{/^#!/d}' \
        > "$root/usr/share/bash-completion/completions/$tool"
    "$root/usr/bin/$tool" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_$tool"
    "$root/usr/bin/$tool" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/$tool.fish"
done

# --- castd's systemd unit, pointing at /usr/bin/castd (the repository's copy is for /usr/local/bin) ---
install -d "$root/lib/systemd/system"
{
    echo "# castd as a hardened system service (swift-cast $version). Enable it:"
    echo "#   install -D -m 644 /usr/share/doc/swift-cast/examples/castd.xml /etc/castd/profile.xml   # then edit it"
    echo "#   systemctl daemon-reload && systemctl enable --now castd"
    # The repository's header loses its install steps for a build from source (the lines above replace them).
    sed -e '1,/^$/{/^# castd as a hardened/d; /^#   /d; /^# Tools\/test.sh/d}' -e 's#/usr/local/bin/castd#/usr/bin/castd#g' \
        -e '/^Description=/a Documentation=man:castd(1)' Tools/castd.service
} > "$root/lib/systemd/system/castd.service"
grep -q "^ExecStart=/usr/bin/castd " "$root/lib/systemd/system/castd.service"

# --- documentation: examples, copyright, changelog ---
doc=$root/usr/share/doc/swift-cast
install -d "$doc/examples/styles"
install -m 644 Tools/profiles/*.xml "$doc/examples/"
install -m 644 Tools/profiles/styles/*.xml "$doc/examples/styles/"
copyright > "$doc/copyright"
{
    printf 'swift-cast (%s) unstable; urgency=medium\n\n' "$version"
    printf '  * Release %s, built from %s.\n\n' "$version" "${commit:+commit }${commit:-a source tree}"
    printf ' -- %s  %s\n' "$maintainer" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$doc/changelog.gz"

# --- DEBIAN/control: Depends from what the binary links (dpkg-shlibdeps, as debhelper's ${shlibs:Depends}) ---
mkdir -p "$work/shlibs/debian" "$root/DEBIAN"
printf 'Source: swift-cast\n\nPackage: swift-cast\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "-e$root/usr/bin/cast" 2> "$work/shlibdeps.log") \
    || { cat "$work/shlibdeps.log" >&2; exit 1; }
depends=${depends#shlibs:Depends=}
installed_size=$(du -sk --apparent-size "$root" | cut -f1)
cat > "$root/DEBIAN/control" << EOF
Package: swift-cast
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Recommends: avahi-daemon
Suggests: ffmpeg, mosquitto
Section: net
Priority: optional
Description: Google Cast sender, receiver emulator and HTTP service
 swift-cast controls Google Cast devices (Chromecast, Cast-enabled TVs and
 speakers) from the command line and from scripts:
  - cast: find devices, cast media and local files, control sessions, a
    full-screen remote; 'cast demo' tours a built-in emulated device;
  - cast-receiver: emulated Cast devices over real TLS, for testing senders
    without hardware;
  - castd: every device at hand over an HTTP API with live events, a web
    remote and MQTT (with a hardened systemd unit, not enabled by default).
 Devices are found by mDNS through avahi-daemon.
EOF
# Folders 755, files 644 but the program, all owned by root (--root-owner-group).
find "$root" -type d -exec chmod 755 {} +
find "$root" -type f ! -path "$root/usr/bin/cast" -exec chmod 644 {} +
(cd "$root" && find . -type f ! -path "./DEBIAN/*" -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/md5sums"
deb=$out/swift-cast_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" > /dev/null

# --- tarball: the same files under swift-cast-<version>/ in the /usr/local layout ---
name=swift-cast-$version
tarball=$name-linux-$machine.tar.gz
tree=$work/tar/$name
install -d "$tree/bin" "$tree/share/man/man1" "$tree/share/doc/swift-cast" "$tree/share/bash-completion/completions" \
    "$tree/share/zsh/site-functions" "$tree/share/fish/vendor_completions.d" "$tree/lib/systemd/system"
cp -P "$root/usr/bin/"* "$tree/bin/"
cp "$root/usr/share/man/man1/"* "$tree/share/man/man1/"
cp "$root/usr/share/bash-completion/completions/"* "$tree/share/bash-completion/completions/"
cp "$root/usr/share/zsh/vendor-completions/"* "$tree/share/zsh/site-functions/"
cp "$root/usr/share/fish/vendor_completions.d/"* "$tree/share/fish/vendor_completions.d/"
cp -r "$doc/examples" "$tree/share/doc/swift-cast/"
cp LICENSE "$tree/share/doc/swift-cast/LICENSE"
sed 's#/usr/bin/castd#/usr/local/bin/castd#g; s#/usr/share/doc/#/usr/local/share/doc/#g' \
    "$root/lib/systemd/system/castd.service" > "$tree/lib/systemd/system/castd.service"
cat > "$tree/share/doc/swift-cast/README" << EOF
swift-cast $version for Linux ($machine): cast, cast-receiver and castd (one binary, bin/cast; the others are
symlinks to it). Install into /usr/local (or any prefix):
  sudo tar -xzf $tarball -C /usr/local --strip-components=1
It needs these system libraries (Debian and Ubuntu package names): $depends
EOF
find "$tree" -type d -exec chmod 755 {} +
find "$tree" -type f ! -path "$tree/bin/cast" -exec chmod 644 {} +
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -C "$work/tar" -cf - "$name" \
    | gzip -n > "$out/$tarball"

echo "package.sh: $(basename "$deb") $(du -k "$deb" | cut -f1) KiB, $tarball $(du -k "$out/$tarball" | cut -f1) KiB" \
    "(cast $(du -k "$root/usr/bin/cast" | cut -f1) KiB stripped) in $out"
