// Moon River play page: draws the server's table SVG, offers the legal moves as clicks,
// lets agents move one by one, and steps through replays. The server checks every move.
// Text from the server (names, moves, errors) goes into the page with textContent only;
// the table SVG is the server's own drawing, its text escaped there.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let state = null;      // last state from the server
let picked = [];       // keys clicked so far for the move being chosen
let timer = null;      // pending agent step
let busy = false;      // a request is in flight
let paused = false;
let version = 0;       // renders so far (tests wait on it)
const THINKING_POLL = 300;  // ms between looks at a game whose agent thinks elsewhere
const MAX_SEED = 2n ** 63n - 1n;  // the server's largest seed

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(url, init);
  let data = null;
  try { data = await response.json(); } catch (e) { data = { error: response.statusText }; }
  if (!response.ok) {
    const error = new Error(data.error || response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

function shownIn(id, message) {
  // an error line (id "error" or "form-error"): message shown, or hidden when empty
  $(id).hidden = !message;
  $(id).textContent = message || "";
}

function speed() {
  return Number($("speed").value);
}

function autoForced() {
  return $("auto-forced").checked;
}

function label(s, p) {
  // "P1 (greedy)", or "P1" when the player's name is not known
  return s.names[p] ? `P${p} (${s.names[p]})` : `P${p}`;
}

function element(tag, text, attributes) {
  const el = document.createElement(tag);
  if (text !== undefined) el.textContent = String(text);
  for (const [name, value] of Object.entries(attributes || {})) el.setAttribute(name, value);
  return el;
}

// ------------------------------------------------------------------ choosing a move
function candidates() {
  // legal actions whose click paths start with what was picked: [{id, path}]
  const out = [];
  for (const move of state.legal) {
    for (const path of move.paths) {
      if (picked.every((key, i) => path[i] === key)) out.push({ id: move.id, path });
    }
  }
  return out;
}

function nextKeys() {
  const keys = new Set();
  for (const c of candidates()) if (c.path.length > picked.length) keys.add(c.path[picked.length]);
  return keys;
}

function decorate() {
  const board = $("board");
  const last = new Set(state.last ? state.last.keys : []);
  const next = state.human_turn ? nextKeys() : new Set();
  for (const el of board.querySelectorAll("[data-key]")) {
    const key = el.dataset.key;
    el.classList.toggle("can", next.has(key));
    el.classList.toggle("picked", picked.includes(key));
    el.classList.toggle("last", last.has(key) && !next.has(key) && !picked.includes(key));
  }
  const buttons = $("buttons");
  buttons.replaceChildren();
  for (const key of next) {
    if (!key.startsWith("btn:")) continue;
    const b = element("button", state.buttons[key] || key,
                      { type: "button", "data-key": key, class: "move-button" });
    b.addEventListener("click", () => choose(key));
    buttons.appendChild(b);
  }
  $("cancel").hidden = picked.length === 0;
  document.body.dataset.picks = String(picked.length);
  let hint = "";
  if (state.human_turn) {
    const what = { hand: "a plot of a reserve", cell: "a ranch cell", col: "a column plot",
                   saloon: "a saloon partner", bonus: "a bonus tile face", btn: "a blue button" };
    const kinds = [...new Set([...next].map((k) => what[k.split(":")[0]]))];
    const onBoard = [...next].some((k) => !k.startsWith("btn:"));
    hint = (picked.length ? "next, click " : "your move: click ") + kinds.join(" or ") +
      (onBoard ? " (outlined in blue on the table)" : "");
  } else if (state.kind === "game" && !state.over) {
    hint = `${label(state, state.current_player)} is deciding` +
      (paused ? " (agents paused)" : "...");
  }
  $("hint").textContent = hint;
}

async function choose(key) {
  if (!state || !state.human_turn || busy) return;
  if (!nextKeys().has(key)) return;
  picked.push(key);
  const done = candidates().filter((c) => c.path.length === picked.length);
  if (done.length === 0) { decorate(); return; }
  await submit(done[0].id);
}

async function submit(id) {
  if (!state || !state.human_turn || busy) return;
  picked = [];
  busy = true;
  try {
    const next = await api("POST", `/api/games/${state.id}/actions`,
                           { action: id, decision: state.decision });
    shownIn("error", "");
    render(next);
  } catch (e) {
    shownIn("error", e.message);
    if (e.status === 409) await reload(() => decorate());
    else decorate();
  } finally {
    busy = false;
  }
}

// ------------------------------------------------------------------ drawing
function endScreen(s) {
  const end = $("end");
  if (!s.over) { end.hidden = true; end.replaceChildren(); return; }
  const heads = ["player", "territories", "resources", "partners", "scenario", "total",
                 "largest territory", "cows"];
  const table = element("table");
  const head = element("tr");
  for (const h of heads) head.appendChild(element("th", h));
  table.appendChild(head);
  s.scores.forEach((sc, p) => {
    const row = element("tr", undefined, { "data-player": String(p) });
    if (s.winners.includes(p)) row.className = "winner";
    row.appendChild(element("th", label(s, p)));
    for (const key of ["territories", "resources", "partners", "scenario"]) {
      row.appendChild(element("td", sc[key]));
    }
    row.appendChild(element("td", sc.total, { class: "total", "data-player": String(p) }));
    row.appendChild(element("td", sc.largest_territory));
    row.appendChild(element("td", sc.cows));
    table.appendChild(row);
  });
  const winners = s.winners.map((p) => label(s, p)).join(", ");
  end.replaceChildren(element("h2", "Game over"),
    element("p", `Winner${s.winners.length > 1 ? "s" : ""}: ${winners}`, { id: "winners" }),
    table);
  end.hidden = false;
}

function render(next) {
  state = next;
  $("status").textContent = state.status;
  $("board").innerHTML = state.svg;
  const last = state.last;
  $("last").textContent = last ? `last move: ${label(state, last.player)} - ${last.text}` : "";
  const list = $("move-list");
  list.replaceChildren();
  for (const move of state.legal) {
    const link = element("a", move.text, { href: "#" });
    link.addEventListener("click", (ev) => { ev.preventDefault(); submit(move.id); });
    list.appendChild(element("li")).appendChild(link);
  }
  $("moves").hidden = !state.human_turn;
  endScreen(state);
  decorate();
  const forced = forcedMove();
  document.body.dataset.phase = state.phase;
  document.body.dataset.over = String(state.over);
  // a forced move about to be played for the player is not a decision to wait for
  document.body.dataset.humanTurn = String(state.human_turn && forced === null);
  document.body.dataset.decision = String(state.decision ?? "");
  document.body.dataset.thinking = String(Boolean(state.thinking));
  document.body.dataset.version = String(++version);
  if (state.kind === "replay") {
    $("step").textContent = `decision ${state.step} / ${state.steps}`;
    document.body.dataset.step = String(state.step);
  } else {
    schedule();
  }
}

function forcedMove() {
  // the single legal move of a human decision, when the page plays forced moves itself
  if (state.kind !== "game" || !state.human_turn || state.legal.length !== 1) return null;
  return autoForced() ? state.legal[0].id : null;
}

function schedule() {
  clearTimeout(timer);
  if (!state || state.kind !== "game" || state.over) return;
  const forced = forcedMove();
  if (forced !== null) {
    const at = state.decision;
    timer = setTimeout(() => { if (state.decision === at) submit(forced); }, speed());
    return;
  }
  if (state.human_turn || paused) return;
  // an agent already thinking (asked by another tab): look again a little later
  timer = setTimeout(state.thinking ? refresh : advance, Math.max(speed(),
                                                                   state.thinking ? THINKING_POLL : 0));
}

async function reload(failed) {
  // the table as it is now (a 409: the game moved on in another tab, or another player's)
  try {
    render(await api("GET", `/api/games/${state.id}`));
  } catch (e) {
    failed(e);
  }
}

async function refresh() {
  if (busy) { schedule(); return; }
  await reload((e) => shownIn("error", e.message));
}

async function advance() {
  if (busy) { schedule(); return; }
  busy = true;
  try {
    render(await api("POST", `/api/games/${state.id}/advance`, { decision: state.decision }));
    shownIn("error", "");
  } catch (e) {
    if (e.status === 409) await reload((e2) => shownIn("error", e2.message));
    else shownIn("error", e.message);
  } finally {
    busy = false;
  }
}

// ------------------------------------------------------------------ pages
async function openGame(id) {
  $("play").hidden = false;
  $("bar-game").hidden = false;
  $("download").href = `/api/games/${id}/record`;
  try {
    render(await api("GET", `/api/games/${id}`));
  } catch (e) {
    shownIn("error", e.message);
  }
}

async function openReplay(id) {
  $("play").hidden = false;
  $("bar-replay").hidden = false;
  const go = async (step) => {
    try {
      render(await api("GET", `/api/replays/${id}?step=${step}`));
      history.replaceState(null, "", `/replay/${id}?step=${state.step}`);
      shownIn("error", "");
    } catch (e) {
      shownIn("error", e.message);
    }
  };
  $("first").addEventListener("click", () => go(0));
  $("back").addEventListener("click", () => go(Math.max(0, state.step - 1)));
  $("forward").addEventListener("click", () => go(Math.min(state.steps, state.step + 1)));
  $("last-step").addEventListener("click", () => go(state.steps));
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowRight") $("forward").click();
    if (ev.key === "ArrowLeft") $("back").click();
  });
  await go(Number(params.get("step") || 0));
}

