// Euchre Lab's page: draws the view the server sends for your seat and sends your clicks back as
// action names. The server is the referee; this file decides nothing about the rules.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_OF_NAME = { clubs: "♣", diamonds: "♦", hearts: "♥", spades: "♠" };
const TEAMS = ["N-S", "E-W"];
const PHASE_PROMPT = {
  bid_round_1: "Your bid: order up the upcard or pass",
  bid_round_2: "Your bid: name a suit or pass",
  maker_alone: "Go alone, or play with your partner?",
  defender_alone: "Defend alone, or with your partner?",
  discard: "Click a card to bury it",
  play: "Your turn: click a card to play",
};
const GAME_KEY = "euchre-lab-game";

let view = null;
let options = null;
let pumping = false;
let delay = Number(localStorage.getItem("euchre-lab-speed") || 800);

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- talking to the server

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    const error = new Error(detail || response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => { box.hidden = true; }, 5000);
}

async function act(action) {
  if (!view || pumping) return;
  try {
    view = await api("POST", `/api/games/${view.id}/action`, { action, version: view.version });
    render();
    pump();
  } catch (error) {
    showError(error.message);
    if (error.status === 409 || error.status === 400) await refresh();
  }
}

async function refresh() {
  if (!view) return;
  try {
    view = await api("GET", `/api/games/${view.id}`);
    render();
    pump();
  } catch (error) {
    showError(error.message);
  }
}

// Bots move one at a time, each after a pause, so that a person can follow the play.
async function pump() {
  if (pumping) return;
  pumping = true;
  try {
    while (view && !view.over && view.to_play !== view.you) {
      const justTaken = view.last_trick && view.last_trick.version === view.version;
      await sleep(justTaken ? delay * 2 : delay);
      const id = view.id;
      const next = await api("POST", `/api/games/${id}/step`, { version: view.version });
      if (!view || view.id !== id) break;
      view = next;
      render();
    }
  } catch (error) {
    showError(error.message);
  } finally {
    pumping = false;
  }
}

// ---------------------------------------------------------------- drawing

const position = (seat) => (seat - view.you + 4) % 4;

function cardText(name) {
  if (name === "JOKER") return { rank: "★", suit: "", red: false };
  const rank = name[0] === "T" ? "10" : name[0];
  return { rank, suit: SUITS[name[1]], red: name[1] === "D" || name[1] === "H" };
}

function cardElement(name, { legal = false, small = false, onClick = null } = {}) {
  const { rank, suit, red } = cardText(name);
  const el = document.createElement(onClick ? "button" : "div");
  el.className = `card ${red ? "red" : "black"}${small ? " small" : ""}${legal ? " legal" : ""}${name === "JOKER" ? " joker" : ""}`;
  el.dataset.card = name;
  el.title = name === "JOKER" ? "Joker" : `${rank}${suit}`;
  el.innerHTML = `<span class="corner">${rank}<br>${suit}</span><span class="pip">${suit || "Joker"}</span>` +
    `<span class="corner bottom">${rank}<br>${suit}</span>`;
  if (onClick) {
    el.type = "button";
    el.disabled = !legal;
    el.addEventListener("click", onClick);
  }
  return el;
}

function suitHtml(text) {
  return text.replace(/[♦♥]/g, (s) => `<span class="suit-red">${s}</span>`);
}

function cardHtml(name) {
  const { rank, suit, red } = cardText(name);
  return red ? `${rank}<span class="suit-red">${suit}</span>` : `${rank}${suit}`;
}

function render() {
  if (!view) return;
  sessionStorage.setItem(GAME_KEY, view.id);
  renderScore();
  for (const seat of view.seats) renderSeat(seat);
  renderCenter();
  renderHand();
  renderActions();
  renderSide();
  $("last-trick-button").disabled = !view.last_trick;
}

function renderScore() {
  const mine = view.you % 2;
  $("score").innerHTML = [0, 1].map((t) =>
    `<span class="team">${TEAMS[t]}${t === mine ? " (you)" : ""}: <b>${view.score[t]}</b></span>`).join("") +
    `<span class="team">game to ${view.target}</span>`;
}

