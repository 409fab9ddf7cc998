#!/usr/bin/env bash
# The transport and session suites under AddressSanitizer and ThreadSanitizer.
#
#   Tools/sanitize.sh [--address] [--thread]     (neither: both)
#
# Runs CastTransportTests and CastSessionTests with `swift test --sanitize=address` in .build-asan and
# `--sanitize=thread` in .build-tsan (never the default .build). Logs: .build-asan/sanitize.log,
# .build-tsan/sanitize.log. Counts each sanitizer report (its SUMMARY line), failed expectations, tests still
# running after SANITIZE_TIMEOUT seconds (default 1800) and a test process that died without a report, as issues.
# Leaks inside libXCTest itself are suppressed, and races ThreadSanitizer reports inside `Synchronization.Mutex`-guarded
# state (the sanitizer cannot see that lock; see below). Ends with `sanitize: address OK|N issues, thread OK|N issues` (a
# sanitizer not asked for reads `skipped`); exits non-zero when there is any issue.
set -uo pipefail
cd "$(dirname "$0")/.."

sanitizers=()
while [ $# -gt 0 ]; do
    case "$1" in
        --address) sanitizers+=(address); shift ;;
        --thread) sanitizers+=(thread); shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "sanitize.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#sanitizers[@]} = 0 ] && sanitizers=(address thread)

export SWIFT_BACKTRACE=enable=no  # the sanitizers print their own reports
limit=${SANITIZE_TIMEOUT:-1800}    # seconds for each sanitizer's test run
symbolizer=$(command -v llvm-symbolizer || true)
if [ -n "$symbolizer" ]; then
    export ASAN_SYMBOLIZER_PATH=$symbolizer
    export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}external_symbolizer_path=$symbolizer"
fi

address_result=skipped
thread_result=skipped
status=0
for sanitizer in "${sanitizers[@]}"; do
    case "$sanitizer" in
        address) scratch=.build-asan ;;
        thread) scratch=.build-tsan ;;
    esac
    mkdir -p "$scratch"
    log=$scratch/sanitize.log
    if [ "$sanitizer" = address ]; then
        # Not this project's leaks, each proven by its stack:
        # - libXCTest leaks its own suite objects when a bundle has no XCTest tests;
        # - a Swift weak reference's side table is pointed to only by the object's refcount word, which stores the
        #   pointer shifted right by 3 with marker bits, so LeakSanitizer never sees a reference to it (every
        #   object ever weakly referenced and alive at exit shows as a "direct leak" in formWeakReference);
        # - FoundationEssentials' readBytesFromFile hands Data a malloc'ed buffer LeakSanitizer loses track of.
        printf '%s\n' 'leak:libXCTest.so' 'leak:formWeakReference' 'leak:readBytesFromFile' > "$scratch/lsan.supp"
        export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(pwd)/$scratch/lsan.supp"
    else
        # Not races: `Synchronization.Mutex` is invisible to ThreadSanitizer on Linux (its lock is not one the
        # sanitizer intercepts), so what a Mutex guards is reported as raced — a two-thread program appending to and
        # removing from one Mutex-guarded array is reported so (Swift 6.3.1, 2026-11-30). `CastEventStream`'s buffer
        # (its `yield` on an event loop, its `next` in a task) is the one such state these suites use across
        # threads; its frames are matched by their mangled name.
        printf '%s\n' 'race:EventStreamV6BufferC' > "$scratch/tsan.supp"
        export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$(pwd)/$scratch/tsan.supp"
    fi
    echo "== $sanitizer: CastTransportTests, CastSessionTests (swift test --sanitize=$sanitizer, $scratch)"
    start=$SECONDS
    swift build --build-tests --scratch-path "$scratch" --sanitize="$sanitizer" > "$log" 2>&1
    built=$?
    build_seconds=$((SECONDS - start))
    if [ "$built" != 0 ]; then
        grep -E "error:" "$log" | head -10
        result="1 issues"
        echo "$sanitizer: the build failed after ${build_seconds}s ($log)"
    else
        # A hung test must not hang the script: the whole run is bounded (timeout signals its process group).
        timeout -k 30 "$limit" swift test --skip-build --scratch-path "$scratch" --sanitize="$sanitizer" \
            --filter 'CastTransportTests\.' --filter 'CastSessionTests\.' >> "$log" 2>&1
        tested=$?
        hung=""
        if [ "$tested" = 124 ] || [ "$tested" = 137 ]; then
            # Swift Testing prints "◇ Test NAME started." and later "✔/✘ Test NAME …": list what never finished.
            hung=$(grep -oE '◇ Test [^ ]+ started' "$log" | sed -E 's/◇ Test (.*) started/\1/' | sort -u \
                | comm -23 - <(grep -oE '[✔✘] Test [^ ]+' "$log" | sed -E 's/[✔✘] Test //' | sort -u))
            echo "$sanitizer: the tests did not finish within ${limit}s; still running: ${hung:-unknown}" \
                | tee -a "$log"
        fi
        test_seconds=$((SECONDS - start - build_seconds))
        reports=$(grep -cE '^SUMMARY: (AddressSanitizer|LeakSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer)' "$log")
        failed=$(grep -Eo 'Test run with [0-9]+ tests? in [0-9]+ suites? failed' "$log" | grep -Eo '^Test run with [0-9]+' \
            | grep -Eo '[0-9]+' | head -1)
        passed=$(grep -Eo 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$log" | grep -Eo '^Test run with [0-9]+' \
            | grep -Eo '[0-9]+' | head -1)
        issues=$reports
        if [ -n "$failed" ]; then
            # "Test run with N tests … failed after … with K issues (including J known issues)": K - J failures.
            run=$(grep -Eo 'Test run with [0-9]+ tests? in [0-9]+ suites? failed after [^)]*' "$log" | head -1)
            failures=$(grep -Eo 'with [0-9]+ issues?' <<< "$run" | grep -Eo '[0-9]+')
            known=$(grep -Eo 'including [0-9]+ known' <<< "$run" | grep -Eo '[0-9]+')
            issues=$((issues + ${failures:-1} - ${known:-0}))
        elif [ -n "$hung" ]; then
            issues=$((issues + $(printf '%s\n' "$hung" | grep -c .)))
        elif [ "$tested" != 0 ] && [ "$reports" = 0 ]; then
            issues=$((issues + 1))  # the test process died without a sanitizer report
        fi
        echo "$sanitizer: build ${build_seconds}s, tests ${test_seconds}s; ${passed:-0} passed tests (${failed:-0} in a" \
            "failed run), $reports sanitizer reports, exit $tested ($log)"
        grep -E '^SUMMARY: ' "$log" | sort | uniq -c | sort -rn | head -10 | sed 's/^/    /'
        grep -E '✘ Test .* (failed|recorded)' "$log" | head -10 | sed 's/^/    /'
        if [ "$issues" = 0 ] && [ "$tested" = 0 ]; then result=OK; else result="$issues issues"; fi
    fi
    [ "$result" = OK ] || status=1
    case "$sanitizer" in
        address) address_result=$result ;;
        thread) thread_result=$result ;;
    esac
done

echo "sanitize: address $address_result, thread $thread_result"
exit "$status"