function formBody(form, players) {
  // {json: the new-game request's text} or {error: a message saying which field is wrong}
  const words = (s) => s.trim().split(/[\s,]+/).filter((w) => w);
  const humans = words(form.humans.value);
  const bad = humans.find((w) => !/^[0-9]$/.test(w) || Number(w) >= players);
  if (bad !== undefined) {
    return { error: `human seats must be seat numbers from 0 to ${players - 1}, separated by ` +
      `spaces; got "${bad}"` };
  }
  const seed = form.seed.value.trim();
  if (seed && !(/^[0-9]{1,19}$/.test(seed) && BigInt(seed) <= MAX_SEED)) {
    return { error: `the seed must be a whole number from 0 to ${MAX_SEED}, or empty for a ` +
      `random game; got "${seed}"` };
  }
  const opponents = words(form.opponents.value);
  if (opponents.length === 0) return { error: "give at least one opponent agent spec" };
  const text = JSON.stringify({
    players, mode: form.mode.value,
    scenario: form.scenario.value ? Number(form.scenario.value) : null,
    humans: humans.map(Number), opponents, seed: null,
  });
  // the seed's digits go into the JSON text as typed: a Number would round seeds past 2**53
  return { json: seed ? `${text.slice(0, -"null}".length)}${BigInt(seed)}}` : text };
}

