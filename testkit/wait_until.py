"""testkit.wait_until for the Python test drivers: polls a condition until it
holds or the deadline passes and returns whether it held, so a test waits for
an event instead of sleeping a fixed time (the C++ twin is wait_until.hpp).
Import it with sys.path.insert(0, <repo>/testkit)."""
import time


def wait_until(condition, timeout=120.0, poll=0.05):
    end = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= end:
            return bool(condition())
        time.sleep(poll)
