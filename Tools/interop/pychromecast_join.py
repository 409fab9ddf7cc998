#!/usr/bin/env python3
"""A session that pychromecast 14.0.10 starts (as a phone app would) is observed and controlled by `cast`.

pychromecast launches the Default Media Receiver on cast-receiver and loads a two-item queue; then the `cast`
binary, with a state directory of its own (so it has no saved session), lists the device, reads its status and
pauses, seeks, sets the volume, skips to the next item, leaves (the session keeps playing), stops the media and
finally the app. After each command pychromecast must see the change through its own connection.

Usage: pychromecast_join.py CAST_BINARY HOST PORT
Prints one line per check and `N passed, M failed` last; exits non-zero when anything failed.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

import pychromecast
from interop_kit import TIMEOUT, changed, check, summary, wait_for
from pychromecast.const import CAST_TYPE_CHROMECAST
from pychromecast.models import CastInfo, HostServiceInfo

DMR = "CC1AD845"
URL_A = "https://media.example.com/phone-alpha.mp4"
URL_B = "https://media.example.com/phone-beta.mp4"


class Listener:
    media_updates = 0

    def new_media_status(self, status):
        self.media_updates += 1
        changed.set()

    def new_cast_status(self, status):
        changed.set()

    def load_media_failed(self, queue_item_id, error_code):
        changed.set()


def main(binary, host, port):
    state = tempfile.mkdtemp(prefix="cast-join-")
    atexit.register(shutil.rmtree, state, True)
    env = dict(os.environ, XDG_STATE_HOME=state, XDG_CONFIG_HOME=state)
    target = ["--host", f"{host}:{port}"]

    def cast(*args):
        completed = subprocess.run([binary, *args, *target, "--json"], capture_output=True, text=True, env=env,
                                   timeout=60)
        lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
        try:
            payload = json.loads(lines[-1]) if lines else {}
        except json.JSONDecodeError:
            payload = {}
        return completed.returncode, payload, completed.stdout + completed.stderr

    info = CastInfo({HostServiceInfo(host, port)}, uuid.uuid4(), "Chromecast", "Emulated Chromecast", host, port,
                    CAST_TYPE_CHROMECAST, "swift-cast")
    phone = pychromecast.get_chromecast_from_cast_info(info, None, tries=1, timeout=TIMEOUT)
    listener = Listener()
    phone.register_status_listener(listener)
    media = phone.media_controller
    media.register_status_listener(listener)
    phone.wait(timeout=TIMEOUT)
    phone.start_app(DMR, timeout=TIMEOUT)
    media.play_media(URL_A, "video/mp4", title="From the phone", stream_type="BUFFERED")
    media.block_until_active(timeout=TIMEOUT)
    check("pychromecast plays", wait_for(lambda: media.status.player_state == "PLAYING"), media.status.player_state)
    updates = listener.media_updates
    media.play_media(URL_B, "video/mp4", title="Second", enqueue=True)
    wait_for(lambda: listener.media_updates > updates)
    session_id = phone.status.session_id

    code, out, text = cast("devices")
    device = (out.get("devices") or [{}])[0]
    check("cast devices: exit 0", code == 0, text)
    check("cast devices: the running title", (device.get("media") or {}).get("title") == "From the phone", device)
    check("cast devices: the running app", (device.get("app") or {}).get("id") == DMR, device)
    check("cast devices: the device's own name and model",
          device.get("name") == "Emulated Chromecast" and device.get("model") == "Chromecast", device)
    check("cast devices: real capabilities, no group from the port", device.get("capabilities") == ["video", "audio"],
          device)

    code, out, text = cast("status")
    check("cast status sees the phone's session", code == 0 and (out.get("media") or {}).get("title") == "From the phone",
          text)
    check("cast status: app and session", (out.get("app") or {}).get("sessionId") == session_id, out)
    check("cast status: the phone's queue of two", ((out.get("media") or {}).get("queue") or {}).get("count") == 2, out)

    code, out, text = cast("pause")
    check("cast pause: exit 0", code == 0 and (out.get("media") or {}).get("playerState") == "PAUSED", text)
    check("pychromecast sees the pause", wait_for(lambda: media.status.player_state == "PAUSED"),
          media.status.player_state)

    code, out, text = cast("seek", "120")
    check("cast seek: exit 0", code == 0, text)
    check("pychromecast sees the seek", wait_for(lambda: abs((media.status.current_time or 0) - 120) < 2),
          media.status.current_time)

    code, out, text = cast("volume", "0.3")
    check("cast volume: exit 0", code == 0, text)
    check("pychromecast sees the volume", wait_for(lambda: abs(phone.status.volume_level - 0.3) < 1e-6),
          phone.status.volume_level)

    code, out, text = cast("next")
    check("cast next: exit 0", code == 0 and (out.get("media") or {}).get("contentId") == URL_B, text)
    check("pychromecast sees the next item", wait_for(lambda: media.status.content_id == URL_B),
          media.status.content_id)

    code, out, text = cast("leave")
    check("cast leave: exit 0 and says it left", code == 0 and out.get("left") is True, text)
    check("after leave the phone's session keeps running",
          phone.status.session_id == session_id and media.status.player_state in ("PLAYING", "PAUSED", "BUFFERING"),
          (phone.status.session_id, media.status.player_state))
    media.play()
    check("and the phone still controls it", wait_for(lambda: media.status.player_state == "PLAYING"),
          media.status.player_state)

    code, out, text = cast("stop")
    check("cast stop: stops the media", code == 0 and (out.get("media") or {}).get("playerState") in ("IDLE", None),
          text)
    check("pychromecast sees the media stop, the app still runs",
          wait_for(lambda: media.status.player_state == "IDLE") and phone.app_id == DMR,
          (media.status.player_state, phone.app_id))

    code, out, text = cast("app", "stop")
    check("cast app stop: says it stopped the app", code == 0 and out.get("stopped") == "app", text)
    check("pychromecast sees the app end", wait_for(lambda: phone.app_id in (None, "E8C28D3C")), phone.app_id)

    code, out, text = cast("status")
    check("cast status on the idle device: exit 0, app and media null",
          code == 0 and "app" in out and out.get("app") is None and out.get("media") is None, text)
    code, out, text = cast("pause")
    check("cast pause on the idle device: exit 5", code == 5 and (out.get("error") or {}).get("exitCode") == 5, text)

    phone.disconnect(timeout=TIMEOUT)
    return summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
