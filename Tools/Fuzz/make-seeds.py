#!/usr/bin/env python3
# swift-cast — Apache-2.0
"""Writes the seed corpora under Tools/Fuzz/corpus/<target>/ from what the project already has.

Sources, each used when present:
  - ../shared/golden/pychromecast-14.0.10-sent.jsonl  (what pychromecast sends; frames and payloads)
  - .build/interop-*.jsonl and any wire log given with --wire-log (the emulator's `--wire-log`: both directions)
  - the JSON fixtures written as triple-quoted strings in Tests/CastMediaTests/MediaModelTests.swift
  - Tools/profiles/*.xml and Tools/profiles/styles/*.xml
  - a few hand-made seeds below for what no log carries (ad breaks, tracks, queue changes, TXT records)

Seeds are small and deduplicated by content; each target keeps at most BUDGET bytes. Run from the package root:
    python3 Tools/Fuzz/make-seeds.py [--wire-log FILE]... [--clean]
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import sys

BUDGET = 8 * 1024  # bytes per target
MAX_SEED = 3 * 1024  # bytes per seed

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "Tools", "Fuzz", "corpus")

RECEIVER_NS = "urn:x-cast:com.google.cast.receiver"
MEDIA_NS = "urn:x-cast:com.google.cast.media"
DISCOVERY_NS = "urn:x-cast:com.google.cast.receiver.discovery"


class Corpus:
    def __init__(self):
        self.seeds = {}  # target -> list of (name, bytes)
        self.seen = set()

    def add(self, target, data, hint):
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not data or len(data) > MAX_SEED:
            return
        key = (target, hashlib.sha1(data).hexdigest())
        if key in self.seen:
            return
        seeds = self.seeds.setdefault(target, [])
        if sum(len(d) for _, d in seeds) + len(data) > BUDGET:
            return
        self.seen.add(key)
        hint = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-")[:40] or "seed"
        seeds.append((f"{hint}-{key[1][:10]}", data))

    def write(self, clean):
        for target, seeds in sorted(self.seeds.items()):
            folder = os.path.join(CORPUS, target)
            if clean and os.path.isdir(folder):
                shutil.rmtree(folder)
            os.makedirs(folder, exist_ok=True)
            for name, data in seeds:
                with open(os.path.join(folder, name), "wb") as file:
                    file.write(data)
            print(f"{target}: {len(seeds)} seeds, {sum(len(d) for _, d in seeds)} bytes")


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def payload_of(line):
    """The JSON payload of a wire-log line, or None."""
    if isinstance(line.get("payload"), (dict, list)):
        return line["payload"]
    text = line.get("payload_utf8")
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def read_log(path):
    lines = []
    with open(path, encoding="utf-8") as file:
        for text in file:
            text = text.strip()
            if text:
                try:
                    lines.append(json.loads(text))
                except ValueError:
                    pass
    return lines


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def cast_message(source, destination, namespace, utf8=None, binary=None, version=0):
    """A CastMessage protobuf body, written by hand (field numbers from cast_channel.proto)."""

    def field(number, wire, data):
        return varint(number << 3 | wire) + data

    def text(number, value):
        raw = value if isinstance(value, bytes) else value.encode("utf-8")
        return field(number, 2, varint(len(raw)) + raw)

    body = field(1, 0, varint(version)) + text(2, source) + text(3, destination) + text(4, namespace)
    if binary is not None and utf8 is None:
        body += field(5, 0, varint(1)) + text(7, binary)
    else:
        body += field(5, 0, varint(0))
        if utf8 is not None:
            body += text(6, utf8)
        if binary is not None:
            body += text(7, binary)
    return body


def framed(body):
    return struct.pack(">I", len(body)) + body


def txt_rdata(strings):
    out = bytearray()
    for string in strings:
        raw = string if isinstance(string, bytes) else string.encode("utf-8")
        out.append(len(raw))
        out += raw
    return bytes(out)


# Hand-made seeds for what the logs do not carry. Values are illustrative, not copied from any device.
RICH_MEDIA = {
    "contentId": "https://media.example.com/movie.m3u8",
    "contentType": "application/x-mpegURL",
    "streamType": "BUFFERED",
    "duration": 120,
    "metadata": {"metadataType": 1, "title": "Movie", "images": [{"url": "https://e.example/p.jpg", "width": 60}]},
    "tracks": [
        {"trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "trackContentId": "https://e.example/en.vtt",
         "trackContentType": "text/vtt", "language": "en", "name": "English"},
        {"trackId": 2, "type": "AUDIO", "language": "de", "roles": ["main"]},
    ],
    "textTrackStyle": {"foregroundColor": "#FFFFFFFF", "fontScale": 1.2, "edgeType": "OUTLINE"},
    "breakClips": [
        {"id": "bc1", "contentId": "https://ads.example.com/1.mp4", "duration": 15, "whenSkippable": 5},
        {"id": "bc2", "duration": 10},
    ],
    "breaks": [
        {"id": "pre", "breakClipIds": ["bc1"], "position": 0},
        {"id": "mid", "breakClipIds": ["bc1", "bc2"], "position": 50},
        {"id": "post", "breakClipIds": ["bc2"], "position": -1, "isWatched": False},
    ],
}

RICH_STATUS = {
    "mediaSessionId": 3, "playerState": "PLAYING", "currentTime": 12.5, "playbackRate": 1,
    "supportedMediaCommands": 274447, "volume": {"level": 0.5, "muted": False}, "activeTrackIds": [1],
    "currentItemId": 1, "preloadedItemId": 2, "repeatMode": "REPEAT_ALL",
    "items": [{"itemId": 1, "autoplay": True, "media": RICH_MEDIA},
              {"itemId": 2, "autoplay": True, "preloadTime": 5,
               "media": {"contentId": "b.mp4", "contentType": "video/mp4", "streamType": "BUFFERED"}}],
    "queueData": {"id": "q1", "name": "Evening", "queueType": "PLAYLIST", "startIndex": 0},
    "breakStatus": {"breakId": "pre", "breakClipId": "bc1", "currentBreakTime": 2, "whenSkippable": 5},
    "videoInfo": {"width": 1920, "height": 1080, "hdrType": "sdr"},
    "liveSeekableRange": {"start": 0, "end": 60}, "media": RICH_MEDIA,
}

RECEIVER_SCRIPT = [
    "R" + compact({"type": "GET_STATUS", "requestId": 2}),
    "M" + compact({"type": "QUEUE_LOAD", "requestId": 3, "repeatMode": "REPEAT_ALL", "startIndex": 0, "items": [
        {"media": RICH_MEDIA, "activeTrackIds": [1]},
        {"media": {"contentId": "b.mp4", "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 30},
         "preloadTime": 5},
        {"media": {"contentId": "live.m3u8", "contentType": "audio/mpeg", "streamType": "LIVE"}},
    ]}),
    "T16",
    "M" + compact({"type": "SKIP_AD", "requestId": 4, "mediaSessionId": 1}),
    "T40",
    "m" + compact({"type": "EDIT_TRACKS_INFO", "requestId": 5, "mediaSessionId": 1, "activeTrackIds": [2],
                   "textTrackStyle": {"fontScale": 2}}),
    "M" + compact({"type": "QUEUE_INSERT", "requestId": 6, "mediaSessionId": 1, "insertBefore": 2,
                   "items": [{"media": {"contentId": "c.mp4", "contentType": "video/mp4", "duration": 5}}]}),
    "M" + compact({"type": "QUEUE_REORDER", "requestId": 7, "mediaSessionId": 1, "itemIds": [3, 1]}),
    "M" + compact({"type": "QUEUE_UPDATE", "requestId": 8, "mediaSessionId": 1, "jump": 1, "repeatMode": "REPEAT_SINGLE"}),
    "M" + compact({"type": "SET_PLAYBACK_RATE", "requestId": 9, "mediaSessionId": 1, "playbackRate": 2}),
    "T100",
    "M" + compact({"type": "QUEUE_GET_ITEM_IDS", "requestId": 10, "mediaSessionId": 1}),
    "M" + compact({"type": "QUEUE_GET_ITEMS", "requestId": 11, "mediaSessionId": 1, "itemIds": [1, 2, 3]}),
    "M" + compact({"type": "QUEUE_REMOVE", "requestId": 12, "mediaSessionId": 1, "itemIds": [2]}),
    "R" + compact({"type": "SET_VOLUME", "requestId": 13, "volume": {"level": 0.25, "muted": True}}),
    "R" + compact({"type": "LAUNCH", "requestId": 14, "appId": "A1B2C3D4", "supportedAppTypes": ["ANDROID_TV", "WEB"],
                   "credentialsData": {"credentials": "token", "credentialsType": "android"}}),
    "M" + compact({"type": "LOAD", "requestId": 15, "media": {"contentId": "x.mp4", "contentType": "video/mp4"},
                   "credentials": "c", "autoplay": False, "currentTime": 3}),
    "R" + compact({"type": "STOP", "requestId": 16}),
    "R" + compact({"type": "GET_APP_AVAILABILITY", "requestId": 17, "appId": ["CC1AD845", "00000000"]}),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wire-log", action="append", default=[], help="an emulator wire log (JSON lines)")
    parser.add_argument("--clean", action="store_true", help="empty each corpus folder first")
    options = parser.parse_args()

    corpus = Corpus()
    logs = []
    golden = os.path.join(ROOT, "..", "shared", "golden", "pychromecast-14.0.10-sent.jsonl")
    for path in [golden] + sorted(glob.glob(os.path.join(ROOT, ".build", "interop-*.jsonl"))) + options.wire_log:
        if os.path.exists(path):
            logs.append((os.path.basename(path), read_log(path)))
    if not logs:
        print("make-seeds: no wire log found; only hand-made seeds are written", file=sys.stderr)

    # Hand-made seeds first, so the budget always keeps them.
    corpus.add("media-status", compact({"type": "MEDIA_STATUS", "requestId": 0, "status": [RICH_STATUS]}), "rich")
    corpus.add("media-client", "\n".join([
        compact({"type": "MEDIA_STATUS", "requestId": 0, "status": [RICH_STATUS]}),
        compact({"type": "QUEUE_CHANGE", "requestId": 0, "changeType": "INSERT", "itemIds": [4, 5], "insertBefore": 2,
                 "sequenceNumber": 1}),
        compact({"type": "MEDIA_STATUS", "requestId": 9, "status": [dict(RICH_STATUS, media=None, playerState="PAUSED")]}),
        compact({"type": "LOAD_FAILED", "requestId": 10, "detailedErrorCode": 104, "itemId": 1}),
        compact({"type": "MEDIA_STATUS", "requestId": 0, "status": []}),
    ]), "session")
    for change in [
        {"type": "QUEUE_CHANGE", "changeType": "INSERT", "itemIds": [4, 5], "insertBefore": 2, "sequenceNumber": 3},
        {"type": "QUEUE_CHANGE", "changeType": "REMOVE", "itemIds": [1]},
        {"type": "QUEUE_CHANGE", "changeType": "ITEMS_CHANGE", "itemIds": [2, 3], "sequenceNumber": 9},
        {"type": "QUEUE_ITEM_IDS", "requestId": 4, "itemIds": [1, 2, 3]},
        {"type": "QUEUE_ITEMS", "requestId": 5, "items": RICH_STATUS["items"]},
        {"type": "INVALID_REQUEST", "requestId": 6, "reason": "INVALID_MEDIA_SESSION_ID"},
    ]:
        corpus.add("queue-change", compact(change), change["type"] + "-" + change.get("changeType", ""))
    corpus.add("receiver", "\n".join(RECEIVER_SCRIPT), "queue-ads-tracks")
    # Regression: LOAD at playback rate 0 left the item's end forever due (the emulator's timer spun).
    corpus.add("receiver", "\n".join([
        "M" + compact({"type": "LOAD", "requestId": 2, "playbackRate": 0,
                       "media": {"contentId": "a.mp4", "contentType": "video/mp4", "duration": 0.001}}),
        "T60",
    ]), "regression-load-rate-0")
    for info in [
        {"deviceInfo": {"deviceId": "1234-abcd", "friendlyName": "Kitchen", "deviceModel": "Chromecast",
                        "capabilities": 4101}},
        {"device_info": {"ssdp_udn": "aa-bb", "name": "TV", "model_name": "Google TV"}, "deviceCapabilities": 5},
    ]:
        corpus.add("device-info", compact(info), "hand")
    for eureka in [
        {"name": "Kitchen speaker", "ssdp_udn": "99F3C58B-F347-1CC1-0CD8-7F79D33599CF",
         "device_info": {"capabilities": {"display_supported": False, "multizone_supported": True},
                         "manufacturer": "Google Inc.", "model_name": "Google Home Mini",
                         "ssdp_udn": "99f3c58b-f347-1cc1-0cd8-7f79d33599cf"},
         "multizone": {"groups": [{"cast_port": 42139, "elected_leader": "self", "name": "Downstairs",
                                   "uuid": "e3e1a6f8-2b4d-4c2a-9d3e-0f1a2b3c4d5e"},
                                  {"cast_port": 32190, "elected_leader": "192.168.1.31:10001", "name": "Everywhere",
                                   "uuid": "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"}],
                       "dynamic_groups": [{"elected_leader": "[fe80::1]:10001", "name": "D", "uuid": "aa"}]}},
    ]:
        corpus.add("eureka-info", compact(eureka), "hand")
    corpus.add("device-status", compact({"type": "RECEIVER_STATUS", "requestId": 0, "status": {
        "volume": {"level": 0.3, "muted": False, "stepInterval": 0.05, "controlType": "attenuation"},
        "isStandBy": False, "isActiveInput": True, "applications": [
            {"appId": "CC1AD845", "displayName": "Default Media Receiver", "sessionId": "S-1", "transportId": "T-1",
             "statusText": "Casting", "namespaces": [{"name": MEDIA_NS}, "urn:x-cast:com.example"]},
            {"appId": "E8C28D3C", "sessionId": "S-2", "isIdleScreen": True}]}}), "hand")
    record = ["id=0123456789abcdef0123456789abcdef", "cd=0123456789ABCDEF", "rm=", "ve=05", "md=Chromecast",
              "ic=/setup/icon.png", "fn=Living Room TV", "ca=201221", "st=0", "bs=FA8F00000000", "nf=1", "rs=Idle"]
    corpus.add("txt", txt_rdata(record), "chromecast")
    corpus.add("txt", txt_rdata(["ID=abc", "id=def", "=novalue", "flag", b"k\xffey=1", "fn=" + "\u00e9" * 80, "ca=x"]),
               "oddities")
    corpus.add("txt", txt_rdata(["id=group-1", "fn=Speakers", "md=Google Cast Group", "ca=2084", "ve=-1"]), "group")
    frames = [
        cast_message("sender-0", "receiver-0", "urn:x-cast:com.google.cast.tp.deviceauth", binary=b"\x0a\x00"),
        cast_message("sender-0", "receiver-0", RECEIVER_NS, binary=b'{"type":"GET_STATUS","requestId":1}'),
        cast_message("receiver-0", "*", "urn:x-cast:com.google.cast.tp.heartbeat", utf8='{"type":"PING"}', version=3),
    ]
    for body in frames:
        corpus.add("cast-message", body, "hand")
        corpus.add("frame", framed(body), "hand")
    corpus.add("frame", b"".join(framed(body) for body in frames), "stream")
    # frame-stream: the first byte sets the read size (byte + 1), then the stream.
    for read_size in (1, 7, 64, 256):
        corpus.add("frame-stream", bytes([read_size - 1]) + b"".join(framed(body) for body in frames), "stream")
    corpus.add("frame-stream", bytes([15]) + framed(frames[1])[:-3], "truncated")
    # Cast Streaming: the reference's worked packets (cast-streaming.md §7.5, §9.3, §9.9) and control messages.
    rtp = [bytes.fromhex("80601234000038400001 2fd1 4105 0000 0001 04 0402 0190 dead".replace(" ", "")),
           bytes.fromhex("80fffffe000005a000007ab7c003000000000301 02".replace(" ", ""))]
    for packet in rtp:
        corpus.add("rtp", packet, "reference")
    corpus.add("stream-receiver", b"".join(len(p).to_bytes(2, "big") + p for p in rtp) + b"\x00\x01\xff", "reference")
    corpus.add("rtcp", bytes.fromhex("80c8000600012fd1e8f0a1b24000000000004 9d4000004d20016e360".replace(" ", "")), "sr")
    corpus.add("rtcp", bytes.fromhex(
        "81c9000700012fd200012fd10300001100011234 0000005aa1b24000 0000199a"
        "80cf000400012fd204000002e8f0a1b280000000 81ce000200012fd200012fd1"
        "8fce000800012fd200012fd143415354 09020190 0a000006 0cffff00 43535432 07020500".replace(" ", "")), "compound")
    offer = {"type": "OFFER", "seqNum": 1, "offer": {"castMode": "mirroring", "supportedStreams": [
        {"index": 0, "type": "audio_source", "codecName": "opus", "channels": 2, "bitRate": 128000,
         "rtpProfile": "cast", "rtpPayloadType": 127, "ssrc": 31415, "timeBase": "1/48000", "targetDelay": 400,
         "aesKey": "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "aesIvMask": "a1b2c3d4e5f60718293a4b5c6d7e8f90"},
        {"index": 1, "type": "video_source", "codecName": "vp8", "maxFrameRate": "30", "maxBitRate": 5000000,
         "resolutions": [{"width": 1920, "height": 1080}], "rtpPayloadType": 96, "ssrc": 77777,
         "timeBase": "1/90000", "aesKey": "00112233445566778899aabbccddeeff",
         "aesIvMask": "ffeeddccbbaa99887766554433221100"}]}}
    corpus.add("streaming-control", compact(offer), "offer")
    corpus.add("streaming-control", compact({"answer": {"receiverRtcpEventLog": [0, 1], "rtpExtensions": [
        ["adaptive_playout_delay"], ["adaptive_playout_delay"]], "sendIndexes": [0, 1], "ssrcs": [40863, 759293],
        "udpPort": 50691, "castMode": "mirroring"}, "result": "ok", "seqNum": 989031000, "type": "ANSWER"}), "answer")
    for text in ['{"a":[1,-0,2.5e-3,1E+2,true,false,null],"\\u00e9\\ud83d\\ude00":"\\n\\t\\"\\\\\\/"}',
                 '"\\ud800 lone"', "[[[[[]]]]]", "  -12345678901234567890.5e-7 "]:
        corpus.add("json", text, "hand")

    # The wire logs: frames, bodies and payloads by namespace and direction.
    for name, lines in logs:
        session_media, session_receiver, last_t, stream = [], [], None, b""
        for line in lines:
            namespace = line.get("namespace", "")
            payload = payload_of(line)
            kind = payload.get("type", "") if isinstance(payload, dict) else ""
            hint = f"{kind or 'binary'}"
            direction = line.get("dir", "send")
            frame_hex = line.get("frame_hex")
            if frame_hex:
                frame = bytes.fromhex(frame_hex)
                corpus.add("frame", frame, hint)
                corpus.add("cast-message", frame[4:], hint)
                stream += frame  # consecutive frames of one log, a read size from the stream's length
                if len(stream) > 1500:
                    corpus.add("frame-stream", bytes([len(stream) % 256]) + stream, name)
                    stream = b""
            if payload is None:
                continue
            corpus.add("json", compact(payload), hint)
            # Messages the emulator sent are what a sender parses ("send" in the emulator's log).
            outbound = direction == "send" and "device" in line
            if outbound and kind == "MEDIA_STATUS":
                corpus.add("media-status", compact(payload), hint)
            if outbound and namespace == MEDIA_NS:
                session_media.append(compact(payload))
                if kind == "QUEUE_CHANGE":
                    corpus.add("queue-change", compact(payload), hint)
            if outbound and kind == "RECEIVER_STATUS":
                corpus.add("device-status", compact(payload), hint)
            if outbound and namespace == DISCOVERY_NS:
                corpus.add("device-info", compact(payload), hint)
            # Requests a device handles ("recv" in the emulator's log; everything pychromecast sent).
            inbound = direction == "recv" or "device" not in line
            if inbound and namespace in (RECEIVER_NS, MEDIA_NS):
                t = line.get("t")
                if isinstance(t, (int, float)) and last_t is not None and t - last_t > 0.001:
                    session_receiver.append(f"T{round(t - last_t, 3)}")
                last_t = t if isinstance(t, (int, float)) else last_t
                session_receiver.append(("R" if namespace == RECEIVER_NS else "M") + compact(payload))
        for target, session in (("media-client", session_media), ("receiver", session_receiver)):
            # Whole sessions are too big for one seed: windows of consecutive messages.
            window = []
            for entry in session:
                if sum(len(e) + 1 for e in window) + len(entry) > 1500 and window:
                    corpus.add(target, "\n".join(window), name)
                    window = window[len(window) // 2:]
                window.append(entry)
            if window:
                corpus.add(target, "\n".join(window), name)

    # Test fixtures: JSON texts in the media model tests.
    tests = os.path.join(ROOT, "Tests", "CastMediaTests", "MediaModelTests.swift")
    if os.path.exists(tests):
        with open(tests, encoding="utf-8") as file:
            source = file.read()
        for block in re.findall(r'"""\n(.*?)\n\s*"""', source, re.S):
            try:
                value = json.loads(block)
            except ValueError:
                continue
            if isinstance(value, dict) and "mediaSessionId" in value:
                corpus.add("media-status", compact(value), "test-fixture")
            elif isinstance(value, dict) and "contentId" in value:
                corpus.add("media-status", compact({"mediaSessionId": 1, "media": value}), "test-fixture-media")

    # Configuration documents.
    for path in sorted(glob.glob(os.path.join(ROOT, "Tools", "profiles", "*.xml"))):
        with open(path, "rb") as file:
            corpus.add("profile", file.read(), os.path.basename(path))
    for path in sorted(glob.glob(os.path.join(ROOT, "Tools", "profiles", "styles", "*.xml"))):
        with open(path, "rb") as file:
            corpus.add("style", file.read(), os.path.basename(path))
    corpus.add("profile", '<castProfile xmlns="urn:swift-cast:profile:1" extends="default.xml">'
               '<style path="styles/solarized.xml"/></castProfile>', "extends")
    corpus.add("style", '<castViews xmlns="urn:swift-cast:style:1" extends="styles/solarized.xml" bodyTextColor="red">'
               '<mediaControllers><miniController iconTintColor="#ff000080"/></mediaControllers></castViews>', "extends")
    corpus.add("style", '<?xml version="1.0" encoding="ISO-8859-1"?>\n<castViews xmlns="urn:swift-cast:style:1"/>',
               "encoding")

    corpus.write(options.clean)


if __name__ == "__main__":
    main()
