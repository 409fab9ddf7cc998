#!/usr/bin/env python3
"""pychromecast 14.0.10 in the side-by-side benchmark (Tools/bench/run.sh), used as its README shows.

Usage: pychromecast_bench.py HOST PORT SESSIONS ROUNDS ECHOES
Prints the same lines as floor.c: `session US` (connect, TLS, launch, app connect), `load US` (LOAD until
PLAYING), `rtt US` (one PAUSE or PLAY until its reply), and `echo MESSAGES_PER_SECOND` (one session, 64 in flight);
with more than one session, the first is the warm-up, printed as `first-session` and `first-load`.
Waits only on pychromecast's own callbacks (Events), never polls.
"""
import sys
import threading
import time
import uuid

import pychromecast
import pychromecast.error
from pychromecast.const import CAST_TYPE_CHROMECAST
from pychromecast.controllers import BaseController
from pychromecast.controllers.media import MediaStatusListener
from pychromecast.models import CastInfo, HostServiceInfo

DMR = "CC1AD845"
ECHO_APP = "E0C40001"
ECHO_NAMESPACE = "urn:x-cast:com.example.echo"
TIMEOUT = 10.0


class Playing(MediaStatusListener):
    def __init__(self):
        self.event = threading.Event()

    def new_media_status(self, status):
        if status.player_state == "PLAYING":
            self.event.set()

    def load_media_failed(self, queue_item_id, error_code):
        pass


class Echo(BaseController):
    """Sends `count` messages, `window` in flight, and counts the echoes. Only the calling thread writes:
    pychromecast's socket breaks (SSL BAD_LENGTH) when its own thread writes at the same time."""

    def __init__(self):
        super().__init__(ECHO_NAMESPACE, ECHO_APP)
        self.received = 0
        self.expected = 0
        self.window = threading.Semaphore(0)
        self.done = threading.Event()

    def run(self, count, window=64):
        self.expected, self.received = count, 0
        self.window = threading.Semaphore(window)
        for _ in range(count):
            if not self.window.acquire(timeout=TIMEOUT):
                raise TimeoutError("echoes missing")
            self.send_message({"n": 1}, no_add_request_id=True)
        if not self.done.wait(TIMEOUT):
            raise TimeoutError("echoes missing")

    def receive_message(self, _message, _data):
        self.received += 1
        self.window.release()
        if self.received == self.expected:
            self.done.set()
        return True


def connect(host, port):
    info = CastInfo(
        {HostServiceInfo(host, port)}, uuid.uuid4(), "Chromecast", "Bench", host, port, CAST_TYPE_CHROMECAST,
        "swift-cast",
    )
    cast = pychromecast.get_chromecast_from_cast_info(info, None, tries=1, timeout=TIMEOUT)
    cast.wait(timeout=TIMEOUT)
    return cast


def stop(cast):
    """Quits the app and disconnects; pychromecast sometimes loses its socket under load and reconnects, and the
    quit then fails: counted (`quit-failed`), not fatal, since the figures are already printed."""
    try:
        cast.quit_app(timeout=TIMEOUT)
    except pychromecast.error.PyChromecastError:
        print("quit-failed 1", flush=True)
    cast.disconnect(timeout=TIMEOUT)


def main(host, port, sessions, rounds):
    for index in range(sessions):
        # With more than one session, the first is the process's warm-up (as in floor.c).
        prefix = "first-" if index == 0 and sessions > 1 else ""
        for attempt in range(3):
            try:
                session(host, port, prefix, rounds if not prefix else 20, timed=not prefix)
                break
            except pychromecast.error.PyChromecastError as error:
                # pychromecast's socket thread sometimes loses its connection while the caller sends (its
                # socket_client says so: NotConnected "is connecting"); counted, and the session run again.
                print(f"retry 1 ({type(error).__name__})", flush=True)
                if attempt == 2:
                    raise


def session(host, port, prefix, rounds, timed):
    """One session: start, LOAD until PLAYING, `rounds` PAUSE/PLAY pairs, stop; prints its figures at the end."""
    lines = []
    start = time.perf_counter()
    cast = connect(host, port)
    try:
        cast.start_app(DMR, timeout=TIMEOUT)
        lines.append(f"{prefix}session {(time.perf_counter() - start) * 1e6:.1f}")
        media = cast.media_controller
        playing = Playing()
        media.register_status_listener(playing)
        start = time.perf_counter()
        media.play_media("https://media.example.com/bench.mp4", "video/mp4", stream_type="BUFFERED")
        if not playing.event.wait(TIMEOUT):
            raise TimeoutError("no PLAYING status")
        lines.append(f"{prefix}load {(time.perf_counter() - start) * 1e6:.1f}")
        samples = []
        for round in range(2 * rounds):
            start = time.perf_counter()
            (media.play if round % 2 else media.pause)(timeout=TIMEOUT)
            samples.append(time.perf_counter() - start)
        if timed:
            lines += [f"rtt {sample * 1e6:.1f}" for sample in samples]
    except BaseException:
        cast.disconnect(timeout=TIMEOUT)
        raise
    print("\n".join(lines), flush=True)
    stop(cast)


def echo_run(host, port, echoes):
    """The echo on one session, 64 in flight."""
    cast = connect(host, port)
    echo = Echo()
    cast.register_handler(echo)
    cast.start_app(ECHO_APP, timeout=TIMEOUT)
    start = time.perf_counter()
    try:
        echo.run(echoes)
        print(f"echo {echoes / (time.perf_counter() - start):.0f}", flush=True)
    except (TimeoutError, pychromecast.error.PyChromecastError) as error:
        print(f"echo-failed 1 ({type(error).__name__})", flush=True)
    stop(cast)


if __name__ == "__main__":
    host, port, sessions, rounds, echoes = sys.argv[1], *(int(argument) for argument in sys.argv[2:6])
    main(host, port, sessions, rounds)
    if echoes > 0:
        echo_run(host, port, echoes)
