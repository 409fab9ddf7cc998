#!/usr/bin/env python3
"""Mirroring figures for the README (not test assertions): the same moving 1280x720 test-pattern window under Xvfb,
sent two ways for --seconds each, one after the other:

  - Cast Streaming: `cast screen --window` to `cast-receiver` (its --stream-stats give capture-to-receipt delay,
    from ffmpeg handing the frame over to the receiver completing it, through the sender reports' clock mapping);
  - live Matroska over HTTP, what gnome-network-displays and mkchromecast do: ffmpeg captures the same window,
    encodes VP8 in real time and serves a live WebM over HTTP; the client is ffmpeg reading that URL with its
    default buffering, and the delay is its wall clock when it decodes a frame minus the frame's capture time
    (wall-clock timestamps carried through with -copyts). A TV's player adds its own buffer on top; this is the
    pipeline's floor.

CPU is the sender's (the process and its children: capture and encoding) per second of streaming.
Usage: Tools/bench-mirroring.py [--seconds 20] [--build debug|release]   (release builds by default)
"""
import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else None


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def pattern_window(processes):
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    processes.append(xvfb)
    display = ":" + xvfb.stdout.readline().strip()
    processes.append(subprocess.Popen(
        ["ffplay", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
         "-window_title", "Pattern", "-noborder", "-left", "0", "-top", "0"],
        env=dict(os.environ, DISPLAY=display, SDL_AUDIODRIVER="dummy"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _ in range(100):
        info = subprocess.run(["xwininfo", "-display", display, "-name", "Pattern"], capture_output=True, text=True)
        match = re.search(r"Window id: (0x[0-9a-f]+)", info.stdout)
        if match:
            return display, match.group(1)
        time.sleep(0.1)
    sys.exit("bench-mirroring: the test-pattern window did not appear")


def cast_streaming(binaries, display, seconds, state):
    stats = os.path.join(state, "stats.json")
    receiver = subprocess.Popen([binaries["cast-receiver"], "--no-mdns", "--port", "0", "--stream-stats", stats],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    for line in receiver.stdout:
        port = port or (int(line.rsplit(":", 1)[1]) if " on 127.0.0.1:" in line else None)
        if "ready" in line:
            break
    before = children_cpu()
    started = time.monotonic()
    result = subprocess.run([binaries["cast"], "screen", "--host", f"127.0.0.1:{port}", "--window", "Pattern",
                             "--display", display, "--duration", str(seconds), "--json"],
                            capture_output=True, text=True, env=dict(os.environ, XDG_STATE_HOME=state))
    elapsed = time.monotonic() - started
    cpu = children_cpu() - before
    receiver.terminate()
    receiver.wait()
    sent = json.loads([line for line in result.stdout.splitlines() if line.startswith("{")][-1])
    with open(stats) as file:
        video = next(iter(json.load(file).values()))["video"]
    return {
        "p50": video["delayP50"], "p99": video["delayP99"],
        "frames": f"{video['framesCompleted']} completed, {video['framesLate']} late of {sent['video']['framesSent']}",
        "cpu": cpu / elapsed * 100,
        "bitrate": sent["video"]["bytesSent"] * 8 / seconds / 1000,
    }


def live_matroska(display, window, seconds):
    port = free_port()
    url = f"http://127.0.0.1:{port}/live.webm"
    sender = subprocess.Popen(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-use_wallclock_as_timestamps", "1",
         "-f", "x11grab", "-framerate", "30", "-window_id", window, "-i", display,
         "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "2500k", "-g", "60",
         "-copyts", "-f", "webm", "-live", "1", "-listen", "1", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    delays = []
    # The listening ffmpeg serves one client, so no probe: the client retries until the server listens.
    for _ in range(50):
        client = subprocess.Popen(["ffmpeg", "-hide_banner", "-copyts", "-i", url, "-vf", "showinfo", "-f", "null", "-"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            client.wait(timeout=0.2)
            time.sleep(0.1)
        except subprocess.TimeoutExpired:
            break
    started = time.monotonic()

    def read():
        for line in client.stderr:
            # WebM's time base is the millisecond: `pts` is the capture's wall-clock time in ms (pts_time rounds).
            match = re.search(r" pts:\s*([0-9]+) ", line)
            if match:
                delays.append(time.time() * 1000 - int(match.group(1)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    with open(f"/proc/{sender.pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # the sender's utime + stime
    sender.terminate()
    sender.wait()
    client.terminate()
    client.wait()
    reader.join(timeout=2)
    steady = delays[len(delays) // 10:]  # the first tenth is start-up (probing), reported separately
    return {
        "p50": percentile(steady, 0.5), "p99": percentile(steady, 0.99),
        "first": delays[0] if delays else None,
        "frames": f"{len(delays)} decoded",
        "cpu": cpu / elapsed * 100,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--build", choices=["debug", "release"], default="release")
    arguments = parser.parse_args()
    for tool in ("Xvfb", "ffplay", "ffmpeg", "xwininfo"):
        if not shutil.which(tool):
            sys.exit(f"bench-mirroring: needs {tool} (Tools/setup.sh test)")
    configuration = ["-c", "release"] if arguments.build == "release" else []
    subprocess.run(["swift", "build", *configuration, "--product", "cast"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["swift", "build", *configuration, "--product", "cast-receiver"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    directory = os.path.join(ROOT, ".build", arguments.build)
    binaries = {name: os.path.join(directory, name) for name in ("cast", "cast-receiver")}
    processes = []
    state = tempfile.mkdtemp(prefix="bench-mirroring-")
    try:
        display, window = pattern_window(processes)
        streaming = cast_streaming(binaries, display, arguments.seconds, state)
        matroska = live_matroska(display, window, arguments.seconds)
    finally:
        for process in processes:
            process.terminate()
        shutil.rmtree(state, ignore_errors=True)
    print(f"bench-mirroring: 1280x720 window at 30 fps, {arguments.seconds} s each, {arguments.build} build")
    print(f"| approach | capture-to-receipt p50 | p99 | frames | sender CPU (% of a core) |")
    print(f"|---|---|---|---|---|")
    print(f"| Cast Streaming (`cast screen`, VP8, {streaming['bitrate']:.0f} kbit/s) | {streaming['p50']:.0f} ms "
          f"| {streaming['p99']:.0f} ms | {streaming['frames']} | {streaming['cpu']:.0f} |")
    print(f"| live WebM over HTTP (ffmpeg VP8 2.5 Mbit/s, ffmpeg client; first frame after "
          f"{matroska['first']:.0f} ms) | {matroska['p50']:.0f} ms | {matroska['p99']:.0f} ms | {matroska['frames']} "
          f"| {matroska['cpu']:.0f} |")


if __name__ == "__main__":
    main()
