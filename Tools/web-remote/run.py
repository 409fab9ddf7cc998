#!/usr/bin/env python3
"""castd's web remote in a real browser (headless Chromium through selenium), clicked through like a user: two
emulated devices (cast-receiver) behind a castd on loopback, with a media folder holding a generated video and
its subtitles. Checks the device list, casting a URL and a local file, the mini and expanded controllers (pause,
seek, volume), the queue, the tracks, a change by another client arriving through the event stream, keyboard
access and accessible names, a phone-width layout, that the page loads nothing from other origins and logs no
console errors, a refused command's problem shown, reconnecting after castd restarts, and the token prompt of a
castd that needs one. Screenshots of each step go to $WEB_REMOTE_ARTEFACTS (default
.build/web-remote-artefacts). Run through Tools/web-remote.sh; prints one line per check and `N passed, M failed`.
"""
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab"))
from labkit import check, figure, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASTD = os.path.join(ROOT, ".build", "debug", "castd")
RECEIVER = os.path.join(ROOT, ".build", "debug", "cast-receiver")
ARTEFACTS = os.environ.get("WEB_REMOTE_ARTEFACTS", os.path.join(ROOT, ".build", "web-remote-artefacts"))
WORK = tempfile.mkdtemp(prefix="cast-web-remote-")
processes = []

# Every control a user operates, with its accessible name worked out as browsers do for these simple cases
# (aria-labelledby, aria-label, <label>, text); the elements that have none are answered.
UNNAMED_CONTROLS_JS = """
const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
const text = (id) => document.getElementById(id)?.textContent.trim() ?? "";
const nameOf = (el) => {
  const labelledBy = (el.getAttribute("aria-labelledby") ?? "").split(/\\s+/).filter(Boolean).map(text).join(" ");
  return labelledBy || el.getAttribute("aria-label")?.trim() ||
    [...(el.labels ?? [])].map((label) => label.textContent.trim()).join(" ") ||
    (el.tagName === "BUTTON" ? el.textContent.trim() : "") || el.getAttribute("title")?.trim() || "";
};
const controls = document.querySelectorAll("button, input, select, textarea, a[href], [tabindex]:not([tabindex='-1'])");
return [...controls].filter(visible).filter((el) => !nameOf(el)).map((el) => el.outerHTML.slice(0, 120));
"""

# Visible controls smaller than a fingertip (44 × 44 CSS pixels), as `id-or-class W×H`.
SMALL_CONTROLS_JS = """
const controls = document.querySelectorAll("button, input, select");
return [...controls].filter((el) => el.getClientRects().length > 0).flatMap((el) => {
  const box = el.getBoundingClientRect();
  return box.width < 44 || box.height < 44
    ? [`${el.id || el.className} ${Math.round(box.width)}x${Math.round(box.height)}`] : [];
});
"""

SET_SLIDER_JS = """
const [slider, value] = arguments;
slider.value = value;
slider.dispatchEvent(new Event("input", { bubbles: true }));
slider.dispatchEvent(new Event("change", { bubbles: true }));
"""

# The focused control (id or class) and its outline style; null when the focus is on no control.
FOCUSED_JS = """
const el = document.activeElement;
return el && el !== document.body ? [el.id || el.className, getComputedStyle(el).outlineStyle] : null;
"""

# Keeps every problem the page shows (a later action clears the region), for a failure's detail.
RECORD_PROBLEMS_JS = """
window.problemsShown = [];
new MutationObserver(() => {
  const text = document.getElementById("problems").textContent.trim();
  if (text) window.problemsShown.push(text);
}).observe(document.getElementById("problems"), { childList: true, subtree: true });
"""

FOREIGN_RESOURCES_JS = """
return performance.getEntriesByType("resource").map((entry) => entry.name)
  .filter((url) => new URL(url).origin !== location.origin);
"""


# MARK: - Processes and the API


