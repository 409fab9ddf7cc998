#!/usr/bin/env bash
# Builds the DocC catalog of every library product (Modules/<Module>/<Module>.docc) with warnings as errors: a
# link to a symbol or article that does not exist, an unknown symbol in a Topics group or a malformed directive
# fails. (Undocumented public declarations are caught earlier, by swift format's
# AllPublicDeclarationsHaveDocumentation rule in .swift-format.)
#
# It reads the debug build the test command has just made (`swift build --build-tests`) and runs `docc convert`
# once per catalog, instead of `swift package generate-documentation`, which builds every target again for its
# own symbol graphs. Figures in the README's Documentation section.
#
#   Tools/docs.sh                # check every catalog; archives in .build/docs/<Module>.doccarchive
#   Tools/docs.sh CastSession    # only these
#
# Ends with `docs: N catalogs converted` or the failing catalog's diagnostics.
set -euo pipefail
cd "$(dirname "$0")/.."

all_modules=(
    CastLogging CastTransport CastDiscovery CastMedia CastSession CastControllers
    CastReceiver CastStyleConfig CastMediaServer CastService CastStreaming
)
if [ $# -gt 0 ]; then modules=("$@"); else modules=("${all_modules[@]}"); fi

out=.build/docs
mkdir -p "$out"
start=$(date +%s)

# Each module's public symbol graph, extracted from the debug build's .swiftmodule (and .swiftdoc) files with
# swift-symbolgraph-extract: half a second a module, and nothing is compiled. (`swift package dump-symbol-graph`
# builds again with other parameters first: two minutes here, and the next `swift build --build-tests` then
# recompiles SwiftProtobuf and Hummingbird.) The C modules' maps and headers are passed as the build passes them.
bin=$(swift build --show-bin-path)
[ -d "$bin/Modules" ] || { echo "docs: no debug build in $bin; run swift build --build-tests first"; exit 1; }
clang_args=()
for map in "$bin"/*.build/module.modulemap "$PWD"/Modules/C*/module.modulemap; do
    [ -f "$map" ] && clang_args+=(-Xcc "-fmodule-map-file=$map")
done
for include in "$PWD"/.build/checkouts/*/Sources/*/include; do
    [ -d "$include" ] && clang_args+=(-Xcc "-I$include")
done
# The system libraries' headers, as the shims' pkgConfig names them in Package.swift.
for flag in $(pkg-config --cflags-only-I openssl avahi-client libxml-2.0 vpx opus aom openh264); do
    clang_args+=(-Xcc "$flag")
done

# Extracts one module's symbol graph and converts its catalog; the outcome goes to $out/<Module>.log and, on
# failure, $out/<Module>.failed.
convert() {
    local module=$1 catalog=Modules/$1/$1.docc graphs=$out/graphs/$1 log=$out/$1.log
    rm -rf "$graphs" "$out/$module.failed"
    mkdir -p "$graphs"
    if [ ! -d "$catalog" ]; then
        echo "docs: $catalog is missing" > "$log"
    # The module's own graph and its extensions of other modules' types (Module@Other.symbols.json).
    elif ! swift-symbolgraph-extract -module-name "$module" -target "$triple" -I "$bin/Modules" \
        -minimum-access-level public -emit-extension-block-symbols -output-dir "$graphs" "${clang_args[@]}" \
        > "$log" 2>&1; then
        echo "docs: no symbol graph for $module" >> "$log"
    elif ! docc convert "$catalog" --additional-symbol-graph-dir "$graphs" \
        --output-path "$out/$module.doccarchive" --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.swift-cast.$module" --warnings-as-errors >> "$log" 2>&1; then
        echo "docs: $module failed" >> "$log"
    else
        return 0
    fi
    touch "$out/$module.failed"
}

# Two catalogs at a time: docc is mostly single-threaded, and the machine has two cores.
triple=$(basename "$(dirname "$bin")")
running=0
for module in "${modules[@]}"; do
    convert "$module" &
    running=$((running + 1))
    if [ "$running" -ge 2 ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

failed=0
for module in "${modules[@]}"; do
    [ -e "$out/$module.failed" ] || continue
    grep -E "error|warning|^docs:" "$out/$module.log" | head -40
    echo "docs: $module failed (full output: $out/$module.log)"
    failed=1
done
[ "$failed" = 0 ] || exit 1
echo "docs: ${#modules[@]} catalogs converted with warnings as errors in $(($(date +%s) - start)) s"
