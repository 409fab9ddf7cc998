#!/usr/bin/env python3
"""Two sites on one broker (issue 19, "Beyond one machine"): three network namespaces — a broker (mosquitto) and
two sites, each a castd with its own emulated devices on its own veth network to the broker (site A in plain
MQTT, site B over TLS with a user name and password, as a site across the internet would). Asserts that both
sites' retained states are visible to a central client, that a command published for a device of site B reaches
it and is answered, and that killing site A's castd (SIGKILL) marks it offline through its last will. Needs root;
run through Tools/mqtt-sites.sh. Prints one line per check and `N passed, M failed` last.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab"))
from labkit import check, figure, in_ns, sh, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASTD = os.path.join(ROOT, ".build", "debug", "castd")
RECEIVER = os.path.join(ROOT, ".build", "debug", "cast-receiver")
TAG = f"cmq{os.getpid() % 100000}"
BROKER_NS = f"{TAG}-broker"
SITES = {"site-a": (f"{TAG}-a", "10.79.1"), "site-b": (f"{TAG}-b", "10.79.2")}
STATE = tempfile.mkdtemp(prefix="cast-mqtt-sites-")
processes = {}


def start(name, ns, *args, ready):
    """Starts a process in `ns` and waits (up to 60 s) until its log shows `ready`."""
    log_path = os.path.join(STATE, f"{name}.log")
    log = open(log_path, "w")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(STATE, name), XDG_CONFIG_HOME=os.path.join(STATE, name))
    process = subprocess.Popen(in_ns(ns, *args), stdout=log, stderr=subprocess.STDOUT, text=True, env=env)
    processes[name] = process
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if ready in open(log_path).read():
            return process
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not start: " + open(log_path).read()[-2000:])


def subscribe(topic, count, timeout=20):
    """What a central client (in the broker's namespace) receives on `topic`: `count` messages (retained ones
    first), or fewer after `timeout` seconds."""
    completed = subprocess.run(
        in_ns(BROKER_NS, "mosquitto_sub", "-h", "127.0.0.1", "-t", topic, "-C", str(count), "-W", str(timeout), "-v"),
        capture_output=True, text=True)
    return [line.split(" ", 1) for line in completed.stdout.splitlines() if " " in line]


def lab_up():
    sh("ip", "netns", "add", BROKER_NS)
    sh("ip", "-n", BROKER_NS, "link", "set", "lo", "up")
    for index, (site, (ns, prefix)) in enumerate(SITES.items()):
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        # Both ends are made inside their namespaces: nothing of the lab exists in the root namespace.
        sh("ip", "link", "add", f"mq{index}", "netns", BROKER_NS, "type", "veth", "peer", "name", "mq0", "netns", ns)
        sh("ip", "-n", BROKER_NS, "addr", "add", f"{prefix}.1/24", "dev", f"mq{index}")
        sh("ip", "-n", ns, "addr", "add", f"{prefix}.2/24", "dev", "mq0")
        sh("ip", "-n", BROKER_NS, "link", "set", f"mq{index}", "up")
        sh("ip", "-n", ns, "link", "set", "mq0", "up")


def lab_down():
    for process in processes.values():
        if process.poll() is None:
            process.kill()
            process.wait()
    for ns in [BROKER_NS] + [ns for ns, _ in SITES.values()]:
        sh("ip", "netns", "del", ns, check_status=False)
    shutil.rmtree(STATE, ignore_errors=True)


def make_tls_files():
    """A CA, and a broker certificate it signs for site B's broker address; a password file for site B's user."""
    ca_key, ca, key, request, cert = (os.path.join(STATE, name) for name in
                                      ("ca.key", "ca.pem", "broker.key", "broker.csr", "broker.pem"))
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=lab CA",
       "-keyout", ca_key, "-out", ca)
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=broker", "-keyout", key, "-out", request)
    extensions = os.path.join(STATE, "san.cnf")
    with open(extensions, "w") as file:
        file.write(f"subjectAltName=IP:{SITES['site-b'][1]}.1\n")
    sh("openssl", "x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
       "-extfile", extensions, "-out", cert)
    passwords = os.path.join(STATE, "passwords")
    sh("mosquitto_passwd", "-c", "-b", passwords, "site-b", "lab-secret")
    with open(os.path.join(STATE, "site-b.password"), "w") as file:
        file.write("lab-secret\n")
    return ca, cert, key, passwords


def main():
    lab_up()
    ca, cert, key, passwords = make_tls_files()
    conf = os.path.join(STATE, "mosquitto.conf")
    with open(conf, "w") as file:
        file.write("user root\npersistence false\nlog_dest stderr\nper_listener_settings true\n"
                   "listener 1883 0.0.0.0\nallow_anonymous true\n"
                   f"listener 8883 0.0.0.0\ncafile {ca}\ncertfile {cert}\nkeyfile {key}\n"
                   f"allow_anonymous false\npassword_file {passwords}\n")
    start("broker", BROKER_NS, "mosquitto", "-c", conf, ready=" running")
    # Site B's broker settings come from its profile, as a deployment keeps them (the password in its own file).
    profile = os.path.join(STATE, "site-b.xml")
    with open(profile, "w") as file:
        file.write('<castProfile xmlns="urn:swift-cast:profile:1">'
                   f'<daemon brokerCAFile="{ca}" brokerUsername="site-b" '
                   f'brokerPasswordFile="{os.path.join(STATE, "site-b.password")}"/></castProfile>')
    for site, (ns, prefix) in SITES.items():
        device_ip = f"{prefix}.2"
        start(f"{site}-devices", ns, RECEIVER, "--no-mdns", "--host", device_ip, "--port", "8009", "--devices", "2",
              "--name", f"{site} TV", ready="ready")
        broker = f"mqtt://{prefix}.1:1883" if site == "site-a" else f"mqtts://{prefix}.1:8883"
        extra = ["--profile", profile] if site == "site-b" else []
        start(site, ns, CASTD, "--no-mdns", "--host", f"{device_ip}:8009", "--host", f"{device_ip}:8010",
              "--broker", broker, "--site", site, "--log-level", "info", *extra,
              ready="castd: on MQTT")

    device = {site: f"static_{prefix.replace('.', '_')}_2_8009" for site, (_, prefix) in SITES.items()}

    # A central client sees both sites' devices (retained), without reaching any device itself.
    started = time.monotonic()
    states = subscribe("cast/+/+/state", 4)
    sites_seen = {topic.split("/")[1] for topic, _ in states}
    check("both sites' retained device states reach a central client", sites_seen == set(SITES), states)
    check("each site publishes its two devices", len({topic for topic, _ in states}) == 4, [t for t, _ in states])
    figure(f"4 retained states received in {time.monotonic() - started:.2f} s")
    statuses = dict(subscribe("cast/+/status", 2))
    check("both sites are online (site B over TLS with its user name and password)", statuses == {"cast/site-a/status": "online", "cast/site-b/status": "online"},
          statuses)

    # A command for a device of site B, published at the broker, reaches it; its result comes back.
    result_topic = f"cast/site-b/{device['site-b']}/result"
    waiter = subprocess.Popen(
        in_ns(BROKER_NS, "mosquitto_sub", "-h", "127.0.0.1", "-t", result_topic, "-C", "1", "-W", "30"),
        stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)  # lab-only: let mosquitto_sub subscribe before the command (a result is not retained)
    sent = time.monotonic()
    sh(*in_ns(BROKER_NS, "mosquitto_pub", "-h", "127.0.0.1", "-t", f"cast/site-b/{device['site-b']}/command",
              "-m", json.dumps({"command": "load", "url": "http://media.example/site-b.mp4", "id": "b1"})))
    output, _ = waiter.communicate(timeout=40)
    try:
        result = json.loads(output.strip() or "{}")
    except json.JSONDecodeError:
        result = {"raw": output}
    check("a command for site B's device is performed and answered",
          result.get("ok") is True and result.get("id") == "b1"
          and result.get("status", {}).get("media", {}).get("playerState") == "PLAYING", result)
    figure(f"command to result across the broker in {(time.monotonic() - sent) * 1000:.0f} ms")
    state_b = subscribe(f"cast/site-b/{device['site-b']}/state", 1)
    check("site B's retained state shows the media",
          bool(state_b) and "site-b.mp4" in state_b[0][1], state_b)
    state_a = subscribe(f"cast/site-a/{device['site-a']}/state", 1)
    check("site A's device is untouched", bool(state_a) and "site-b.mp4" not in state_a[0][1], state_a)

    # Site A's castd dies without a word: the broker publishes its last will.
    processes["site-a"].kill()
    processes["site-a"].wait()
    killed = time.monotonic()
    offline = subscribe("cast/site-a/status", 1)
    check("killing site A's castd marks it offline through the last will",
          offline == [["cast/site-a/status", "offline"]], offline)
    figure(f"last will seen {time.monotonic() - killed:.2f} s after SIGKILL")
    check("site B stays online", dict(subscribe("cast/site-b/status", 1)) == {"cast/site-b/status": "online"})


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a lab that cannot be built is a failure, not a skip
        check("the two-site lab runs", False, error)
    finally:
        lab_down()
    sys.exit(summary())