async function openSetup() {
  $("setup").hidden = false;
  const form = $("new-game");
  const defaults = await api("GET", "/api/defaults");
  form.players.value = String(defaults.players);
  form.mode.value = defaults.mode;
  form.scenario.value = defaults.scenario === null ? "" : String(defaults.scenario);
  form.humans.value = defaults.humans.join(" ");
  form.opponents.value = defaults.opponents.join(" ");
  $("specs").textContent = defaults.agent_specs.join(", ");
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = formBody(form, Number(form.players.value));
    if (body.error) { shownIn("form-error", body.error); return; }
    try {
      const made = await api("POST", "/api/games", body.json);
      location.href = `/game/${made.id}${location.search}`;
    } catch (e) {
      shownIn("form-error", e.message);
    }
  });
  $("record-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    try {
      const made = await api("POST", "/api/replays", await file.text());
      location.href = `/replay/${made.id}`;
    } catch (e) {
      shownIn("form-error", e.message);
    }
  });
  document.body.dataset.ready = "true";
}

function init() {
  const saved = params.get("speed") || localStorage.getItem("moonriver-speed");
  if (saved !== null && [...$("speed").options].some((o) => o.value === saved)) {
    $("speed").value = saved;
  }
  $("speed").addEventListener("change", () => {
    localStorage.setItem("moonriver-speed", $("speed").value);
    schedule();
  });
  const auto = params.get("auto") ?? localStorage.getItem("moonriver-auto-forced");
  $("auto-forced").checked = auto !== "0";  // on unless turned off
  $("auto-forced").addEventListener("change", () => {
    localStorage.setItem("moonriver-auto-forced", autoForced() ? "1" : "0");
    if (state) render(state);
  });
  $("pause").addEventListener("click", () => {
    paused = !paused;
    $("pause").textContent = paused ? "resume agents" : "pause agents";
    if (state) decorate();
    schedule();
  });
  $("cancel").addEventListener("click", () => { picked = []; decorate(); });
  $("board").addEventListener("click", (ev) => {
    const el = ev.target.closest("[data-key]");
    if (el) choose(el.dataset.key);
  });
  const parts = location.pathname.split("/").filter((p) => p);
  if (parts[0] === "game" && parts[1]) openGame(parts[1]);
  else if (parts[0] === "replay" && parts[1]) openReplay(parts[1]);
  else openSetup();
}

init();