def start(name, args, pattern, timeout=30):
    """Starts a process in its own process group, its output in WORK/name.log, and waits until a line matches
    `pattern`; answers the process and the match."""
    log_path = os.path.join(WORK, f"{name}.log")
    # No profile or CAST_* setting of the machine running the test may change what castd does.
    env = {key: value for key, value in os.environ.items() if not key.startswith("CAST_")}
    env.update(XDG_CONFIG_HOME=os.path.join(WORK, name, "config"), XDG_STATE_HOME=os.path.join(WORK, name, "state"))
    with open(log_path, "w") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    processes.append(process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log_path) as log:
            match = re.search(pattern, log.read())
        if match:
            return process, match
        if process.poll() is not None:
            break
        time.sleep(0.05)
    with open(log_path) as log:
        raise RuntimeError(f"{name} did not start: {log.read()[-2000:]}")


def stop(process):
    """Ends a process's group: SIGTERM (castd shuts down gracefully), SIGKILL after 5 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stop_processes():
    for process in processes:
        stop(process)


def api(base, method, path, body=None, token=None):
    """One request to castd's API as another client would make it; answers the JSON."""
    headers = {"Accept": "application/json, application/problem+json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.load(response)


def device_path(device_id):
    return "/v1/devices/" + urllib.parse.quote(device_id, safe="")


def make_media(folder):
    """A two-minute video (tiny and fast to encode) with English subtitles beside it, as a sidecar file."""
    os.makedirs(folder)
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=duration=120:size=160x90:rate=5",
         "-f", "lavfi", "-i", "sine=frequency=440:duration=120", "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "32k", "-shortest", os.path.join(folder, "sample.mp4")],
        check=True)
    with open(os.path.join(folder, "sample.en.vtt"), "w") as file:
        file.write("WEBVTT\n\n00:00.000 --> 01:00.000\nHello from the web remote test\n")


# MARK: - The browser


def wait_for(condition, timeout=10):
    """Polls `condition` until it answers something true (answered) or `timeout` seconds pass (None); a
    condition that raises (an element not there yet) counts as false."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
            if value:
                return value
        except (WebDriverException, urllib.error.URLError, KeyError, TypeError, ValueError):
            pass
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def open_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                     "--no-first-run", "--disable-extensions", "--lang=en-US"):
        options.add_argument(argument)
    # The console (errors) and the network log (the headers of the event stream's reconnections).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


class Page:
    """The remote in the browser: finding, clicking (centered, clear of the fixed bars) and screenshots."""

    def __init__(self, driver):
        self.driver = driver

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def text(self, element_id):
        return self.by_id(element_id).text.strip()

    def visible(self, element_id):
        return self.by_id(element_id).is_displayed()

    def click(self, element):
        """Clicks `element` (or the element with that id) once it takes clicks: an element being laid out or
        shown takes none for a moment (ElementNotInteractableException); a click still refused after 5 s fails
        with the driver's error."""
        if isinstance(element, str):
            element = self.by_id(element)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        if not wait_for(lambda: element.click() or True, timeout=5):
            element.click()

    def type(self, element_id, text):
        field = self.by_id(element_id)
        field.clear()
        field.send_keys(text)

    def button(self, name):
        """The visible button whose accessible name (aria-label or text) is `name`."""
        for button in self.driver.find_elements(By.CSS_SELECTOR, "button"):
            if button.is_displayed() and name in (button.get_attribute("aria-label"), button.text.strip()):
                return button
        raise ValueError(f"no button {name!r}")

    def device_button(self, name):
        for button in self.driver.find_elements(By.CSS_SELECTOR, "#device-list button"):
            if button.find_element(By.CSS_SELECTOR, ".device-name").text == name:
                return button
        raise ValueError(f"no device {name!r}")

    def screenshot(self, name):
        self.driver.save_screenshot(os.path.join(ARTEFACTS, f"{name}.png"))

    def full_screenshot(self, name, width, mobile=False):
        """The whole page: the viewport is made as tall as the page for the shot, so that the fixed mini
        controller is drawn at the page's end as a user scrolled there would see it."""
        metrics = {"width": width, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile}
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": 740})
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": height})
        try:
            shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
            with open(os.path.join(ARTEFACTS, f"{name}.png"), "wb") as file:
                file.write(base64.b64decode(shot["data"]))
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def console_errors(self):
        """The browser's console errors since the last call."""
        return [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]


# MARK: - The walk through


