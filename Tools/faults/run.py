#!/usr/bin/env python3
"""The fault laboratory: the `cast` sender and `cast-receiver` in two network namespaces joined by a veth pair,
with real faults on the link between them (link down, an nftables blackhole, random loss) and on the processes
(SIGKILL), plus the emulator's slow and flooding devices. For each fault the expected outcome is asserted and the
measured figure printed. Needs root (network namespaces, nftables); run through Tools/faults.sh.

Prints one line per check and `N passed, M failed` last; exits non-zero on failure.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab"))
from labkit import check, figure, in_ns, sh, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAST = os.path.join(ROOT, ".build", "debug", "cast")
RECEIVER = os.path.join(ROOT, ".build", "debug", "cast-receiver")
NS = os.environ.get("FAULT_NS", f"castfault{os.getpid()}")
DEV, SND = f"{NS}-dev", f"{NS}-snd"
DEV_IP, SND_IP = "10.78.0.1", "10.78.0.2"
STATE = tempfile.mkdtemp(prefix="cast-faults-")
URL = "https://media.example.com/fault.mp4"
# The sender's knobs for the lab: the heartbeat window is the default (PING after 5 s of silence, dead at 15 s);
# reconnection attempts are capped at 1 s apart and each connect gives up after 1 s, so a link that comes back is
# used within about a second.
SENDER_ENV = dict(os.environ, XDG_STATE_HOME=STATE, XDG_CONFIG_HOME=STATE, CAST_RECONNECT_MAXIMUM_DELAY="1s",
                  CAST_RECONNECT_INITIAL_DELAY="250ms", CAST_CONNECT_TIMEOUT="1s", NO_COLOR="1")
HEARTBEAT_WINDOW = 15.0
processes = []


# --- the lab ---

def lab_up():
    for ns in (DEV, SND):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    # Both ends are created inside their namespaces: nothing of the lab exists in the root namespace.
    sh("ip", "link", "add", "cast0", "netns", DEV, "type", "veth", "peer", "name", "cast0", "netns", SND)
    sh("ip", "-n", DEV, "addr", "add", f"{DEV_IP}/24", "dev", "cast0")
    sh("ip", "-n", SND, "addr", "add", f"{SND_IP}/24", "dev", "cast0")
    link(True)


def lab_down():
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()
    for ns in (DEV, SND):
        sh("ip", "netns", "del", ns, check_status=False)
    shutil.rmtree(STATE, ignore_errors=True)


def link(up):
    for ns in (DEV, SND):
        sh("ip", "-n", ns, "link", "set", "cast0", "up" if up else "down")


def blackhole(on, loss_percent=None):
    """nftables in the device's namespace: drop every Cast packet (no RST), or a random share of them."""
    subprocess.run(in_ns(DEV, "nft", "delete", "table", "inet", "castfault"), capture_output=True)
    if not on:
        return
    rule = "tcp dport 8009 drop" if loss_percent is None else f"tcp dport 8009 numgen random mod 100 < {loss_percent} drop"
    out_rule = "tcp sport 8009 drop" if loss_percent is None else f"tcp sport 8009 numgen random mod 100 < {loss_percent} drop"
    script = f"""table inet castfault {{
  chain input {{ type filter hook input priority 0; {rule}; }}
  chain output {{ type filter hook output priority 0; {out_rule}; }}
}}"""
    subprocess.run(in_ns(DEV, "nft", "-f", "-"), input=script, text=True, check=True, capture_output=True)


def start_receiver(*args):
    log = open(os.path.join(STATE, f"receiver-{len(processes)}.log"), "w")
    process = subprocess.Popen(in_ns(DEV, RECEIVER, "--no-mdns", "--host", DEV_IP, "--port", "8009", *args),
                               stdout=log, stderr=subprocess.STDOUT, text=True)
    processes.append(process)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if "ready" in open(log.name).read():
            return process
        time.sleep(0.05)
    raise RuntimeError("cast-receiver did not start: " + open(log.name).read())


def stop(process, sig=signal.SIGINT):
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cast(*args, timeout=60):
    started = time.monotonic()
    completed = subprocess.run(in_ns(SND, CAST, *args, "--host", DEV_IP, "--json"), capture_output=True, text=True,
                               env=SENDER_ENV, timeout=timeout)
    elapsed = time.monotonic() - started
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    try:
        payload = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        payload = {}
    return completed.returncode, payload, completed.stdout + completed.stderr, elapsed


