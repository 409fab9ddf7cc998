#!/usr/bin/env bash
# Runs every example (Examples/, built by `swift build` into .build/debug) against its own cast-receiver on
# 127.0.0.1 and checks what happened on the device (`cast status --json`, the emulator's wire log) and what the
# example printed. Each example gets its own emulator (--port 0), state directories and files, so the suite can
# run beside others. Prints one line per check and `N passed, M failed` last; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.build/debug
work=$(mktemp -d /tmp/cast-examples-XXXXXX)
export XDG_STATE_HOME="$work/state" XDG_CACHE_HOME="$work/cache"
pids=()
passed=0
failed=0

cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
    wait 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT

for binary in cast cast-receiver CastVideosTerminal ChannelChat QueueWithAds DeviceWatcher ResumablePlayer; do
    [ -x "$BIN/$binary" ] || { echo "missing $BIN/$binary: run swift build first"; echo "0 passed, 1 failed"; exit 1; }
done

# check NAME CONDITION-COMMAND… [-- DETAIL-FILE]: one PASS or FAIL line; a failure shows the detail file's end.
check() {
    local name=$1 detail=${3:-}
    if eval "$2"; then
        echo "PASS $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name"
        [ -n "$detail" ] && [ -f "$detail" ] && tail -15 "$detail" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

# Polls an external process's output or state with a deadline: examples run in real time.
wait_for() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until eval "$*" 2> /dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

# start_receiver NAME ARGS…: a cast-receiver with its own port(s); sets $ports and $names (one per line, in device
# order).
start_receiver() {
    local name=$1
    shift
    "$BIN/cast-receiver" --no-mdns --port 0 "$@" > "$work/$name.receiver" 2>&1 &
    pids+=($!)
    wait_for 60 "grep -qs 'ready' '$work/$name.receiver'" || { echo "cast-receiver $name did not start"; return 1; }
    ports=$(sed -n 's/^cast-receiver: ".*" id=[^ ]* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/$name.receiver")
    names=$(sed -n 's/^cast-receiver: "\(.*\)" id=[^ ]* on 127\.0\.0\.1:[0-9]*$/\1/p' "$work/$name.receiver")
}

# status PORT JQ-FILTER: a field of `cast status --json` for the device on PORT.
status() {
    "$BIN/cast" status --host "127.0.0.1:$1" --json 2> /dev/null | jq -r "$2"
}

# Examples run under `stdbuf -oL`: line-buffered output, so that a check sees each line as it is printed (and keeps
# it when it kills the example).

echo "== CastVideosTerminal: load, pause, leave it playing"
start_receiver videos && port=$(sed -n 1p <<< "$ports")
printf 'load 1\npause\nquit\n' | timeout 60 stdbuf -oL "$BIN/CastVideosTerminal" --host "127.0.0.1:$port" > "$work/videos.out" 2>&1
code=$?
check "CastVideosTerminal exits 0 after quit" '[ $code = 0 ]' "$work/videos.out"
check "CastVideosTerminal lists the catalog and shows what plays after each command" \
    'grep -q "1 Elephant Dream" "$work/videos.out" && grep -q "\[PLAYING\] Elephant Dream" "$work/videos.out" \
        && grep -q "\[PAUSED\] Elephant Dream" "$work/videos.out"' "$work/videos.out"
check "the device keeps the video, paused, with its metadata, after the example left" \
    '[ "$(status "$port" "[.app.id, .media.title, .media.subtitle, .media.playerState] | map(tostring) | join(\",\")")" \
        = "CC1AD845,Elephant Dream,Blender Foundation,PAUSED" ]' "$work/videos.out"

echo "== ChannelChat: lines over a custom channel to the echo app"
start_receiver chat && port=$(sed -n 1p <<< "$ports")
printf 'hello\nhow are you?\n' | timeout 60 stdbuf -oL "$BIN/ChannelChat" --host "127.0.0.1:$port" > "$work/chat.out" 2>&1
code=$?
check "ChannelChat exits 0 at the end of its input" '[ $code = 0 ]' "$work/chat.out"
check "ChannelChat prints the echo app's answer to each line, in order" \
    '[ "$(grep "^Echo: " "$work/chat.out" | tr "\n" "|")" = "Echo: hello|Echo: how are you?|" ]' "$work/chat.out"
check "ChannelChat stopped the app it launched" '[ "$(status "$port" .app)" = null ]' "$work/chat.out"

echo "== QueueWithAds: three items, each after an ad, every ad skipped"
start_receiver queue --wire-log "$work/queue.jsonl" && port=$(sed -n 1p <<< "$ports")
timeout 120 stdbuf -oL "$BIN/QueueWithAds" --host "127.0.0.1:$port" --skip-ads --seconds-per-item 1 > "$work/queue.out" 2>&1
code=$?
check "QueueWithAds exits 0 once the queue has finished" \
    '[ $code = 0 ] && tail -1 "$work/queue.out" | grep -q "The queue has finished."' "$work/queue.out"
check "QueueWithAds reports each ad, then its item, in queue order" \
    '[ "$(grep -E "^(ad|item)" "$work/queue.out" | sed -E "s/^item [0-9]+: /item: /" | tr "\n" "|")" = \
        "ad: An ad before For Bigger Blazes|item: For Bigger Blazes|ad: An ad before For Bigger Escapes|item: For Bigger Escapes|ad: An ad before For Bigger Fun|item: For Bigger Fun|" ]' \
    "$work/queue.out"
check "the device got one SKIP_AD per ad" \
    '[ "$(jq -r "select(.dir == \"recv\") | .payload | objects | .type // empty" "$work/queue.jsonl" | grep -c "^SKIP_AD$")" = 3 ]' \
    "$work/queue.out"

echo "== DeviceWatcher: two devices, followed without a session"
start_receiver watch --devices 2 --name "Watched TV"
first=$(sed -n 1p <<< "$ports") second=$(sed -n 2p <<< "$ports")
first_name=$(sed -n 1p <<< "$names") second_name=$(sed -n 2p <<< "$names")
stdbuf -oL "$BIN/DeviceWatcher" --host "127.0.0.1:$first" --host "127.0.0.1:$second" --duration 120 > "$work/watch.out" 2>&1 &
watcher=$!
pids+=($watcher)
check "DeviceWatcher lists both devices, idle" \
    'wait_for 60 "[ \$(grep -c \": idle, volume\" \"$work/watch.out\") -ge 2 ]"' "$work/watch.out"
"$BIN/cast" play --host "127.0.0.1:$first" https://media.example.com/watched.mp4 --title "Seen From Afar" --detach \
    > "$work/watch.cast" 2>&1
check "DeviceWatcher prints the first device's new media" \
    'wait_for 60 "grep -q \"^$first_name: Default Media Receiver PLAYING Seen From Afar\" \"$work/watch.out\""' \
    "$work/watch.out"
"$BIN/cast" volume 0.3 --host "127.0.0.1:$second" > "$work/watch.cast" 2>&1
check "DeviceWatcher prints the second device's new volume" \
    'wait_for 60 "grep -q \"^$second_name: idle, volume 30%\" \"$work/watch.out\""' "$work/watch.out"
check "DeviceWatcher names the devices as they call themselves" \
    '[[ $first_name == "Watched TV"* ]] && grep -q "^$first_name: " "$work/watch.out" \
        && grep -q "^$second_name: " "$work/watch.out"' "$work/watch.out"
kill "$watcher" 2> /dev/null
timeout 60 stdbuf -oL "$BIN/DeviceWatcher" --host "127.0.0.1:$first" --duration 2 > "$work/watch-2.out" 2>&1
code=$?
check "DeviceWatcher --duration 2 stops by itself (exit 0), having followed the device" \
    '[ $code = 0 ] && grep -q "^$first_name: Default Media Receiver PLAYING Seen From Afar" "$work/watch-2.out"' \
    "$work/watch-2.out"

echo "== ResumablePlayer: killed mid-playback, started again, resumes the same session"
start_receiver resume && port=$(sed -n 1p <<< "$ports")
player_state="$work/resumable-player"
stdbuf -oL "$BIN/ResumablePlayer" --host "127.0.0.1:$port" --state-directory "$player_state" > "$work/resume-1.out" 2>&1 &
player=$!
pids+=($player)
check "ResumablePlayer starts a session and plays" \
    'wait_for 60 "grep -q \"^PLAYING at \" \"$work/resume-1.out\""' "$work/resume-1.out"
session=$(sed -n 's/^Started session \([^ ]*\) on .*/\1/p' "$work/resume-1.out")
media_session=$(status "$port" .media.mediaSessionId)
check "the device runs the example's session" \
    '[ -n "$session" ] && [ "$(status "$port" .app.sessionId)" = "$session" ]' "$work/resume-1.out"
kill -KILL "$player"
wait "$player" 2> /dev/null
timeout 60 stdbuf -oL "$BIN/ResumablePlayer" --host "127.0.0.1:$port" --state-directory "$player_state" --duration 1 \
    > "$work/resume-2.out" 2>&1
code=$?
check "started again after SIGKILL, it resumes the same session (no relaunch) and exits 0" \
    '[ $code = 0 ] && grep -q "^Resumed session $session on " "$work/resume-2.out" \
        && ! grep -q "^Started" "$work/resume-2.out"' "$work/resume-2.out"
check "the same media session plays on, with its position" \
    'grep -q "^PLAYING at [0-9]* s (media session $media_session)" "$work/resume-2.out" \
        && [ "$(status "$port" "[.app.sessionId, .media.mediaSessionId, .media.playerState] | map(tostring) | join(\",\")")" \
            = "$session,$media_session,PLAYING" ]' "$work/resume-2.out"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