class Lab:
    """The processes of a run: the emulated devices, castd (no token) and a second castd that needs one."""

    def __init__(self):
        self.media = os.path.join(WORK, "media")
        make_media(self.media)
        _, ready = start("receiver", [RECEIVER, "--no-mdns", "--port", "0", "--devices", "2"], r"(?s)(.*)ready")
        # A device whose app puts an ad before whatever it loads (skippable at once), for the Skip ad button.
        _, ads = start("receiver-ads", [RECEIVER, "--no-mdns", "--port", "0", "--name", "Ad Chromecast",
                                        "--preroll-ad", "30,0"], r"(?s)(.*)ready")
        hosts = [argument for port in re.findall(r"on 127\.0\.0\.1:(\d+)", ready.group(1) + ads.group(1))
                 for argument in ("--host", f"127.0.0.1:{port}")]
        self.serve = [CASTD, "serve", "--no-mdns", *hosts, "--media-folder", self.media]
        lines = subprocess.run([CASTD, "token"], capture_output=True, text=True, check=True).stdout
        self.token = re.search(r"token:\s*(\S+)", lines).group(1)
        token_hash = re.search(r"hash:\s*(\S+)", lines).group(1)
        self.castd, self.base = self.start_castd("castd", "127.0.0.1:0")
        _, self.guarded = self.start_castd("castd-token", "127.0.0.1:0", "--token-hash", token_hash)

    def start_castd(self, name, listen, *extra):
        process, match = start(name, [*self.serve, "--listen", listen, "--state-directory",
                                      os.path.join(WORK, f"{name}-state"), *extra], r"listening on (http://\S+)")
        return process, match.group(1)


def main():
    for old in os.listdir(ARTEFACTS):
        if old.endswith((".png", ".log")):
            os.remove(os.path.join(ARTEFACTS, old))
    lab = Lab()
    listed = api(lab.base, "GET", "/v1/devices")["devices"]
    first = next((device["id"] for device in listed if device["name"] == "Emulated Chromecast 1"), None)
    check("castd lists the three emulated devices", len(listed) == 3 and first, listed)

    driver = open_browser()
    page = Page(driver)
    try:
        walk(page, lab, first)
        token_prompt(page, lab.guarded, lab.token)
    finally:
        driver.quit()
    print(f"artefacts: {ARTEFACTS}", flush=True)


def device_status(base, device_id):
    return api(base, "GET", device_path(device_id))["status"]


def media_of(base, device_id):
    return device_status(base, device_id).get("media") or {}


