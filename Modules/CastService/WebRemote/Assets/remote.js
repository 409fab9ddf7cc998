"use strict";
// castd's web remote. The page is an ordinary client of castd's /v1 API (openapi.yaml): it holds no privileges
// of its own, sends the bearer token the user gives like curl would, and follows GET /v1/events for every change
// instead of polling. Plain DOM, no framework and no build step: index.html holds the markup, this file fills it.

const TOKEN_KEY = "castd.remote.token";
const DEVICE_KEY = "castd.remote.device";
// The event stream's reconnect delay starts at castd's `retry:` hint and doubles per failure up to this.
const MAX_RETRY_MS = 30000;
const SVG_NS = "http://www.w3.org/2000/svg";

const state = {
  token: readSetting(TOKEN_KEY) ?? "",
  /** id → { id, name, model, isGroup, status, statusAt }: statusAt is when the status arrived (performance.now). */
  devices: new Map(),
  selectedId: readSetting(DEVICE_KEY),
  /** The chosen device's queue as GET …/queue answered it, with the media it was read for. */
  queue: null,
  queueFor: "",
  queueRequests: 0,
  /** Whether GET /v1/devices answered once (until then the list is not known to be empty). */
  devicesListed: false,
  /** Sliders the user is moving: statuses that arrive meanwhile must not yank them back. */
  dragging: new Set(),
  eventsAbort: null,
  tokenWaiters: [],
};

const $ = (id) => document.getElementById(id);

// MARK: - Settings (localStorage may be unavailable, e.g. in some private modes: then nothing is remembered)

function readSetting(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeSetting(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Not remembered across visits; the page still works.
  }
}

// MARK: - The API

/** A failed request, carrying castd's RFC 9457 problem document (`detail` says what went wrong). */
class Problem extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || `castd answered ${problem.status}`);
    this.status = problem.status;
    this.code = problem.code;
  }
}

async function problemFrom(response) {
  try {
    return new Problem(await response.json());
  } catch {
    return new Problem({ status: response.status, title: response.statusText || `HTTP ${response.status}` });
  }
}

function authorizationHeaders() {
  return state.token ? { Authorization: `Bearer ${state.token}` } : {};
}

/** Sends one API request and answers its JSON; throws a Problem, and asks for a token on a 401. */
async function request(method, path, body) {
  // Errors come as application/problem+json: a client that accepts only JSON gets no problem document.
  const headers = { Accept: "application/json, application/problem+json", ...authorizationHeaders() };
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new Problem({ status: 0, detail: "castd does not answer: is it running?" });
  }
  if (response.ok) return response.json();
  const problem = await problemFrom(response);
  if (response.status === 401) requestToken();
  throw problem;
}

function devicePath(id) {
  return `/v1/devices/${encodeURIComponent(id)}`;
}

/** A command for the chosen device. Commands answer the device's state: shown at once, not at the next event. */
async function command(method, path, body) {
  const answer = await request(method, devicePath(state.selectedId) + path, body);
  updateStatus(answer.device.id, answer.status);
  render();
  return answer;
}

// MARK: - Token

/** Shows the token prompt; the event stream waits in tokenEntered() until the user gives one. */
function requestToken() {
  setConnection("token", "Token needed");
  $("token-open").hidden = false;
  openTokenDialog(state.token ? "castd refused this token; check it and try again." : "");
}

function openTokenDialog(message) {
  const dialog = $("token-dialog");
  setText($("token-error"), message);
  $("token-input").value = state.token;
  if (!dialog.open) dialog.showModal();
  $("token-input").focus();
}

function tokenEntered() {
  return new Promise((resolve) => state.tokenWaiters.push(resolve));
}

