#!/usr/bin/env bash
# libFuzzer over every parser of peer or file input (Tools/Fuzz: `cast-fuzz list` names the targets).
#
#   Tools/fuzz.sh [--seconds N] [--target NAME]...   fuzz each target N seconds (default 10) from its corpus
#   Tools/fuzz.sh --runs N [--target NAME]...        fuzz each target for N executions instead (long campaigns)
#   Tools/fuzz.sh --replay [--target NAME]...        replay the committed corpora through the ordinary build
#
# Fuzzing builds `cast-fuzz` with `-D CAST_FUZZING` in .build-fuzz (release, AddressSanitizer + libFuzzer, modules
# compiled with -enable-testing for the targets whose parser is internal). Each target starts from
# Tools/Fuzz/corpus/<target> (read only) plus .build-fuzz/corpus/<target>, where new inputs go; it runs in
# .build-fuzz/work/<target>, a copy of Tools/profiles, so profiles can `extends` real documents. Crash, timeout and
# out-of-memory inputs are kept under .build-fuzz/crashes/<target>/, each with a `.reproduce` file holding the
# commands that replay it. --replay builds the ordinary (non-fuzzer) `cast-fuzz` in .build-fuzz-replay.
#
# Ends with `fuzz: T targets, E execs, C crashes`; exits non-zero when anything crashed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=10
runs=0
replay=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
        --seconds=*) seconds=${1#--seconds=}; shift ;;
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --runs=*) runs=${1#--runs=}; shift ;;
        --replay) replay=1; shift ;;
        --target) targets+=("${2:?--target needs a name}"); shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$seconds$runs" in ''|*[!0-9]*) echo "fuzz.sh: --seconds and --runs take whole numbers" >&2; exit 2 ;; esac
limit=(-max_total_time="$seconds")
[ "$runs" -gt 0 ] && limit=(-runs="$runs")

scratch=.build-fuzz
if [ "$replay" = 1 ]; then
    echo "== building cast-fuzz (ordinary build, .build-fuzz-replay)"
    build=(swift build --scratch-path .build-fuzz-replay --product cast-fuzz)
    binary=$root/.build-fuzz-replay/debug/cast-fuzz
else
    echo "== building cast-fuzz (libFuzzer + AddressSanitizer, .build-fuzz)"
    build=(swift build --scratch-path "$scratch" -c release --product cast-fuzz
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DCAST_FUZZING -Xswiftc -enable-testing
        -Xswiftc -enable-experimental-feature -Xswiftc Extern)
    binary=$root/$scratch/release/cast-fuzz
fi
mkdir -p "$scratch/logs"
if ! "${build[@]}" > "$scratch/logs/build.log" 2>&1; then
    grep -E "error:" "$scratch/logs/build.log" | head -20
    tail -5 "$scratch/logs/build.log"
    echo "fuzz: 0 targets, 0 execs, 0 crashes (the build failed: $scratch/logs/build.log)"
    exit 1
fi