def walk(page, lab, first):
    driver = page.driver
    base = lab.base
    started = time.monotonic()
    driver.get(base + "/")
    expected = ["Ad Chromecast", "Emulated Chromecast 1", "Emulated Chromecast 2"]
    check("the page lists the devices by name", wait_for(lambda: names_listed(page) == expected),
          names_listed(page))
    driver.execute_script(RECORD_PROBLEMS_JS)
    figure(f"page to device list in {(time.monotonic() - started) * 1000:.0f} ms")
    live = wait_for(lambda: page.text("connection-state") == "Live")
    check("the page follows the event stream", live, page.text("connection-state"))
    with urllib.request.urlopen(base + "/", timeout=10) as response:
        policy = response.headers.get("Content-Security-Policy", "")
    errors = page.console_errors()
    check("the page loads under its Content-Security-Policy without console errors",
          "script-src 'self'" in policy and not errors, errors or policy)
    page.screenshot("01-devices")

    # Choose the first device and cast a URL: the mini controller appears with the title, playing.
    page.click(page.device_button("Emulated Chromecast 1"))
    wait_for(lambda: page.visible("url-input"))
    page.type("url-input", "http://media.example/big-buck-bunny.mp4")
    page.type("title-input", "Big Buck Bunny")
    page.click(page.by_id("url-form").find_element(By.CSS_SELECTOR, "button[value=play]"))
    shown = wait_for(lambda: page.visible("mini-controller") and page.text("mini-title") == "Big Buck Bunny"
                     and page.text("mini-state").startswith("Playing")
                     and page.by_id("mini-play-button").get_attribute("aria-label") == "Pause")
    check("casting a URL shows the mini controller with its title, playing", shown,
          f"{page.text('mini-title')!r} {page.text('mini-state')!r}")
    check("the device plays the URL (API)", media_of(base, first).get("title") == "Big Buck Bunny",
          media_of(base, first))
    page.screenshot("02-casting-url")
    page.click("mini-open")
    opened = wait_for(lambda: driver.switch_to.active_element.get_attribute("id") == "player-heading")
    check("the mini controller opens the expanded controller (focus moves there)", opened,
          driver.switch_to.active_element.get_attribute("outerHTML")[:80])

    # Pause from the expanded controller: the page and the device agree.
    page.click("play-button")
    paused = wait_for(lambda: page.text("media-state") == "Paused"
                      and page.by_id("play-button").get_attribute("aria-label") == "Play")
    check("pause: the controller shows paused", paused, page.text("media-state"))
    check("pause: the device is paused (API)",
          wait_for(lambda: media_of(base, first)["playerState"] == "PAUSED"), media_of(base, first))
    page.click("mini-play-button")
    check("play from the mini controller", wait_for(lambda: page.text("media-state") == "Playing"),
          page.text("media-state"))

    # Another client pauses: the event stream brings it to the page, which is not reloaded.
    driver.execute_script("window.notReloaded = true")
    sent = time.monotonic()
    api(base, "POST", device_path(first) + "/media/pause")
    seen = wait_for(lambda: page.text("media-state") == "Paused" and page.text("mini-state").startswith("Paused"))
    check("another client's pause appears without a reload (live events)",
          seen and driver.execute_script("return window.notReloaded === true"), page.text("media-state"))
    if seen:
        figure(f"another client's pause on the page {(time.monotonic() - sent) * 1000:.0f} ms after its request")
    page.screenshot("03-paused")

    # Volume slider → the device's volume.
    driver.execute_script(SET_SLIDER_JS, page.by_id("volume-bar"), "35")
    volume = wait_for(lambda: abs(device_status(base, first)["volume"] - 0.35) < 0.011
                      and device_status(base, first)["volume"])
    check("the volume slider sets the device's volume (API)", volume, device_status(base, first))
    check("the page shows the volume", page.text("volume-value") == "35%", page.text("volume-value"))
    page.click("mute-button")
    check("mute sets the device muted (API)", wait_for(lambda: device_status(base, first)["muted"] is True
                                                       and page.by_id("mute-button").get_attribute("aria-pressed")
                                                       == "true"))
    page.click("mute-button")
    wait_for(lambda: device_status(base, first)["muted"] is False)

    queue_steps(page, base, first)
    track_steps(page, base, first)
    keyboard_steps(page)
    phone_steps(page)

    foreign = driver.execute_script(FOREIGN_RESOURCES_JS)
    check("the page loads nothing from other origins", foreign == [], foreign)
    errors = page.console_errors()
    shown = driver.execute_script("return window.problemsShown")
    check("no console errors during the walk", not errors, f"{errors}; the page showed {shown}")
    ad_steps(page, base, listed_id(base, "Ad Chromecast"))
    page.click(page.device_button("Emulated Chromecast 1"))
    # From here on the browser logs failed requests, which are expected: a refused command, castd away.
    problem_steps(page, base, first)
    reconnect_steps(page, lab, first)


def listed_id(base, name):
    return next(device["id"] for device in api(base, "GET", "/v1/devices")["devices"] if device["name"] == name)


def ad_steps(page, base, device):
    """A device that plays an ad before the media: Skip ad is offered, and pressing it ends the break."""
    page.click(page.device_button("Ad Chromecast"))
    wait_for(lambda: page.visible("url-input"))
    page.type("url-input", "http://media.example/with-an-ad.mp4")
    page.type("title-input", "After the ad")
    page.click(page.by_id("url-form").find_element(By.CSS_SELECTOR, "button[value=play]"))
    button = page.by_id("skip-ad-button")
    offered = wait_for(lambda: button.is_displayed() and button.text.strip() == "Skip ad")
    ad_break = media_of(base, device).get("adBreak") or {}
    check("an ad break on the device offers Skip ad and says an ad plays",
          offered and ad_break.get("breakId") == "emulator-preroll"
          and page.text("media-state") == "Playing: ad break",
          f"{button.text!r} {page.text('media-state')!r} {ad_break}")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    page.screenshot("10b-ad-break")
    page.click(button)
    ended = wait_for(lambda: not button.is_displayed() and "adBreak" not in media_of(base, device))
    media = media_of(base, device)
    check("Skip ad ends the break: the media plays, the button is gone",
          ended and media.get("playerState") == "PLAYING" and media.get("title") == "After the ad", media)


