"""What the network-namespace labs (Tools/faults, Tools/mqtt-sites) share: recording checks, running commands
(inside a namespace), and the closing `N passed, M failed` line."""
import subprocess

results = []


def check(name, condition, detail=""):
    """Records and prints one check; the detail is shown only when it fails."""
    results.append(bool(condition))
    print(f"{'PASS' if condition else 'FAIL'} {name}{(': ' + str(detail)) if detail and not condition else ''}",
          flush=True)


def figure(text):
    """Prints a measured figure under the checks."""
    print(f"  figure: {text}", flush=True)


def sh(*args, check_status=True):
    """Runs a command and returns it completed; raises with its stderr when it fails and `check_status`."""
    completed = subprocess.run(list(args), capture_output=True, text=True)
    if check_status and completed.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {completed.stderr.strip()}")
    return completed


def in_ns(ns, *args):
    """A command line that runs `args` inside the network namespace `ns`."""
    return ["ip", "netns", "exec", ns, *args]


def summary():
    """Prints `N passed, M failed` and returns the exit status."""
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0
