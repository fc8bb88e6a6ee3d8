// Moon River play page: draws the server's table SVG, offers the legal moves as clicks,
// lets agents move one by one, and steps through replays. The server checks every move.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let state = null;      // last state from the server
let picked = [];       // keys clicked so far for the move being chosen
let timer = null;      // pending agent step
let busy = false;      // a request is in flight
let paused = false;
let version = 0;       // renders so far (tests wait on it)

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

function showError(message) {
  $("error").hidden = !message;
  $("error").textContent = message || "";
}

function speed() {
  return Number($("speed").value);
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
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.key = key;
    b.className = "move-button";
    b.textContent = state.buttons[key] || key;
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
    const p = state.current_player;
    hint = `P${p} (${state.names[p]}) is deciding` + (paused ? " (agents paused)" : "...");
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
    const next = await api("POST", `/api/games/${state.id}/actions`, { action: id });
    showError("");
    render(next);
  } catch (e) {
    showError(e.message);
    decorate();
  } finally {
    busy = false;
  }
}

// ------------------------------------------------------------------ drawing
function endScreen(s) {
  const end = $("end");
  if (!s.over) { end.hidden = true; return; }
  const names = s.names.map((n, p) => `P${p} (${n})`);
  const rows = s.scores.map((sc, p) => {
    const win = s.winners.includes(p) ? " winner" : "";
    return `<tr class="${win}" data-player="${p}"><th>${names[p]}</th><td>${sc.territories}</td>` +
      `<td>${sc.resources}</td><td>${sc.partners}</td><td>${sc.scenario}</td>` +
      `<td class="total" data-player="${p}">${sc.total}</td><td>${sc.largest_territory}</td>` +
      `<td>${sc.cows}</td></tr>`;
  }).join("");
  const winners = s.winners.map((p) => names[p]).join(", ");
  end.innerHTML = `<h2>Game over</h2><p id="winners">Winner${s.winners.length > 1 ? "s" : ""}: ` +
    `${winners}</p><table><tr><th>player</th><th>territories</th><th>resources</th>` +
    `<th>partners</th><th>scenario</th><th>total</th><th>largest territory</th><th>cows</th>` +
    `</tr>${rows}</table>`;
  end.hidden = false;
}

function render(next) {
  state = next;
  $("status").textContent = state.status;
  $("board").innerHTML = state.svg;
  const last = state.last;
  $("last").textContent = last ? `last move: P${last.player}` +
    (last.name ? ` (${last.name})` : "") + ` - ${last.text}` : "";
  const list = $("move-list");
  list.replaceChildren();
  for (const move of state.legal) {
    const li = document.createElement("li");
    const link = document.createElement("a");
    link.href = "#";
    link.textContent = move.text;
    link.addEventListener("click", (ev) => { ev.preventDefault(); submit(move.id); });
    li.appendChild(link);
    list.appendChild(li);
  }
  $("moves").hidden = !state.human_turn;
  endScreen(state);
  decorate();
  document.body.dataset.phase = state.phase;
  document.body.dataset.over = String(state.over);
  document.body.dataset.humanTurn = String(state.human_turn);
  document.body.dataset.version = String(++version);
  if (state.kind === "replay") {
    $("step").textContent = `decision ${state.step} / ${state.steps}`;
    document.body.dataset.step = String(state.step);
  } else {
    schedule();
  }
}

function schedule() {
  clearTimeout(timer);
  if (!state || state.kind !== "game" || state.over || state.human_turn || paused) return;
  timer = setTimeout(advance, speed());
}

async function advance() {
  if (busy) { schedule(); return; }
  busy = true;
  try {
    render(await api("POST", `/api/games/${state.id}/advance`));
    showError("");
  } catch (e) {
    if (e.status === 409) {
      render(await api("GET", `/api/games/${state.id}`));
    } else {
      showError(e.message);
    }
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
    showError(e.message);
  }
}

async function openReplay(id) {
  $("play").hidden = false;
  $("bar-replay").hidden = false;
  const go = async (step) => {
    try {
      render(await api("GET", `/api/replays/${id}?step=${step}`));
      history.replaceState(null, "", `/replay/${id}?step=${state.step}`);
      showError("");
    } catch (e) {
      showError(e.message);
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
    const words = (s) => s.trim().split(/[\s,]+/).filter((w) => w);
    const body = {
      players: Number(form.players.value), mode: form.mode.value,
      scenario: form.scenario.value ? Number(form.scenario.value) : null,
      humans: words(form.humans.value).map(Number), opponents: words(form.opponents.value),
      seed: form.seed.value.trim() ? Number(form.seed.value) : null,
    };
    try {
      const made = await api("POST", "/api/games", body);
      location.href = `/game/${made.id}${location.search}`;
    } catch (e) {
      alert(e.message);
    }
  });
  $("record-file").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    try {
      const made = await api("POST", "/api/replays", await file.text());
      location.href = `/replay/${made.id}`;
    } catch (e) {
      alert(e.message);
    }
  });
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