def problem_steps(page, base, first):
    """A command the device refuses (skip ad with no ad playing): the page announces castd's detail."""
    button = page.by_id("skip-ad-button")
    check("Skip ad is not offered while no ad plays", not button.is_displayed())
    # Offered anyway (as a page that is behind would), the device's refusal is what the page shows.
    page.driver.execute_script("document.getElementById('skip-ad-button').hidden = false")
    page.click("skip-ad-button")
    try:
        api(base, "POST", device_path(first) + "/media/skipAd")
        detail = None
    except urllib.error.HTTPError as error:
        detail = json.load(error).get("detail")
    region = page.by_id("problems")
    shown = wait_for(lambda: detail and detail in region.text)
    check("a refused command shows castd's problem detail in an aria-live region",
          shown and region.get_attribute("aria-live") in ("assertive", "polite"), f"{region.text!r} vs {detail!r}")
    page.screenshot("12-problem")
    page.click(page.button("Dismiss"))
    check("the problem can be dismissed", wait_for(lambda: region.text == ""), region.text)


def reconnect_steps(page, lab, first):
    """castd restarts: the page says it reconnects, comes back with Last-Event-ID, and shows what changed
    meanwhile (a pause made through the other castd)."""
    page.driver.get_log("performance")  # only the requests from here on
    stop(lab.castd)
    check("castd gone: the page says it reconnects",
          wait_for(lambda: page.text("connection-state").startswith("Reconnecting")), page.text("connection-state"))
    # The other castd joins the session the first one started; its first command can come before it has the
    # media status and be refused (409 noMediaSession), so it is retried until the device takes it.
    paused = wait_for(lambda: api(lab.guarded, "POST", device_path(first) + "/media/pause", token=lab.token))
    check("meanwhile another castd pauses the device", paused)
    lab.castd, _ = lab.start_castd("castd-again", lab.base.removeprefix("http://"))
    back = wait_for(lambda: page.text("connection-state") == "Live" and page.text("media-state") == "Paused",
                    timeout=20)
    check("castd back: the page reconnects and shows the pause made meanwhile", back,
          f"{page.text('connection-state')!r} {page.text('media-state')!r}")
    resumed_from = [
        message["params"]["request"]["headers"].get("Last-Event-ID")
        for message in (json.loads(entry["message"])["message"] for entry in page.driver.get_log("performance"))
        if message["method"] == "Network.requestWillBeSent"
        and message["params"]["request"]["url"].endswith("/v1/events")
    ]
    check("the page reconnects with Last-Event-ID", resumed_from and all(resumed_from), resumed_from)


def names_listed(page):
    """The device names in the list's order, read at once (the list may change between WebDriver calls)."""
    return page.driver.execute_script(
        'return [...document.querySelectorAll("#device-list .device-name")].map((name) => name.textContent)')


def queue_titles(page):
    return page.driver.execute_script(
        'return [...document.querySelectorAll("#queue-list .queue-title")].map((title) => title.textContent)')


def api_queue(base, device_id):
    return api(base, "GET", device_path(device_id) + "/queue")