function submitToken(event) {
  event.preventDefault();
  const token = $("token-input").value.trim();
  if (!token) {
    setText($("token-error"), "Enter the token.");
    return;
  }
  state.token = token;
  writeSetting(TOKEN_KEY, token);
  $("token-dialog").close();
  $("token-open").hidden = true;
  // Reconnect the event stream with the new token (it loads the devices once it is in).
  state.eventsAbort?.abort();
  state.tokenWaiters.splice(0).forEach((resolve) => resolve());
}

// MARK: - Events (Server-Sent Events read with fetch, because EventSource cannot send an Authorization header)

/**
 * Parses text/event-stream from text chunks as they arrive and calls `onEvent(name, data)` per complete event.
 * `lastEventId` survives reconnections: it is what the next request's Last-Event-ID resumes from.
 */
class EventStreamParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.lastEventId = null;
    this.retry = 1000;
    this.restart();
  }

  /** Forgets a half-received event: a new connection starts from a clean line. */
  restart() {
    this.buffer = "";
    this.name = "";
    this.data = [];
  }

  push(chunk) {
    this.buffer += chunk;
    // A "\r" at the very end may be the first half of "\r\n": keep it until the next chunk tells.
    const complete = this.buffer.endsWith("\r") ? this.buffer.slice(0, -1) : this.buffer;
    const lines = complete.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() + this.buffer.slice(complete.length);
    for (const line of lines) this.readLine(line);
  }

  readLine(line) {
    if (line === "") {
      if (this.data.length > 0) this.onEvent(this.name || "message", this.data.join("\n"));
      this.name = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return; // a comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.name = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.lastEventId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
  }
}

/** Follows /v1/events for the page's life: reconnects with Last-Event-ID after a backoff, waits for a token. */
async function followEvents() {
  const parser = new EventStreamParser(handleServerEvent);
  let failures = 0;
  for (;;) {
    const abort = new AbortController();
    state.eventsAbort = abort;
    try {
      const headers = { Accept: "text/event-stream", ...authorizationHeaders() };
      if (parser.lastEventId !== null) headers["Last-Event-ID"] = parser.lastEventId;
      const response = await fetch("/v1/events", { headers, cache: "no-store", signal: abort.signal });
      if (response.status === 401) {
        requestToken();
        await tokenEntered();
        continue;
      }
      if (!response.ok) throw await problemFrom(response);
      failures = 0;
      setConnection("live", "Live");
      // The lists first, for what changed while the page was not listening; the events that arrive meanwhile
      // wait in the stream and are applied after it, in order.
      await loadSnapshot();
      parser.restart();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
    } catch {
      if (abort.signal.aborted) continue; // a new token: reconnect at once
    }
    failures += 1;
    const delay = Math.min(parser.retry * 2 ** (failures - 1), MAX_RETRY_MS);
    setConnection("offline", `Reconnecting in ${Math.ceil(delay / 1000)} s…`);
    await new Promise((resolve) => setTimeout(resolve, delay));
    setConnection("connecting", "Connecting…");
  }
}

function handleServerEvent(name, data) {
  let payload;
  try {
    payload = JSON.parse(data);
  } catch {
    return; // not an event this page knows
  }
  switch (name) {
    case "device-added":
    case "device-updated":
      upsertDevice({ id: payload.device, name: payload.name });
      // The event does not carry the model or group flag: the list has them.
      if (name === "device-added") loadDevices().catch(showProblem("Could not list the devices"));
      break;
    case "device-removed":
      state.devices.delete(payload.device);
      if (payload.device === state.selectedId) selectDevice(null);
      break;
    case "status":
      updateStatus(payload.device, payload.status);
      break;
    default:
      return;
  }
  render();
}

function setConnection(kind, text) {
  const element = $("connection-state");
  element.dataset.state = kind;
  setText(element, text);
}

// MARK: - State

async function loadSnapshot() {
  const failed = showProblem("Could not read castd's state");
  await loadDevices().catch(failed);
  await loadMediaFiles().catch(failed);
  // Reading the chosen device makes castd follow it (and answers its status) if it did not yet.
  if (state.selectedId) await refreshSelected().catch(failed);
}

