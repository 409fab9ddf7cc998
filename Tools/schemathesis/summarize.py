#!/usr/bin/env python3
"""Turns a schemathesis NDJSON report into the project's result lines.

One `PASS METHOD PATH (...)` line per API operation whose every gated check passed on every case, else one
`FAIL METHOD PATH [check]: ...` line per failing check with the first request and response that failed it; then
lines for the run itself (every operation of the spec tested, real device ids reached, no schemathesis errors),
and `N passed, M failed`. Exits 1 when anything failed.

Usage: summarize.py REPORT.ndjson SPEC.yaml --checks a,b,c --device-id ID [--device-id ID ...]
"""
import argparse
import base64
import collections
import json
import re
import sys
import urllib.parse

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def spec_operations(path):
    """`METHOD /path` of every operation in the OpenAPI document (a plain line scan: no YAML library needed)."""
    operations = []
    current = None
    for line in open(path, encoding="utf-8"):
        match = re.match(r"^  (/\S*):\s*$", line)
        if match:
            current = match.group(1)
            continue
        if re.match(r"^\S", line):
            current = None
            continue
        match = re.match(r"^    (\w+):\s*$", line)
        if current and match and match.group(1) in METHODS:
            operations.append(f"{match.group(1).upper()} {current}")
    return operations


def decode(content, limit=240):
    if not content:
        return ""
    if "$base64" in content:
        raw = base64.b64decode(content["$base64"])
    else:
        raw = (content.get("text") or "").encode()
    text = raw.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def one_line(text, limit=200):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("spec")
    parser.add_argument("--checks", required=True)
    parser.add_argument("--device-id", action="append", default=[])
    arguments = parser.parse_args()
    gated = arguments.checks.split(",")
    encoded_ids = [urllib.parse.quote(i, safe="") for i in arguments.device_id]

    cases = collections.Counter()  # operation -> cases
    statuses = collections.defaultdict(collections.Counter)  # operation -> status -> count
    on_devices = collections.Counter()  # operation -> cases that named a real device
    on_devices_ok = collections.Counter()  # ... and were answered 2xx
    checked = collections.defaultdict(collections.Counter)  # operation -> check -> runs
    failures = collections.OrderedDict()  # (operation, check) -> first failure line
    failure_counts = collections.Counter()
    errors = []
    finished = False

    for line in open(arguments.report, encoding="utf-8"):
        event = json.loads(line)
        (kind, body), = event.items()
        if kind == "EngineFinished":
            finished = True
        if kind in ("NonFatalError", "FatalError", "Interrupted"):
            errors.append(f"{kind}: {one_line(body.get('info') or body.get('value') or body, 300)}")
            continue
        if kind != "ScenarioFinished":
            continue
        recorder = body["recorder"]
        interactions = recorder.get("interactions", {})
        for case_id, case in recorder.get("cases", {}).items():
            value = case["value"]
            operation = f"{value['method']} {value['path']}"
            interaction = interactions.get(case_id)
            if interaction is None or interaction.get("response") is None:
                continue
            status = interaction["response"]["status_code"]
            cases[operation] += 1
            statuses[operation][status] += 1
            uri = interaction["request"]["uri"]
            if any(f"/v1/devices/{i}" in uri for i in encoded_ids):
                on_devices[operation] += 1
                if 200 <= status < 300:
                    on_devices_ok[operation] += 1
            for check in recorder.get("checks", {}).get(case_id, []):
                if check["name"] not in gated:
                    continue
                checked[operation][check["name"]] += 1
                if check["status"] == "success":
                    continue
                key = (operation, check["name"])
                failure_counts[key] += 1
                if key in failures:
                    continue
                info = (check.get("failure_info") or {}).get("failure") or {}
                request = interaction["request"]
                sent = ""
                if value.get("body") is not None:
                    sent = " body " + one_line(json.dumps(value["body"], ensure_ascii=True), 160)
                for name, values in (request.get("headers") or {}).items():
                    if name.lower() not in ("content-type", "content-length", "user-agent", "accept",
                                            "accept-encoding", "connection", "x-schemathesis-testcaseid"):
                        sent += f" header {name}: {one_line(values, 60)}"
                failures[key] = (
                    f"{info.get('code', '?')} {info.get('title', check['name'])}: "
                    f"{one_line(info.get('message', ''), 220)} | request {request['method']} {request['uri']}{sent}"
                    f" | response {status} {decode(interaction['response'].get('content'))}"
                )

    passed = failed = 0

    def emit(ok, text):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
        print(("PASS " if ok else "FAIL ") + text)

    operations = spec_operations(arguments.spec)
    for operation in operations:
        if not cases[operation]:
            continue
        failing = [(check, failures[(operation, check)]) for check in gated if (operation, check) in failures]
        counts = " ".join(f"{s}×{n}" for s, n in sorted(statuses[operation].items()))
        device_note = f", {on_devices[operation]} on real devices ({on_devices_ok[operation]} 2xx)" \
            if "{deviceId}" in operation else ""
        if not failing:
            emit(True, f"{operation} ({cases[operation]} cases{device_note}; {counts})")
        for check, detail in failing:
            emit(False, f"{operation} [{check}] ({failure_counts[(operation, check)]} of "
                        f"{checked[operation][check]} cases): {detail}")

    untested = [o for o in operations if not cases[o]]
    emit(not untested, "every operation of the spec was tested" +
         (f": untested {', '.join(untested)}" if untested else f" ({len(operations)} operations)"))
    device_operations = [o for o in operations if "{deviceId}" in o]
    reached = [o for o in device_operations if on_devices_ok[o]]
    emit(sum(on_devices.values()) > 0 and len(reached) > 0,
         f"real device ids exercised: {sum(on_devices.values())} requests named "
         f"{' or '.join(arguments.device_id) or 'no device'}, {sum(on_devices_ok.values())} answered 2xx, "
         f"on {len(reached)} of {len(device_operations)} device operations")
    emit(finished and not errors, "schemathesis ran to the end without errors" +
         ("" if finished else " (it did not finish)") + ("".join(f"; {e}" for e in errors[:5])))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