function renderSeat(seat) {
  const el = $(`seat-pos-${position(seat.seat)}`);
  const out = view.sitting_out.includes(seat.seat);
  const turn = view.to_play === seat.seat;
  el.className = `seat pos-${position(seat.seat)}${turn ? " turn" : ""}${out ? " out" : ""}`;
  el.dataset.seat = seat.seat;
  const badges = [];
  if (view.dealer === seat.seat) badges.push('<span class="badge dealer" title="dealer">D</span>');
  if (view.maker === seat.seat) badges.push('<span class="badge maker" title="called trump">maker</span>');
  if (view.alone.includes(seat.seat)) badges.push('<span class="badge alone">alone</span>');
  if (turn) badges.push('<span class="badge turn">to play</span>');
  const calls = view.calls.filter((c) => c.seat === seat.seat);
  const call = calls.length ? suitHtml(calls[calls.length - 1].label) : "";
  const backs = seat.seat === view.you ? "" : '<span class="back"></span>'.repeat(seat.cards_left);
  const cheat = seat.player.startsWith("oracle") ? " cheat" : "";
  el.innerHTML = `<div class="name">${seat.name}${seat.seat === view.you ? " (you)" : ""} ${badges.join("")}</div>` +
    `<div class="player${cheat}">${seat.player === "you" ? TEAMS[seat.team] : seat.player}</div>` +
    `<div class="call">${out ? "sits out" : call}</div><div class="backs">${backs}</div>`;
}

function renderCenter() {
  const trick = $("trick");
  trick.innerHTML = "";
  let cards = view.trick;
  let caption = "";
  const bidding = view.phase.startsWith("bid");
  const justTaken = view.last_trick && view.last_trick.version === view.version;
  const showTaken = !cards.length && justTaken && (!bidding || view.to_play !== view.you);
  if (showTaken) {
    cards = view.last_trick.cards;
    caption = `${view.seats[view.last_trick.winner].name} takes the trick`;
    if (bidding && view.last_hand) caption += ` · hand ${view.last_hand.number}: ${handResult(view.last_hand)}`;
  }
  for (const { seat, card } of cards) {
    const slot = document.createElement("div");
    slot.className = `slot pos-${position(seat)}`;
    slot.appendChild(cardElement(card));
    trick.appendChild(slot);
  }
  if (bidding && !showTaken) {
    const slot = document.createElement("div");
    slot.className = "slot middle";
    const upcard = cardElement(view.upcard);
    if (view.upcard_turned_down) upcard.classList.add("turned-down");
    slot.appendChild(upcard);
    slot.insertAdjacentHTML("beforeend", `<div>${view.upcard_turned_down ? "turned down" : "upcard"}</div>`);
    trick.appendChild(slot);
  }
  $("trick-caption").textContent = caption;
  $("status").innerHTML = suitHtml(statusText());
}

function statusText() {
  if (view.over) {
    const w = view.winner;
    return `Game over: ${TEAMS[w]} win ${view.score[w]}-${view.score[1 - w]}${w === view.you % 2 ? ". You win!" : "."}`;
  }
  if (view.to_play === view.you) return PHASE_PROMPT[view.phase] || "Your turn";
  return `${view.seats[view.to_play].name} is thinking…`;
}

function renderHand() {
  const hand = $("hand");
  hand.innerHTML = "";
  const legalCards = new Set(view.legal.filter((c) => c.kind === "card").map((c) => c.action));
  for (const name of view.hand) {
    const legal = legalCards.has(name);
    hand.appendChild(cardElement(name, { legal, onClick: () => act(name) }));
  }
}

function renderActions() {
  const box = $("actions");
  box.innerHTML = "";
  for (const choice of view.legal.filter((c) => c.kind === "call")) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.action = choice.action;
    button.className = choice.action === "pass" ? "pass" : "";
    button.innerHTML = suitHtml(choice.label[0].toUpperCase() + choice.label.slice(1));
    button.addEventListener("click", () => act(choice.action));
    box.appendChild(button);
  }
}

function renderSide() {
  const lines = [`<b>Hand ${view.hand_number}</b>, ${view.seats[view.dealer].name} deals`];
  lines.push(`Upcard ${cardHtml(view.upcard)}${view.upcard_turned_down ? " (turned down)" : ""}`);
  if (view.trump) {
    const alone = view.alone.includes(view.maker) ? " alone" : "";
    lines.push(`Trump <b>${suitHtml(SUIT_OF_NAME[view.trump])} ${view.trump}</b>, called by ${view.seats[view.maker].name}${alone}`);
    lines.push(`Tricks: ${TEAMS[0]} ${view.tricks_won[0]} · ${TEAMS[1]} ${view.tricks_won[1]}`);
  }
  if (view.discard) lines.push(`You buried ${cardHtml(view.discard)}`);
  $("contract").innerHTML = lines.join("<br>");
  const last = view.last_hand;
  $("last-hand").innerHTML = last ? `Hand ${last.number}: ${handResult(last)}` : "";
  const log = $("log");
  log.innerHTML = view.log.map((line) =>
    `<li class="${line.hand === view.hand_number ? "this-hand" : "earlier"}">${suitHtml(line.text)}</li>`).join("");
  log.scrollTop = log.scrollHeight;
}