async function loadDevices() {
  const { devices } = await request("GET", "/v1/devices");
  const previous = state.devices;
  state.devices = new Map();
  for (const device of devices) {
    const known = previous.get(device.id);
    // A device castd does not follow yet comes without a status: keep the last one an event gave.
    const status = device.status ?? known?.status;
    const statusAt = device.status ? performance.now() : known?.statusAt;
    state.devices.set(device.id, { ...device, status, statusAt });
  }
  state.devicesListed = true;
  if (state.selectedId && !state.devices.has(state.selectedId)) selectDevice(null);
  render();
}

function upsertDevice(fields) {
  const device = state.devices.get(fields.id) ?? { id: fields.id, name: fields.id, isGroup: false };
  state.devices.set(fields.id, Object.assign(device, fields));
  return device;
}

function updateStatus(id, status) {
  const device = upsertDevice({ id });
  device.status = status;
  device.statusAt = performance.now();
  if (id === state.selectedId) refreshQueue();
}

function selectedDevice() {
  return state.devices.get(state.selectedId) ?? null;
}

/** The media the device plays or is about to, or null (nothing loaded, or it ended). */
function activeMedia(device) {
  const media = device?.status?.media;
  return media && media.playerState !== "IDLE" ? media : null;
}

function selectDevice(id) {
  state.selectedId = id;
  writeSetting(DEVICE_KEY, id);
  state.queue = null;
  state.queueFor = "";
  render();
}

async function refreshSelected() {
  const answer = await request("GET", devicePath(state.selectedId));
  updateStatus(answer.device.id, answer.status);
  render();
}

/**
 * Reads the queue again when the media or its current item changed (or when `force`d after an edit). Media
 * still loading is left until it plays or pauses: a queue asked for in between can be refused by the receiver.
 */
async function refreshQueue(force = false) {
  const device = selectedDevice();
  const media = activeMedia(device);
  if (media && !["PLAYING", "PAUSED"].includes(media.playerState)) return;
  const key = media ? `${device.id} ${media.mediaSessionId} ${media.currentItemId}` : "";
  if (key === state.queueFor && !force) return;
  state.queueFor = key;
  const ticket = ++state.queueRequests;
  let queue = null;
  if (media) {
    try {
      queue = await request("GET", `${devicePath(device.id)}/queue`);
    } catch (error) {
      if (error.status !== 409) showProblem("Could not read the queue")(error); // 409: no queue (yet)
    }
  }
  if (ticket !== state.queueRequests) return; // a later read answers for the newer state
  state.queue = queue;
  renderQueue();
}

async function loadMediaFiles() {
  const { files, truncated } = await request("GET", "/v1/media-files");
  const folders = new Set(files.map((file) => file.folder));
  const options = files.map((file) => ({
    value: file.file,
    label: folders.size > 1 ? `${file.name} (${file.folder})` : file.name,
  }));
  fillSelect($("file-select"), options, $("file-select").value || options[0]?.value || "");
  const count = `${files.length} file${files.length === 1 ? "" : "s"}`;
  setText(
    $("files-hint"),
    files.length === 0
      ? "castd has no media files to offer (castd --media-folder names a folder)."
      : `${count} from castd's media folders${truncated ? " (not all are listed)" : ""}.`,
  );
}

// MARK: - Rendering

function render() {
  renderDevices();
  const device = selectedDevice();
  for (const panel of document.querySelectorAll("[data-needs-device]")) panel.hidden = !device;
  renderPlayer(device);
  renderMiniController(device);
  renderTracks(activeMedia(device));
  renderQueue();
  drawPlayhead();
}

function renderDevices() {
  const devices = [...state.devices.values()].sort((a, b) => a.name.localeCompare(b.name));
  syncList($("device-list"), devices, (device) => device.id, createDeviceItem, updateDeviceItem);
  const hint = $("devices-hint");
  hint.hidden = devices.length > 0 && Boolean(state.selectedId);
  if (!state.devicesListed) setText(hint, "Looking for devices…");
  else if (devices.length === 0) setText(hint, "No devices yet: castd lists them as it finds them.");
  else setText(hint, "Choose a device to control it.");
}