if [ ${#targets[@]} = 0 ]; then
    # The fuzzing binary's command line belongs to libFuzzer: it lists its targets with CAST_FUZZ_TARGET=list.
    if [ "$replay" = 1 ]; then
        mapfile -t targets < <("$binary" list | cut -f1)
    else
        mapfile -t targets < <(CAST_FUZZ_TARGET=list "$binary" < /dev/null)
    fi
fi
if [ ${#targets[@]} = 0 ]; then
    echo "fuzz: 0 targets, 0 execs, 0 crashes (no target found)"
    exit 1
fi

export SWIFT_BACKTRACE=enable=no  # let libFuzzer and ASan report traps, not Swift's backtracer
symbolizer=$(command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}

total_execs=0
total_crashes=0
ran=0
for target in "${targets[@]}"; do
    corpus=$root/Tools/Fuzz/corpus/$target
    work=$root/$scratch/work/$target
    crashes=$root/$scratch/crashes/$target
    log=$root/$scratch/logs/$target.log
    mkdir -p "$work" "$crashes" "$root/$scratch/corpus/$target"
    seeds=()
    [ -d "$corpus" ] && seeds=("$corpus") || echo "  $target: no committed corpus ($corpus)"
    cp -R Tools/profiles/. "$work/"
    before=$(ls "$crashes" | grep -v '\.reproduce$' | sort)
    ran=$((ran + 1))

    if [ "$replay" = 1 ]; then
        [ ${#seeds[@]} = 0 ] && continue
        inputs=$(find "$corpus/" -maxdepth 1 -type f ! -name '.*' | wc -l)
        if (cd "$work" && "$binary" replay "$target" "$corpus") > "$log" 2>&1 < /dev/null; then
            echo "  $target: $inputs inputs replayed"
            total_execs=$((total_execs + inputs))
            continue
        fi
        # Find the inputs that crash, one by one, and keep them.
        found=0
        for input in "$corpus"/*; do
            if ! (cd "$work" && "$binary" replay "$target" "$input") >> "$log" 2>&1 < /dev/null; then
                cp "$input" "$crashes/replay-$(basename "$input")"
                printf 'cd %q && %q replay %q %q\n' "$work" "$binary" "$target" "$input" \
                    > "$crashes/replay-$(basename "$input").reproduce"
                found=$((found + 1))
            fi
        done
        [ "$found" = 0 ] && found=1  # the folder crashed as a whole even if no single input does
        echo "  $target: CRASH replaying $inputs inputs ($found crashing; $log)"
        total_execs=$((total_execs + inputs))
        total_crashes=$((total_crashes + found))
        continue
    fi

    (cd "$work" && CAST_FUZZ_TARGET=$target "$binary" \
        "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$crashes/" "$root/$scratch/corpus/$target" "${seeds[@]}") > "$log" 2>&1 < /dev/null
    status=$?
    execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    rate=$(grep -Eo 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    added=$(grep -Eo 'stat::new_units_added: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    coverage=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    total_execs=$((total_execs + ${execs:-0}))
    new_artifacts=$(comm -13 <(echo "$before") <(ls "$crashes" | grep -v '\.reproduce$' | sort) | grep -v '^$' || true)
    summary="${execs:-0} execs, ${rate:-0}/s, ${added:-0} new inputs, ${coverage:-no coverage line}"
    if [ "$status" = 0 ] && [ -z "$new_artifacts" ]; then
        echo "  $target: $summary"
        continue
    fi
    count=$(printf '%s\n' "$new_artifacts" | grep -c . || true)
    [ "$count" = 0 ] && count=1  # libFuzzer failed without an artifact (see the log)
    total_crashes=$((total_crashes + count))
    for artifact in $new_artifacts; do
        {
            echo "# $target: $(grep -m1 -E 'ERROR: |Fatal error|deadly signal|timeout after|out-of-memory' "$log")"
            printf '# fuzzing build, under ASan (log: %q)\n' "$log"
            printf 'cd %q && CAST_FUZZ_TARGET=%q SWIFT_BACKTRACE=enable=no %q %q\n' \
                "$work" "$target" "$binary" "$crashes/$artifact"
            echo "# ordinary build, with a Swift backtrace"
            printf 'cd %q && swift build --scratch-path .build-fuzz-replay --product cast-fuzz && (cd %q && %q replay %q %q)\n' \
                "$root" "$work" "$root/.build-fuzz-replay/debug/cast-fuzz" "$target" "$crashes/$artifact"
        } > "$crashes/$artifact.reproduce"
    done
    echo "  $target: CRASH (exit $status) after $summary"
    for artifact in $new_artifacts; do echo "    $crashes/$artifact (see $artifact.reproduce)"; done
    grep -m3 -E 'ERROR: |Fatal error|deadly signal|timeout after|out-of-memory|leak' "$log" | sed 's/^/    /'
done

echo "fuzz: $ran targets, $total_execs execs, $total_crashes crashes"
[ "$total_crashes" = 0 ]