function handResult(hand) {
  const team = hand.points[0] ? 0 : 1;
  return `${TEAMS[team]} +${hand.points[team]} (tricks ${hand.tricks[0]}-${hand.tricks[1]})`;
}

function showLastTrick() {
  if (!view || !view.last_trick) return;
  const box = $("last-trick-cards");
  box.innerHTML = "";
  for (const { seat, card } of view.last_trick.cards) {
    const slot = document.createElement("div");
    slot.className = `slot pos-${position(seat)}`;
    slot.appendChild(cardElement(card, { small: true }));
    box.appendChild(slot);
  }
  const order = view.last_trick.cards.map((c) => `${view.seats[c.seat].name} ${cardHtml(c.card)}`).join(", ");
  $("last-trick-caption").innerHTML = `${order}. ${view.seats[view.last_trick.winner].name} took it.`;
  $("last-trick").showModal();
}

// ---------------------------------------------------------------- new game

function fillNewGameForm() {
  for (const id of ["partner", "opponents"]) {
    const select = $(id);
    select.innerHTML = options.bots.map((b) => `<option value="${b.spec}">${b.label}</option>`).join("");
    select.value = options.defaults[id];
  }
  $("speed").value = String(delay);
  const fieldset = $("rules");
  fieldset.querySelectorAll("label").forEach((l) => l.remove());
  for (const rule of options.rules) {
    const value = options.defaults.rules[rule.name];
    const label = document.createElement("label");
    const title = rule.name.replace(/_/g, " ");
    if (rule.kind === "bool") {
      label.innerHTML = `<input type="checkbox" name="${rule.name}" ${value ? "checked" : ""}> ${title}`;
    } else if (rule.kind === "choice") {
      const opts = rule.choices.map((c) => `<option value="${c}" ${c === value ? "selected" : ""}>${c}</option>`);
      label.innerHTML = `${title} <select name="${rule.name}">${opts.join("")}</select>`;
    } else {
      label.innerHTML = `${title} <input type="number" name="${rule.name}" value="${value}" min="1" max="100">`;
    }
    fieldset.appendChild(label);
  }
  for (const id of ["partner", "opponents"]) $(id).addEventListener("change", fixRules);
  fixRules();
}

// A checkpoint plays only the rules it was trained on: choosing it sets those rules and locks them.
function fixRules() {
  const fixed = ["partner", "opponents"].map((id) => options.bots.find((b) => b.spec === $(id).value))
    .find((b) => b && b.rules);
  for (const rule of options.rules) {
    const input = $("rules").querySelector(`[name="${rule.name}"]`);
    input.disabled = Boolean(fixed);
    if (!fixed) continue;
    const value = fixed.rules[rule.name];
    if (rule.kind === "bool") input.checked = Boolean(value);
    else input.value = String(value);
  }
  $("rules-note").textContent = fixed ? `${fixed.spec} plays only the rules it was trained on` : "";
}

function chosenRules() {
  const rules = {};
  for (const rule of options.rules) {
    const input = $("rules").querySelector(`[name="${rule.name}"]`);
    if (rule.kind === "bool") rules[rule.name] = input.checked;
    else if (rule.kind === "choice") rules[rule.name] = typeof rule.default === "number" ? Number(input.value) : input.value;
    else rules[rule.name] = Number(input.value);
  }
  return rules;
}

async function startGame(event) {
  event.preventDefault();
  delay = Number($("speed").value);
  localStorage.setItem("euchre-lab-speed", String(delay));
  const request = {
    partner: $("partner").value, opponents: $("opponents").value, seat: Number($("seat").value), rules: chosenRules(),
  };
  try {
    const old = view;
    view = null;
    $("status").textContent = "Dealing…";
    const fresh = await api("POST", "/api/games", request);
    if (old && !old.over) api("DELETE", `/api/games/${old.id}`).catch(() => {});
    view = fresh;
    $("new-game").close();
    render();
    pump();
  } catch (error) {
    showError(error.message);
  }
}

async function start() {
  options = await api("GET", "/api/options");
  fillNewGameForm();
  $("new-game-form").addEventListener("submit", startGame);
  $("new-game-button").addEventListener("click", () => $("new-game").showModal());
  $("cancel-new-game").addEventListener("click", () => $("new-game").close());
  $("last-trick-button").addEventListener("click", showLastTrick);
  const saved = sessionStorage.getItem(GAME_KEY);
  if (saved) {
    try {
      view = await api("GET", `/api/games/${saved}`);
      render();
      pump();
      return;
    } catch (error) {
      sessionStorage.removeItem(GAME_KEY);
    }
  }
  $("new-game").showModal();
}

start().catch((error) => showError(error.message));