function createDeviceItem(device) {
  const button = element("button", { type: "button", className: "device" }, [
    element("span", { className: "device-name" }),
    element("span", { className: "device-details" }, [
      element("span", { className: "device-model" }),
      element("span", { className: "badge", textContent: "Group" }),
    ]),
    element("span", { className: "device-activity" }),
  ]);
  button.addEventListener("click", () => {
    selectDevice(device.id);
    refreshSelected().catch(showProblem(`Could not reach ${device.name}`));
  });
  return element("li", {}, [button]);
}

function updateDeviceItem(item, device) {
  const button = item.firstChild;
  button.setAttribute("aria-pressed", String(device.id === state.selectedId));
  setText(button.querySelector(".device-name"), device.name);
  setText(button.querySelector(".device-model"), device.model ?? "Cast device");
  button.querySelector(".badge").hidden = !device.isGroup;
  setText(button.querySelector(".device-activity"), describeActivity(device.status));
  button.classList.toggle("is-playing", activeMedia(device)?.playerState === "PLAYING");
}

function describeActivity(status) {
  if (!status) return "No status yet";
  const media = status.media;
  if (media && media.playerState !== "IDLE") return `${stateWord(media.playerState)}: ${mediaTitle(media)}`;
  if (status.app) return status.app.statusText || status.app.name;
  return "Idle";
}

function stateWord(playerState) {
  return { PLAYING: "Playing", PAUSED: "Paused", BUFFERING: "Buffering", LOADING: "Loading" }[playerState] ?? "Idle";
}

