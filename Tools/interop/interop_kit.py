"""What the pychromecast interop scripts share: checks, their count, and waiting on pychromecast's callbacks."""
import logging
import os
import threading
import time

# pychromecast's own debug log, for a failure to be looked into afterwards (run.sh names a file per emulator,
# beside the emulator's wire log).
if os.environ.get("INTEROP_PYCHROMECAST_LOG"):
    logging.basicConfig(filename=os.environ["INTEROP_PYCHROMECAST_LOG"], filemode="w", level=logging.DEBUG,
                        format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")

TIMEOUT = 10.0
results = []
# Set by the scripts' pychromecast listeners on every status callback.
changed = threading.Event()


def check(name, condition, detail=""):
    """Records and prints one check."""
    results.append(bool(condition))
    print(f"{'PASS' if condition else 'FAIL'} {name}{(': ' + str(detail)) if detail and not condition else ''}",
          flush=True)


def wait_for(predicate, timeout=TIMEOUT):
    """Waits on pychromecast's own status callbacks (an Event), bounded by a deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        changed.wait(0.05)
        changed.clear()
    return predicate()


def summary():
    """Prints `N passed, M failed` and returns the exit status."""
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed", flush=True)
    return 0 if passed == len(results) else 1