def queue_steps(page, base, first):
    """A queue of three URLs made in the page (play one, add two), a jump to the third, a move, a removal and a
    repeat mode."""
    form = page.by_id("url-form")
    for index, title in enumerate(["Queue One", "Queue Two", "Queue Three"]):
        page.type("url-input", f"http://media.example/queue-{index + 1}.mp4")
        page.type("title-input", title)
        page.click(form.find_element(By.CSS_SELECTOR, "button[value=play]" if index == 0 else "button[value=enqueue]"))
        wait_for(lambda: len(queue_titles(page)) == index + 1 and form.get_attribute("aria-busy") is None)
    titles = wait_for(lambda: queue_titles(page) == ["Queue One", "Queue Two", "Queue Three"] and queue_titles(page))
    check("the queue lists the three items cast from the page", titles, queue_titles(page))
    page.screenshot("04-queue")

    items = api_queue(base, first)["items"]
    third = items[-1]["itemId"] if len(items) == 3 else None
    page.click(page.button("Play Queue Three"))
    jumped = wait_for(lambda: api_queue(base, first).get("currentItemId") == third
                      and page.text("media-title") == "Queue Three"
                      and page.driver.find_element(By.CSS_SELECTOR, "#queue-list [aria-current=true] .queue-title")
                      .text == "Queue Three")
    check("jumping to item 3 makes it the current item (page and API)", jumped,
          f"{api_queue(base, first)} {page.text('media-title')!r}")

    page.click(page.button("Move Queue Three up"))
    order = lambda: [item.get("title") for item in api_queue(base, first)["items"]]  # noqa: E731
    moved = wait_for(lambda: order() == ["Queue One", "Queue Three", "Queue Two"]
                     and queue_titles(page) == ["Queue One", "Queue Three", "Queue Two"])
    check("moving an item up reorders the queue (page and API)", moved, f"{order()} {queue_titles(page)}")
    page.click(page.button("Remove Queue One"))
    removed = wait_for(lambda: order() == ["Queue Three", "Queue Two"]
                       and queue_titles(page) == ["Queue Three", "Queue Two"])
    check("removing an item (page and API)", removed, f"{order()} {queue_titles(page)}")
    Select(page.by_id("repeat-select")).select_by_value("REPEAT_ALL")
    check("the repeat mode reaches the device (API)",
          wait_for(lambda: media_of(base, first).get("repeatMode") == "REPEAT_ALL"), media_of(base, first))


def track_steps(page, base, first):
    """The local file with its sidecar subtitles: the track chooser lists them; off and on reach the device. Its
    known duration makes the seek bar usable: a seek lands near the target and the position then advances."""
    files = Select(page.by_id("file-select"))
    check("the file picker lists the media folder's video",
          wait_for(lambda: "sample.mp4" in [option.text for option in files.options]),
          [option.text for option in files.options])
    files.select_by_visible_text("sample.mp4")
    page.click(page.by_id("file-form").find_element(By.CSS_SELECTOR, "button[value=play]"))
    subtitles = Select(page.by_id("text-track-select"))
    listed = wait_for(lambda: page.visible("tracks-panel")
                      and [option.text for option in subtitles.options] == ["Off", "English"])
    check("the track chooser lists the file's subtitles", listed,
          [option.text for option in subtitles.options] if page.visible("tracks-panel") else "no tracks panel")
    tracks = media_of(base, first).get("tracks") or [{}]
    text_id = next((track["id"] for track in tracks if track.get("type") == "TEXT"), None)
    subtitles.select_by_visible_text("Off")
    check("subtitles off: no text track is active (API)",
          wait_for(lambda: text_id not in media_of(base, first)["activeTrackIds"]), media_of(base, first))
    subtitles.select_by_visible_text("English")
    check("choosing the subtitles makes them active (API)",
          wait_for(lambda: text_id in media_of(base, first)["activeTrackIds"]), media_of(base, first))
    page.screenshot("05-tracks")

    bar = page.by_id("seek-bar")
    check("the seek bar spans the file's duration", wait_for(lambda: bar.get_attribute("max") == "120"),
          bar.get_attribute("max"))
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", bar)
    page.driver.execute_script(SET_SLIDER_JS, bar, "80")
    landed = wait_for(lambda: 79 <= media_of(base, first)["position"] <= 90 and media_of(base, first)["position"])
    check("seeking with the bar moves the device near the target (API)", landed, media_of(base, first))
    elapsed = lambda: seconds(page.text("elapsed"))  # noqa: E731
    check("the page shows the new position", wait_for(lambda: 79 <= elapsed() <= 90), page.text("elapsed"))
    before = elapsed()
    check("the position advances between statuses", wait_for(lambda: elapsed() >= before + 2, timeout=6),
          f"{before} → {elapsed()}")
    page.screenshot("06-seek")


def seconds(text):
    minutes, secs = text.split(":")[-2:]
    return int(minutes) * 60 + int(secs)