/** The media's title, else its file name from the URL. */
function mediaTitle(media) {
  if (media.title) return media.title;
  const name = (media.contentId ?? "").split(/[?#]/)[0].split("/").pop();
  if (!name) return "Untitled";
  try {
    return decodeURIComponent(name);
  } catch {
    return name; // not percent-encoded text
  }
}

function renderPlayer(device) {
  if (!device) return;
  const status = device.status;
  const media = activeMedia(device);
  setText($("player-device"), `on ${device.name}`);
  $("player-idle").hidden = Boolean(media);
  setText($("player-idle"), idleText(device));
  $("media-controls").hidden = !media;
  if (media) {
    setText($("media-title"), mediaTitle(media));
    setText($("media-subtitle"), media.subtitle ?? "");
    const word = stateWord(media.playerState);
    setText($("media-state"), media.adBreak ? `${word}: ad break` : word);
    $("media-state").dataset.state = media.playerState;
    setPlayButton($("play-button"), media);
    setSelectValue($("rate-select"), String(media.playbackRate));
    renderAdBreak(media.adBreak);
  }
  $("volume-controls").hidden = !status;
  if (status) {
    const volume = $("volume-bar");
    const known = typeof status.volume === "number";
    if (!state.dragging.has(volume) && known) volume.value = String(Math.round(status.volume * 100));
    setText($("volume-value"), known || state.dragging.has(volume) ? `${volume.value}%` : "–");
    const mute = $("mute-button");
    mute.setAttribute("aria-pressed", String(status.muted));
    setIcon(mute, status.muted ? "muted" : "volume");
  }
  $("app-controls").hidden = !status?.app;
  setText($("app-name"), status?.app ? `App: ${status.app.name}` : "");
}

/** Skip ad is offered only while an ad plays, with the wait until the receiver takes it. */
function renderAdBreak(adBreak) {
  const button = $("skip-ad-button");
  button.hidden = !adBreak;
  if (!adBreak) return;
  const wait = adBreak.skippable ? 0 : Math.ceil(adBreak.skippableIn ?? 0);
  setText(button, adBreak.skippable ? "Skip ad" : adBreak.skippableIn === undefined ? "Ad" : `Skip ad in ${wait} s`);
}

function idleText(device) {
  const status = device.status;
  if (!status) return `Connecting to ${device.name}…`;
  const idleReason = status.media?.idleReason;
  if (idleReason === "FINISHED") return "Playback finished.";
  if (idleReason === "ERROR") return "The device could not play the media.";
  return "Nothing is playing. Cast a URL or a local file to start.";
}

/** A play/pause toggle shows what pressing it does. */
function setPlayButton(button, media) {
  const playing = media.playerState === "PLAYING" || media.playerState === "BUFFERING";
  button.setAttribute("aria-label", playing ? "Pause" : "Play");
  setIcon(button, playing ? "pause" : "play");
}

function renderMiniController(device) {
  const media = activeMedia(device);
  $("mini-controller").hidden = !media;
  // Room under the page so that the fixed bar never covers its last controls.
  document.body.classList.toggle("has-mini-controller", Boolean(media));
  if (!media) return;
  setText($("mini-title"), mediaTitle(media));
  setText($("mini-state"), `${stateWord(media.playerState)} on ${device.name}`);
  setPlayButton($("mini-play-button"), media);
}

/** Where the media is now: the status's position, advanced by the time since it arrived at its playback rate. */
function playheadPosition(device, media) {
  let position = media.position;
  if (media.playerState === "PLAYING") position += ((performance.now() - device.statusAt) / 1000) * media.playbackRate;
  return media.duration ? Math.min(position, media.duration) : position;
}

/** Moves the seek bar and the times between statuses; runs on a timer, draws only, never asks castd. */
function drawPlayhead() {
  const device = selectedDevice();
  const media = activeMedia(device);
  if (!media) return;
  const position = playheadPosition(device, media);
  const duration = media.duration ?? 0;
  const seekable = !media.live && duration > 0;
  const bar = $("seek-bar");
  bar.disabled = !seekable;
  if (!state.dragging.has(bar)) {
    bar.max = String(Math.ceil(duration));
    bar.value = String(Math.floor(position));
    setText($("elapsed"), formatTime(position));
  }
  setText($("duration"), media.live ? "Live" : duration > 0 ? formatTime(duration) : "--:--");
  const valueText = seekable ? `${formatTime(bar.value)} of ${formatTime(duration)}` : "not seekable";
  if (bar.getAttribute("aria-valuetext") !== valueText) bar.setAttribute("aria-valuetext", valueText);
  $("mini-progress-fill").style.transform = `scaleX(${seekable ? Math.min(1, position / duration) : 0})`;
}

function formatTime(seconds) {
  const total = Math.max(0, Math.floor(Number(seconds)));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const secs = String(total % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${secs}` : `${minutes}:${secs}`;
}

function renderTracks(media) {
  const tracks = media?.tracks ?? [];
  const text = tracks.filter((track) => track.type === "TEXT");
  const audio = tracks.filter((track) => track.type === "AUDIO");
  $("tracks-panel").hidden = text.length === 0 && audio.length < 2;
  $("text-track-field").hidden = text.length === 0;
  $("audio-track-field").hidden = audio.length < 2; // a single audio track leaves nothing to choose
  const active = new Set(media?.activeTrackIds ?? []);
  const textOptions = [{ value: "off", label: "Off" }, ...text.map(trackOption)];
  fillSelect($("text-track-select"), textOptions, String(text.find((track) => active.has(track.id))?.id ?? "off"));
  fillSelect($("audio-track-select"), audio.map(trackOption), String(audio.find((t) => active.has(t.id))?.id ?? ""));
}

const languageNames = new Intl.DisplayNames([navigator.language, "en"], { type: "language", fallback: "none" });

function trackOption(track) {
  let language;
  try {
    language = track.language ? languageNames.of(track.language) : undefined;
  } catch {
    language = track.language; // not a well-formed language tag
  }
  const name = track.name && track.name !== track.language ? track.name : "";
  const label = name && language ? `${name} (${language})` : name || language || `Track ${track.id}`;
  return { value: String(track.id), label };
}

function renderQueue() {
  const media = activeMedia(selectedDevice());
  $("queue-panel").hidden = !media;
  if (!media) return;
  setSelectValue($("repeat-select"), media.repeatMode ?? state.queue?.repeatMode ?? "REPEAT_OFF");
  const items = state.queue?.items ?? [];
  const current = media.currentItemId ?? state.queue?.currentItemId;
  syncList($("queue-list"), items, (item) => item.itemId, createQueueItem, (row, item, index) =>
    updateQueueItem(row, item, index, items.length, item.itemId === current),
  );
  $("queue-hint").hidden = items.length > 0;
}

function createQueueItem(item) {
  const id = item.itemId;
  const play = element("button", { type: "button", className: "queue-play" }, [
    element("span", { className: "queue-title" }),
    element("span", { className: "queue-meta" }),
  ]);
  play.addEventListener("click", act("Could not play the item", () => queueCommand("POST", `/queue/items/${id}/play`)));
  const up = iconButton("up", "queue-up");
  up.addEventListener("click", act("Could not move the item", () => moveQueueItem(id, -1)));
  const down = iconButton("down", "queue-down");
  down.addEventListener("click", act("Could not move the item", () => moveQueueItem(id, 1)));
  const remove = iconButton("remove", "queue-remove");
  remove.addEventListener(
    "click",
    act("Could not remove the item", () => queueCommand("DELETE", `/queue/items/${id}`)),
  );
  return element("li", { className: "queue-item" }, [play, up, down, remove]);
}

function updateQueueItem(row, item, index, count, isCurrent) {
  const title = item.title || mediaTitle({ contentId: item.contentId });
  if (isCurrent) row.setAttribute("aria-current", "true");
  else row.removeAttribute("aria-current");
  setText(row.querySelector(".queue-title"), title);
  const meta = [isCurrent ? "Now playing" : "", item.duration ? formatTime(item.duration) : ""];
  setText(row.querySelector(".queue-meta"), meta.filter(Boolean).join(" · "));
  row.querySelector(".queue-play").setAttribute("aria-label", `Play ${title}${isCurrent ? " (now playing)" : ""}`);
  const up = row.querySelector(".queue-up");
  up.setAttribute("aria-label", `Move ${title} up`);
  up.disabled = index === 0;
  const down = row.querySelector(".queue-down");
  down.setAttribute("aria-label", `Move ${title} down`);
  down.disabled = index === count - 1;
  row.querySelector(".queue-remove").setAttribute("aria-label", `Remove ${title}`);
}

// MARK: - DOM helpers

/** Makes an element: `aria-*` and `data-*` keys become attributes, other keys are assigned as properties. */
function element(tag, properties = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(properties)) {
    if (key.startsWith("aria-") || key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  node.append(...children);
  return node;
}

function iconButton(iconName, className) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const use = document.createElementNS(SVG_NS, "use");
  use.setAttribute("href", `#icon-${iconName}`);
  svg.append(use);
  return element("button", { type: "button", className: `icon-button ${className}` }, [svg]);
}

function setIcon(button, iconName) {
  button.querySelector("use").setAttribute("href", `#icon-${iconName}`);
}

/**
 * Updates a list in place, item by key: kept items stay the same elements (so focus stays where it is), new
 * ones are made, gone ones removed, and the order follows `values`.
 */
function syncList(list, values, keyOf, create, update) {
  const focused = document.activeElement;
  const existing = new Map([...list.children].map((item) => [item.dataset.key, item]));
  values.forEach((value, index) => {
    const key = String(keyOf(value));
    let item = existing.get(key);
    if (item) {
      existing.delete(key);
    } else {
      item = create(value);
      item.dataset.key = key;
    }
    update(item, value, index);
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] ?? null);
  });
  for (const item of existing.values()) item.remove();
  // Moving an element takes the focus from it: give it back (a queue item moved by keyboard keeps it).
  if (focused && focused !== document.activeElement && focused.isConnected) focused.focus();
}

/** Replaces a select's options only when they changed, so a list the user has open is left alone. */
function fillSelect(select, options, value) {
  const signature = JSON.stringify(options);
  if (select.dataset.options !== signature) {
    select.replaceChildren(...options.map((option) => new Option(option.label, option.value)));
    select.dataset.options = signature;
  }
  setSelectValue(select, value);
}

/** Sets text only when it changed: live regions then announce changes, not every redraw. */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function setSelectValue(select, value) {
  if (select.value !== value) select.value = value; // a value with no option leaves it unselected
}

// MARK: - Commands

/** Wraps a user action: a failure is shown with castd's explanation instead of being lost in the console. */
function act(what, action) {
  return async (event) => {
    clearProblems();
    try {
      await action(event);
    } catch (error) {
      showProblem(what)(error);
    }
  };
}

/** A handler that shows an error in the page's alert region, prefixed with what was being done. */
function showProblem(what) {
  return (error) => {
    const dismiss = element("button", { type: "button", className: "small", textContent: "Dismiss" });
    dismiss.addEventListener("click", clearProblems);
    const text = element("span", { textContent: `${what}: ${error.message}` });
    $("problems").replaceChildren(element("p", { className: "problem" }, [text, dismiss]));
  };
}

function clearProblems() {
  $("problems").replaceChildren();
}

function togglePlayback() {
  const media = activeMedia(selectedDevice());
  const playing = media?.playerState === "PLAYING" || media?.playerState === "BUFFERING";
  return command("POST", `/media/${playing ? "pause" : "play"}`);
}

async function queueCommand(method, path, body) {
  await command(method, path, body);
  await refreshQueue(true);
}

function moveQueueItem(itemId, offset) {
  const items = state.queue?.items ?? [];
  const target = items.findIndex((item) => item.itemId === itemId) + offset;
  if (target < 0 || target >= items.length) return undefined;
  // `before` names the item it will precede: the one it passes going up, the one after that going down (none:
  // the end of the queue).
  const before = offset < 0 ? items[target].itemId : items[target + 1]?.itemId;
  return queueCommand("POST", `/queue/items/${itemId}/move`, before === undefined ? {} : { before });
}

/** Plays a source now, or appends it to the queue (which, with nothing playing, is playing it now). */
async function castSource(source, enqueue) {
  if (enqueue && activeMedia(selectedDevice())) await queueCommand("POST", "/queue/items", { items: [source] });
  else await command("POST", "/media", source);
}

/** A cast form's submit: the button pressed says play or enqueue; the form is busy until castd answered. */
function castForm(form, makeSource) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (form.getAttribute("aria-busy") === "true") return;
    const enqueue = event.submitter?.value === "enqueue";
    form.setAttribute("aria-busy", "true");
    await act(enqueue ? "Could not add to the queue" : "Could not cast", async () => {
      const source = makeSource();
      if (source) await castSource(source, enqueue);
    })();
    form.removeAttribute("aria-busy");
  });
}