class Watcher:
    """`cast status --watch` in the sender's namespace with the session's debug log: a long-lived sender whose
    suspensions and resumptions are timed from the outside."""

    def __init__(self):
        self.log_path = os.path.join(STATE, f"watch-{time.monotonic_ns()}.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            in_ns(SND, CAST, "status", "--watch", "--host", DEV_IP, "--timeout", "5",
                  "--log-filter", "CastSession*=debug"),
            stdout=self.log, stderr=subprocess.STDOUT, text=True, env=SENDER_ENV)
        processes.append(self.process)

    def text(self):
        return open(self.log_path).read()

    def wait_for(self, pattern, after=0, seconds=60):
        """Seconds (monotonic) when `pattern` first appears after `after` occurrences, or None at the deadline."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if len(re.findall(pattern, self.text())) > after:
                return time.monotonic()
            if self.process.poll() is not None and len(re.findall(pattern, self.text())) <= after:
                return None
            time.sleep(0.05)
        return None

    def count(self, pattern):
        return len(re.findall(pattern, self.text()))

    def rss_mib(self):
        try:
            # The watcher runs under `ip netns exec`, which execs the program: the pid is the program's.
            with open(f"/proc/{self.process.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None


# --- the faults ---

def start_session():
    code, out, text, _ = cast("play", URL, "--title", "Fault", "--detach", "--timeout", "10")
    check("a session starts across the veth pair", code == 0 and (out.get("media") or {}).get("playerState") == "PLAYING",
          text[-300:])
    return out


def link_down_at_idle():
    watcher = Watcher()
    check("watcher connected", watcher.wait_for(r"Fault") is not None, watcher.text()[-300:])
    cut = time.monotonic()
    link(False)
    suspended = watcher.wait_for(r"suspended", seconds=HEARTBEAT_WINDOW + 15)
    check("link down at idle: the dead connection is noticed within the heartbeat window",
          suspended is not None and suspended - cut <= HEARTBEAT_WINDOW + 2, watcher.text()[-300:])
    if suspended:
        figure(f"link down noticed after {suspended - cut:.1f} s (window {HEARTBEAT_WINDOW:.0f} s)")
    time.sleep(2)  # the link stays down a while: several reconnection attempts fail meanwhile
    back = time.monotonic()
    link(True)
    resumed = watcher.wait_for(r"resumed", seconds=30)
    check("link back: the session resumes within about a second (backoff capped)",
          resumed is not None and resumed - back <= 2.5, watcher.text()[-300:])
    if resumed:
        figure(f"resumed {resumed - back:.2f} s after the link came back")
    stop(watcher.process)


def blackhole_only_heartbeat_notices():
    watcher = Watcher()
    watcher.wait_for(r"Fault")
    cut = time.monotonic()
    blackhole(True)
    suspended = watcher.wait_for(r"suspended", seconds=HEARTBEAT_WINDOW + 15)
    check("blackhole (no RST): only the heartbeat notices, within its window",
          suspended is not None and HEARTBEAT_WINDOW - 6 <= suspended - cut <= HEARTBEAT_WINDOW + 2,
          watcher.text()[-300:])
    if suspended:
        figure(f"blackhole noticed after {suspended - cut:.1f} s")
    back = time.monotonic()
    blackhole(False)
    resumed = watcher.wait_for(r"resumed", seconds=30)
    check("blackhole lifted: resumed within about a second", resumed is not None and resumed - back <= 2.5,
          watcher.text()[-300:])
    if resumed:
        figure(f"resumed {resumed - back:.2f} s after the blackhole was lifted")
    stop(watcher.process)


def link_drop_during(command, *args, name):
    """The link goes away for 1.5 s just after `command` starts: it rides through within its timeout or fails with
    a typed error — never hangs."""
    process = subprocess.Popen(in_ns(SND, CAST, command, *args, "--host", DEV_IP, "--json", "--timeout", "10"),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=SENDER_ENV)
    started = time.monotonic()
    time.sleep(0.05)
    link(False)
    time.sleep(1.5)
    link(True)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        output = "(hung)"
    elapsed = time.monotonic() - started
    code = process.returncode
    check(f"link down during {name}: acknowledged or a typed failure, within its timeout",
          code in (0, 1, 3, 4) and elapsed <= 10 + 15, f"exit {code} after {elapsed:.1f} s: {output[-300:]}")
    figure(f"{name} across a 1.5 s link loss: exit {code} in {elapsed:.1f} s")
    return code


def drops_during_commands():
    cast("app", "stop", timeout=30)
    link_drop_during("play", URL, "--title", "During LAUNCH", "--detach", name="LAUNCH (play from idle)")
    code, out, text, _ = cast("status", timeout=30)
    check("after a drop during play the media was loaded once", (out.get("media") or {}).get("mediaSessionId") in (1, None),
          text[-200:])
    link_drop_during("play", URL, "--title", "During LOAD", "--detach", name="LOAD (play on a running app)")
    code, out, text, _ = cast("status", timeout=30)
    check("the session is saved and answers after the drops", code == 0 and out.get("app") is not None, text[-300:])
    link_drop_during("queue", "add", URL + "?2", name="a queue insert")
    code, out, text, _ = cast("status", timeout=30)
    queue = (out.get("media") or {}).get("queue") or {}
    check("the queue insert happened at most once", queue.get("count", 1) <= 2, out)


def random_loss():
    start_session()
    blackhole(True, loss_percent=20)
    outcomes = {}
    slowest = 0.0
    for index in range(12):
        code, _, _, elapsed = cast("pause" if index % 2 == 0 else "resume", "--timeout", "8", timeout=120)
        outcomes[code] = outcomes.get(code, 0) + 1
        slowest = max(slowest, elapsed)
    blackhole(False)
    check("20 % packet loss: every command acknowledged or failed with a typed exit code",
          set(outcomes) <= {0, 1, 3, 4}, outcomes)
    check("20 % packet loss: none hangs past its timeout (8 s, plus reconnection)", slowest <= 8 + 20, f"{slowest:.1f} s")
    figure(f"20 % loss, 12 commands: exit codes {outcomes}, slowest {slowest:.1f} s")


def receiver_killed():
    global receiver
    watcher = Watcher()
    watcher.wait_for(r"Fault|During")
    receiver.kill()
    receiver.wait()
    killed = time.monotonic()
    receiver = start_receiver()
    try:
        ended = watcher.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        ended = None
    elapsed = time.monotonic() - killed
    text = watcher.text()
    check("receiver killed and restarted: the session ends with a reason, not a hang",
          watcher.process.returncode not in (0, None) and ("ended" in text or "stopped" in text), text[-300:])
    figure(f"the sender learned its app was gone {elapsed:.1f} s after the receiver was killed (exit {ended})")


def sender_killed():
    start_session()
    watcher = Watcher()
    watcher.wait_for(r"Fault")
    watcher.process.kill()
    watcher.process.wait()
    code, out, text, _ = cast("status", timeout=30)
    check("sender killed: the next process resumes the session",
          code == 0 and (out.get("media") or {}).get("title") == "Fault", text[-300:])


def slow_receiver():
    global receiver
    stop(receiver)
    receiver = start_receiver("--chunk-size", "1", "--chunk-interval", "1")
    started = time.monotonic()
    code, out, text, elapsed = cast("status", "--timeout", "4", timeout=90)
    check("a receiver answering one byte per second: the command fails with its typed timeout, no hang",
          code in (3, 4) and elapsed <= 4 * 3 + 5, f"exit {code} after {elapsed:.1f} s: {text[-200:]}")
    figure(f"one byte per second: exit {code} after {elapsed:.1f} s (timeout 4 s)")
    stop(receiver)
    receiver = start_receiver()


def status_flood():
    global receiver
    stop(receiver)
    receiver = start_receiver("--status-flood", "10000")
    start_session()
    watcher = Watcher()
    watcher.wait_for(r"Fault")
    time.sleep(2)
    first = watcher.rss_mib()
    time.sleep(8)
    last = watcher.rss_mib()
    alive = watcher.process.poll() is None
    check("10,000 statuses per second: the sender keeps up with bounded memory",
          alive and first is not None and last is not None and last - first < 30, f"{first} → {last} MiB")
    if first and last:
        figure(f"status flood: sender RSS {first:.1f} MiB after 2 s, {last:.1f} MiB after 10 s")
    code, out, text, _ = cast("status", "--timeout", "10")
    check("during the flood a command still gets the latest status", code == 0 and out.get("media") is not None,
          text[-200:])
    stop(watcher.process)
    cast("app", "stop", timeout=30)
    stop(receiver)
    receiver = start_receiver()


def local_media_across_the_link():
    """`cast play ./clip.mp4` with the device in its own namespace and a second interface on the sender: the
    server must choose the address that routes to the device, the device-like emulator must fetch and play it,
    and a firewall dropping the served port must produce the reachability diagnosis, not a silent failure."""
    global receiver
    if shutil.which("ffmpeg") is None:
        check("ffmpeg is installed for the local-media checks (Tools/setup.sh test installs it)", False)
        return
    folder = tempfile.mkdtemp(prefix="cast-faults-media-", dir=STATE)
    clip = os.path.join(folder, "clip.mp4")
    sh("ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=5", "-f", "lavfi", "-i",
       "sine=frequency=440", "-t", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip)
    with open(os.path.join(folder, "clip.srt"), "w") as srt:
        srt.write("1\n00:00:00,000 --> 00:00:01,000\nHello\n")
    # A second interface on the sender, added before the route is asked: the address must still be the veth's.
    # (A veth pair with both ends in the sender's namespace: the kernel here has no dummy interfaces.)
    sh("ip", "link", "add", "other0", "netns", SND, "type", "veth", "peer", "name", "other1", "netns", SND)
    sh("ip", "-n", SND, "addr", "add", "10.99.0.2/24", "dev", "other0")
    sh("ip", "-n", SND, "link", "set", "other0", "up")
    stop(receiver)
    receiver = start_receiver("--fetch-media")
    code, out, text, elapsed = cast("play", clip, "--subtitles", os.path.join(folder, "clip.srt"), timeout=90)
    media = out.get("media") or {}
    check("cast play ./clip.mp4 --subtitles ./clip.srt across the link: PLAYING on a device that fetches it",
          code == 0 and media.get("playerState") == "PLAYING", text[-400:])
    check("... served on the address that routes to the device (not another interface, not loopback)",
          media.get("contentId", "").startswith(f"http://{SND_IP}:"), media.get("contentId"))
    check("... with the clip's real duration and the subtitles enabled",
          abs((media.get("duration") or 0) - 4) < 0.3 and media.get("activeTrackIds") == [1], media)
    figure(f"local clip played across the veth pair, command done after {elapsed:.1f} s (waits for playback end)")

    movie = os.path.join(folder, "movie.mkv")
    sh("ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10", "-f", "lavfi", "-i",
       "sine=frequency=440:sample_rate=48000", "-t", "30", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "20",
       "-c:a", "ac3", "-ac", "6", movie)
    code, out, text, elapsed = cast("play", movie, "--detach", timeout=90)
    media = out.get("media") or {}
    check("an MKV with AC-3 audio across the link: PLAYING after transcoding, as HLS served from the sender",
          code == 0 and media.get("playerState") == "PLAYING" and media.get("contentId", "").startswith(f"http://{SND_IP}:")
          and media.get("contentId", "").endswith("/index.m3u8"), text[-400:])
    figure(f"AC-3 MKV PLAYING across the veth pair {elapsed:.1f} s after the command")
    code, out, text, elapsed = cast("seek", "26", timeout=30)
    media = out.get("media") or {}
    check("... and a seek near its end plays", code == 0 and media.get("playerState") == "PLAYING"
          and (media.get("position") or 0) >= 25, text[-400:])
    figure(f"seek near the end of the transcoded MKV answered in {elapsed:.2f} s")
    cast("stop", timeout=30)

    script = """table inet castserve {
  chain input { type filter hook input priority 0; tcp dport 18555 drop; }
}"""
    subprocess.run(in_ns(SND, "nft", "-f", "-"), input=script, text=True, check=True, capture_output=True)
    try:
        code, out, text, elapsed = cast("play", clip, "--serve-port", "18555", "--timeout", "20", timeout=90)
    finally:
        subprocess.run(in_ns(SND, "nft", "delete", "table", "inet", "castserve"), capture_output=True)
    error = out.get("error") or {}
    diagnosis = error.get("diagnosis") or {}
    check("a firewall dropping the served port: exit 1 with the reachability diagnosis, not a silent failure",
          code == 1 and error.get("kind") == "unreachable" and diagnosis.get("cause") == "noConnection", text[-400:])
    check("... naming the served address and port, the device, and the firewall advice",
          diagnosis.get("address") == SND_IP and diagnosis.get("port") == 18555 and diagnosis.get("deviceAddress") == DEV_IP
          and any("18555" in advice for advice in diagnosis.get("advice", [])), diagnosis)
    figure(f"unreachable media diagnosed after {elapsed:.1f} s")
    cast("app", "stop", timeout=30)
    sh("ip", "-n", SND, "link", "del", "other0", check_status=False)
    stop(receiver)
    receiver = start_receiver()


def udp_loss(percent):
    """nftables in the device's namespace: drop a random share of UDP both ways (Cast Streaming's RTP and RTCP)."""
    subprocess.run(in_ns(DEV, "nft", "delete", "table", "inet", "castudp"), capture_output=True)
    if percent is None:
        return
    script = f"""table inet castudp {{
  chain input {{ type filter hook input priority 0; meta l4proto udp numgen random mod 100 < {percent} drop; }}
  chain output {{ type filter hook output priority 0; meta l4proto udp numgen random mod 100 < {percent} drop; }}
}}"""
    subprocess.run(in_ns(DEV, "nft", "-f", "-"), input=script, text=True, check=True, capture_output=True)


def mirroring_at_udp_loss():
    """`cast screen` across the veth pair while nftables drops 5 % of UDP both ways: every frame is completed by
    retransmission or dropped as late (the receiver's checkpoint moves past it), none lost silently."""
    stats = os.path.join(STATE, "streaming.json")
    log = open(os.path.join(STATE, "mirroring-receiver.log"), "w")
    process = subprocess.Popen(in_ns(DEV, RECEIVER, "--no-mdns", "--host", DEV_IP, "--port", "8010",
                                     "--stream-stats", stats), stdout=log, stderr=subprocess.STDOUT, text=True)
    processes.append(process)
    deadline = time.monotonic() + 30
    while "ready" not in open(log.name).read() and time.monotonic() < deadline:
        time.sleep(0.05)
    udp_loss(5)
    try:
        completed = subprocess.run(in_ns(SND, CAST, "screen", "--host", f"{DEV_IP}:8010", "--input", "test",
                                         "--size", "640x360", "--duration", "8", "--json"),
                                   capture_output=True, text=True, env=SENDER_ENV, timeout=90)
    finally:
        udp_loss(None)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    sent = json.loads(lines[-1]).get("video", {}) if lines else {}
    deadline = time.monotonic() + 10
    video = {}
    while time.monotonic() < deadline:
        try:
            video = next(iter(json.load(open(stats)).values()), {}).get("video", {})
        except (OSError, json.JSONDecodeError):
            video = {}
        if video.get("framesCompleted", 0) + video.get("framesLate", 0) >= sent.get("framesAcknowledged", 1):
            break
        time.sleep(0.2)
    stop(process)
    accounted = video.get("framesCompleted", 0) + video.get("framesLate", 0)
    check("mirroring at 5 % UDP loss (nftables): cast screen exits 0", completed.returncode == 0,
          completed.stdout + completed.stderr)
    check("mirroring at 5 % UDP loss: lost packets NACKed and resent",
          sent.get("packetsRetransmitted", 0) > 0 and video.get("packetsRecovered", 0) > 0, (sent, video))
    # Frames still in flight when the sender leaves are neither; every one before them is accounted for.
    check("mirroring at 5 % UDP loss: every frame completed or dropped as late, none lost silently",
          sent.get("framesSent", 0) > 0 and accounted >= sent.get("framesAcknowledged", 0)
          and sent["framesSent"] - accounted <= 3, (sent, video))
    figure(f"mirroring at 5 % UDP loss, 8 s: {sent.get('framesSent')} frames sent, {video.get('framesCompleted')} "
           f"completed, {video.get('framesLate')} late, {sent.get('packetsRetransmitted')} packets resent, "
           f"capture-to-receipt p50 {video.get('delayP50')} ms, p99 {video.get('delayP99')} ms")


def main():
    global receiver
    if os.geteuid() != 0:
        print("faults: needs root (network namespaces, nftables); 0 passed, 0 failed")
        return 0
    for binary in (CAST, RECEIVER):
        if not os.path.exists(binary):
            print(f"missing {binary}: run swift build first", file=sys.stderr)
            return 2
    try:
        lab_up()
        receiver = start_receiver()
        start_session()
        link_down_at_idle()
        blackhole_only_heartbeat_notices()
        drops_during_commands()
        random_loss()
        sender_killed()
        receiver_killed()
        slow_receiver()
        status_flood()
        local_media_across_the_link()
        mirroring_at_udp_loss()
    except Exception as error:  # noqa: BLE001 - a broken lab is a failed check, with its reason
        check("the fault lab ran to the end", False, f"{type(error).__name__}: {error}")
    finally:
        lab_down()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