def keyboard_steps(page):
    """Tab from the top of the page reaches the controls; every control has an accessible name; the focus shows."""
    driver = page.driver
    driver.execute_script("window.scrollTo(0, 0); document.activeElement?.blur()")
    page.by_id("devices-heading").click()  # a starting point that is not a control
    reached = []
    unfocused = []
    for _ in range(60):
        webdriver.ActionChains(driver).send_keys(Keys.TAB).perform()
        focused = driver.execute_script(FOCUSED_JS)
        if focused is None:
            continue  # past the last control, the focus leaves the page for a moment
        reached.append(focused[0])
        if focused[1] != "solid":
            unfocused.append(focused[0])
    wanted = ["play-button", "seek-bar", "volume-bar", "mute-button", "url-input", "text-track-select",
              "repeat-select", "mini-play-button"]
    missing = [control for control in wanted if control not in reached]
    check("Tab reaches the device list, cast form, controller, tracks, queue and mini controller",
          not missing and any("device" in str(name) for name in reached), f"missing {missing}; reached {reached}")
    check("the keyboard focus is visible (an outline on every focused control)", not unfocused,
          f"no outline on {sorted(set(unfocused))}")
    unnamed = driver.execute_script(UNNAMED_CONTROLS_JS)
    check("every visible control has an accessible name", unnamed == [], unnamed)
    driver.execute_script("document.activeElement?.blur()")  # screenshots without a focus ring


def phone_steps(page):
    """A 375 × 740 phone screen: no sideways scrolling, fingertip-sized controls; screenshots light and dark."""
    driver = page.driver
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 375, "height": 740, "deviceScaleFactor": 2, "mobile": True})
    try:
        driver.execute_script("window.scrollTo(0, 0)")
        wide = wait_for(lambda: driver.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth && window.innerWidth === 375"))
        check("phone width (375 px): no horizontal scrolling", wide, driver.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"))
        small = driver.execute_script(SMALL_CONTROLS_JS)
        check("phone width: every control is at least 44 × 44 px", small == [], small)
        page.screenshot("07-phone")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        page.screenshot("08-phone-dark")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    page.full_screenshot("09-desktop-dark-full-page", 1280)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    page.full_screenshot("10-phone-full-page", 375, mobile=True)
    page.full_screenshot("11-desktop-full-page", 1280)


def token_prompt(page, guarded, token):
    """A castd with tokens: the page asks for one, refuses a wrong one, and lists the devices with the right one
    (kept for the next visit)."""
    driver = page.driver
    driver.get(guarded + "/")
    asked = wait_for(lambda: page.visible("token-dialog") and page.text("connection-state") == "Token needed"
                     and driver.switch_to.active_element.get_attribute("id") == "token-input")
    check("a castd with tokens: the page asks for a token (focus in the prompt)", asked,
          page.text("connection-state"))
    page.screenshot("13-token-prompt")
    page.type("token-input", "not-the-token")
    page.by_id("token-input").send_keys(Keys.ENTER)
    refused = wait_for(lambda: page.visible("token-dialog") and "refused" in page.text("token-error"))
    check("a wrong token is refused and asked again", refused, page.text("token-error"))
    page.type("token-input", token)
    page.click(page.by_id("token-form").find_element(By.CSS_SELECTOR, "button[type=submit]"))
    names = wait_for(lambda: len(names_listed(page)) == 3 and page.text("connection-state") == "Live"
                     and names_listed(page))
    check("with the token, the devices appear", names and not page.visible("token-dialog"), names)
    page.screenshot("14-token-accepted")
    driver.refresh()
    kept = wait_for(lambda: len(names_listed(page)) == 3 and not page.visible("token-dialog"))
    check("the token is kept for the next visit", kept)


if __name__ == "__main__":
    os.makedirs(ARTEFACTS, exist_ok=True)
    try:
        main()
    except Exception as error:  # a walk that cannot run is a failure, not a skip
        check("the web remote walk runs", False, f"{type(error).__name__}: {error}")
    finally:
        stop_processes()
        # The processes' logs join the screenshots, for a failure to be looked into afterwards.
        for log in (name for name in os.listdir(WORK) if name.endswith(".log")):
            shutil.copy(os.path.join(WORK, log), ARTEFACTS)
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(summary())