function urlSource() {
  const url = $("url-input").value.trim();
  if (!url) {
    $("url-input").focus();
    throw new Error("enter the URL of a video, audio or image file");
  }
  const title = $("title-input").value.trim();
  return title ? { url, title } : { url };
}

function fileSource() {
  const file = $("file-select").value;
  if (!file) throw new Error("castd lists no local file to cast");
  return { file };
}

function chooseTracks() {
  const media = activeMedia(selectedDevice());
  const kinds = new Map((media?.tracks ?? []).map((track) => [track.id, track.type]));
  // Keep the other active tracks (video) and replace the text and audio choices.
  const ids = (media?.activeTrackIds ?? []).filter((id) => kinds.get(id) !== "TEXT" && kinds.get(id) !== "AUDIO");
  const text = $("text-track-select").value;
  if (text && text !== "off") ids.push(Number(text));
  const audio = $("audio-track-select").value;
  if (audio) ids.push(Number(audio));
  return command("PUT", "/tracks", { activeTrackIds: ids });
}

/** Follows a slider: while it moves, statuses leave it alone; its `change` sends the value once. */
function bindSlider(slider, onInput, onChange) {
  slider.addEventListener("input", () => {
    state.dragging.add(slider);
    onInput();
  });
  slider.addEventListener("change", async (event) => {
    try {
      await onChange(event);
    } finally {
      state.dragging.delete(slider);
      render();
    }
  });
}

function bindControls() {
  $("token-form").addEventListener("submit", submitToken);
  $("token-cancel").addEventListener("click", () => $("token-dialog").close());
  $("token-open").addEventListener("click", () => openTokenDialog(""));

  castForm($("url-form"), urlSource);
  castForm($("file-form"), fileSource);
  $("files-refresh").addEventListener("click", act("Could not list the files", loadMediaFiles));

  $("play-button").addEventListener("click", act("Could not play or pause", togglePlayback));
  $("mini-play-button").addEventListener("click", act("Could not play or pause", togglePlayback));
  $("previous-button").addEventListener("click", act("Could not go back", () => command("POST", "/media/previous")));
  $("next-button").addEventListener("click", act("Could not skip", () => command("POST", "/media/next")));
  $("back-button").addEventListener(
    "click",
    act("Could not seek", () => command("POST", "/media/seek?position=-10&relative=true")),
  );
  $("forward-button").addEventListener(
    "click",
    act("Could not seek", () => command("POST", "/media/seek?position=30&relative=true")),
  );
  $("stop-button").addEventListener("click", act("Could not stop", () => command("POST", "/media/stop")));
  $("skip-ad-button").addEventListener("click", act("Could not skip the ad", () => command("POST", "/media/skipAd")));
  $("rate-select").addEventListener(
    "change",
    act("Could not change the speed", (event) => command("POST", `/media/rate?rate=${event.target.value}`)),
  );
  $("stop-app-button").addEventListener("click", act("Could not stop the app", () => command("DELETE", "/app")));

  const seek = $("seek-bar");
  bindSlider(
    seek,
    () => setText($("elapsed"), formatTime(seek.value)),
    act("Could not seek", () => command("POST", `/media/seek?position=${Number(seek.value)}`)),
  );
  const volume = $("volume-bar");
  bindSlider(
    volume,
    () => setText($("volume-value"), `${volume.value}%`),
    act("Could not change the volume", () => command("PUT", "/volume", { level: Number(volume.value) / 100 })),
  );
  $("mute-button").addEventListener(
    "click",
    act("Could not change the volume", () =>
      command("PUT", "/volume", { muted: !(selectedDevice()?.status?.muted ?? false) }),
    ),
  );

  $("text-track-select").addEventListener("change", act("Could not change the subtitles", chooseTracks));
  $("audio-track-select").addEventListener("change", act("Could not change the audio track", chooseTracks));
  $("repeat-select").addEventListener(
    "change",
    act("Could not change the repeat mode", (event) => command("PUT", "/queue/repeat", { mode: event.target.value })),
  );

  // The mini controller's title opens the full controller: scroll to it and move the focus there.
  $("mini-open").addEventListener("click", () => {
    const heading = $("player-heading");
    const still = matchMedia("(prefers-reduced-motion: reduce)").matches;
    heading.scrollIntoView({ behavior: still ? "auto" : "smooth", block: "start" });
    heading.focus({ preventScroll: true });
  });
}

function start() {
  bindControls();
  render();
  // Between statuses the position advances locally; this only redraws.
  setInterval(drawPlayhead, 500);
  followEvents();
}

start();
