// Euchre Lab's page: draws the view the server sends for your seat and sends your choices back as
// action names. The server is the referee; this file decides nothing about the rules: a card or a call
// is offered only when the server lists it as legal.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_WORDS = { "♣": "clubs", "♦": "diamonds", "♥": "hearts", "♠": "spades" };
const RANK_WORDS = { 7: "seven", 8: "eight", 9: "nine", 10: "ten", J: "jack", Q: "queen", K: "king", A: "ace" };
const SUIT_OF_NAME = { clubs: "♣", diamonds: "♦", hearts: "♥", spades: "♠" };
const SUIT_KEYS = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const TEAMS = ["N-S", "E-W"];
const PHASE_PROMPT = {
  bid_round_1: "Your bid: order up the upcard (O) or pass (P)",
  bid_round_2: "Your bid: name a suit (C, D, H, S) or pass (P)",
  maker_alone: "Go alone (A), or play with your partner (P)?",
  defender_alone: "Defend alone (A), or with your partner (P)?",
  discard: "Choose a card to bury",
  play: "Your turn: play a card",
};
const GAME_KEY = "euchre-lab-game";
const SETTINGS_KEY = "euchre-lab-settings";
const ADVANCED = "advanced";

let view = null;
let options = null;
let levels = [];
let pumping = false;
let delay = Number(localStorage.getItem("euchre-lab-speed") || 800);
let highlight = null;       // the card the arrow keys have reached
let lifted = null;          // the card a tap has lifted
let pointerKind = "";       // "mouse", "touch" or "pen": what pressed the card last
let drag = null;            // a card being dragged: {name, el, x, y, moved}
let note = "";              // a line for the status line until the next view
let acknowledged = 0;       // the last hand whose result the person has seen
let continueResult = null;  // resolves the wait on a hand's result

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
  lifted = null;
  note = "";
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

// Bots move one at a time, each after a pause, so that a person can follow the play; a hand's result
// waits in the middle until the person goes on.
async function pump() {
  if (pumping) return;
  pumping = true;
  try {
    while (view) {
      if (view.last_hand && view.last_hand.number > acknowledged) {
        await waitOnResult();
        continue;
      }
      if (view.over || view.to_play === view.you) break;
      const justTaken = view.last_trick && view.last_trick.version === view.version;
      await sleep(justTaken ? delay * 2 : delay);
      const id = view.id;
      const next = await api("POST", `/api/games/${id}/step`, { version: view.version });
      if (!view || view.id !== id) break;
      announce(newLines(view.log, next.log));
      view = next;
      note = "";
      render();
    }
  } catch (error) {
    showError(error.message);
  } finally {
    pumping = false;
    if (view) render();
  }
}

function waitOnResult() {
  const hand = view.last_hand;
  const over = view.over;
  const line = `Hand ${hand.number}: ${handResult(hand)}.`;
  $("result-text").innerHTML = suitHtml(over ? `${line} ${gameOverText()}` : `${line} ${scoreText()}.`);
  $("continue-button").hidden = over;
  $("play-again-button").hidden = !over;
  $("result-new-game-button").hidden = !over;
  $("result").hidden = false;
  announce([over ? gameOverText() : `Hand ${hand.number}: ${handResult(hand)}`]);
  renderCenter();
  if (over) {
    acknowledged = hand.number;
    $("play-again-button").focus();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      continueResult = null;
      acknowledged = hand.number;
      $("result").hidden = true;
      resolve();
    };
    const timer = setTimeout(done, Math.max(2500, delay * 5));
    continueResult = done;
  });
}

// ---------------------------------------------------------------- words for people and screen readers

const position = (seat) => (seat - view.you + 4) % 4;

function cardText(name) {
  if (name === "JOKER") return { rank: "★", suit: "", red: false };
  const rank = name[0] === "T" ? "10" : name[0];
  return { rank, suit: SUITS[name[1]], red: name[1] === "D" || name[1] === "H" };
}

function spoken(text) {
  return text.replace(/(10|[7-9JQKA])([♣♦♥♠])/g, (_, rank, suit) => `${RANK_WORDS[rank]} of ${SUIT_WORDS[suit]}`)
    .replace(/[♣♦♥♠]/g, (suit) => SUIT_WORDS[suit]);
}

function suitHtml(text) {
  return text.replace(/[♦♥]/g, (s) => `<span class="suit-red">${s}</span>`);
}

function cardHtml(name) {
  const { rank, suit, red } = cardText(name);
  return red ? `${rank}<span class="suit-red">${suit}</span>` : `${rank}${suit}`;
}

function cardName(name) {
  return (view && view.card_names[name]) || spoken(name === "JOKER" ? "joker" : `${cardText(name).rank}${cardText(name).suit}`);
}

function announce(lines) {
  if (lines.length) $("announce").textContent = lines.map(spoken).join(". ");
}

// The log lines of `next` after the last line of `before` (a bot move adds a few at the end).
function newLines(before, next) {
  const same = (a, b) => a && b && a.hand === b.hand && a.text === b.text;
  const k = before.length;
  for (let i = next.length - 1; i >= 0; i--) {
    if (same(next[i], before[k - 1]) && (k < 2 || same(next[i - 1], before[k - 2]))) {
      return next.slice(i + 1).map((line) => line.text);
    }
  }
  return next.slice(-1).map((line) => line.text);
}

function handResult(hand) {
  const team = hand.points[0] ? 0 : 1;
  const mine = view && team === view.you % 2 ? " (you)" : "";
  return `${TEAMS[team]}${mine} +${hand.points[team]}, tricks ${hand.tricks[0]}-${hand.tricks[1]}`;
}

function scoreText() {
  return `Score ${TEAMS[0]} ${view.score[0]}, ${TEAMS[1]} ${view.score[1]}`;
}

function gameOverText() {
  const w = view.winner;
  const who = w === view.you % 2 ? "You and your partner win" : `${TEAMS[w]} win`;
  return `Game over. ${who} ${view.score[w]}-${view.score[1 - w]} after ${view.last_hand.number} hands.`;
}

// ---------------------------------------------------------------- drawing

function cardElement(name, { legal = false, small = false, inHand = false } = {}) {
  const { rank, suit, red } = cardText(name);
  const el = document.createElement(inHand ? "button" : "div");
  el.className = `card ${red ? "red" : "black"}${small ? " small" : ""}${legal ? " legal" : ""}${name === "JOKER" ? " joker" : ""}`;
  el.dataset.card = name;
  el.setAttribute("aria-label", cardName(name));
  if (!inHand) el.setAttribute("role", "img");
  el.innerHTML = `<span class="corner" aria-hidden="true">${rank}<br>${suit}</span>` +
    `<span class="pip" aria-hidden="true">${suit || "Joker"}</span>` +
    `<span class="corner bottom" aria-hidden="true">${rank}<br>${suit}</span>`;
  return el;
}

function render() {
  if (!view) return;
  localStorage.setItem(GAME_KEY, view.id);
  renderScore();
  for (const seat of view.seats) renderSeat(seat);
  renderCenter();
  renderHand();
  renderActions();
  renderSide();
  $("last-trick-button").disabled = !view.last_trick;
  $("leave-button").disabled = view.over;
}

function renderScore() {
  const mine = view.you % 2;
  $("score").innerHTML = [0, 1].map((t) =>
    `<span class="team">${TEAMS[t]}${t === mine ? " (you)" : ""} <b>${view.score[t]}</b></span>`).join("") +
    `<span class="team target">to ${view.target}</span>`;
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
    `<div class="call">${out ? "sits out" : call}</div><div class="backs" aria-hidden="true">${backs}</div>`;
}

function renderCenter() {
  const trick = $("trick");
  trick.innerHTML = "";
  let cards = view.trick;
  let caption = "";
  const bidding = view.phase.startsWith("bid");
  const justTaken = view.last_trick && view.last_trick.version === view.version;
  const showTaken = !cards.length && justTaken && (!bidding || !$("result").hidden || view.to_play !== view.you);
  if (showTaken) {
    cards = view.last_trick.cards;
    caption = `${view.seats[view.last_trick.winner].name} takes the trick`;
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
  $("status").innerHTML = suitHtml(note || statusText());
}

function statusText() {
  if (!$("result").hidden && !view.over) return "Continue: Enter, a tap, or wait";
  if (view.over) return gameOverText();
  if (view.to_play === view.you) {
    const prompt = PHASE_PROMPT[view.phase] || "Your turn";
    return lifted ? `${prompt}: tap ${cardHtml(lifted)} again to play it` : prompt;
  }
  return `${view.seats[view.to_play].name} is thinking…`;
}

function legalCards() {
  return view ? view.legal.filter((c) => c.kind === "card").map((c) => c.action) : [];
}

function renderHand() {
  const hand = $("hand");
  hand.innerHTML = "";
  const legal = new Set(legalCards());
  if (!legal.has(highlight)) highlight = legal.size ? view.hand.find((name) => legal.has(name)) : null;
  if (!legal.has(lifted)) lifted = null;
  hand.classList.toggle("choosing", legal.size > 0);
  for (const name of view.hand) {
    const el = cardElement(name, { legal: legal.has(name), inHand: true });
    el.type = "button";
    el.disabled = !legal.has(name);
    if (!legal.has(name) && legal.size) el.setAttribute("aria-label", `${cardName(name)}, can't be played now`);
    el.classList.toggle("highlight", name === highlight);
    el.classList.toggle("lifted", name === lifted);
    el.addEventListener("pointerdown", (event) => startDrag(event, name, el));
    el.addEventListener("click", (event) => cardClicked(event, name));
    hand.appendChild(el);
  }
}

function renderActions() {
  const box = $("actions");
  box.innerHTML = "";
  for (const choice of view.legal.filter((c) => c.kind === "call")) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.action = choice.action;
    button.className = choice.action === "pass" || choice.action === "partner" ? "pass" : "";
    button.innerHTML = suitHtml(choice.label[0].toUpperCase() + choice.label.slice(1));
    button.setAttribute("aria-label", spoken(choice.label));
    button.addEventListener("click", () => act(choice.action));
    box.appendChild(button);
  }
}

function renderSide() {
  $("table-rules").innerHTML = `<b>Table:</b> ${tableLine(view.rules)}`;
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

// ---------------------------------------------------------------- the table's rules in words

function ruleValueText(rule, value) {
  if (rule.kind === "bool") return value ? "on" : "off";
  const choice = rule.choices.find((c) => c.value === value);
  return choice ? choice.label : String(value);
}

function tableLine(rules) {
  const named = options.tables.find((t) => options.rules.every((r) => t.rules[r.name] === rules[r.name]));
  if (named) return `${named.name}: ${named.about}`;
  const base = options.tables[0];
  const changed = options.rules.filter((r) => base.rules[r.name] !== rules[r.name])
    .map((r) => `${r.title.toLowerCase()} ${ruleValueText(r, rules[r.name])}`);
  return `${base.name}, but ${changed.join(", ")}`;
}

function fillHelpTable() {
  const rules = view ? view.rules : chosenRules();
  $("help-table").innerHTML = `<li><b>${tableLine(rules)}</b></li>` + options.rules.map((r) =>
    `<li>${r.title}: <b>${ruleValueText(r, rules[r.name])}</b> (${r.about})</li>`).join("");
}

function showHelp() {
  fillHelpTable();
  $("help").showModal();
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

function toggleLog(open) {
  $("side").classList.toggle("open", open);
  $("log-button").setAttribute("aria-expanded", String(open));
  if (open) $("close-side").focus();
}

// ---------------------------------------------------------------- mouse, touch and drag

function cardClicked(event, name) {
  if (drag && drag.moved) return;
  if (!legalCards().includes(name)) return;
  if (pointerKind === "touch" || pointerKind === "pen") {
    pointerKind = "";
    if (lifted !== name) {
      lifted = name;
      note = "";
      renderHand();
      renderCenter();
      return;
    }
  }
  pointerKind = "";
  act(name);
}

function startDrag(event, name, el) {
  pointerKind = event.pointerType;
  if (!legalCards().includes(name)) return;
  drag = { name, el, x: event.clientX, y: event.clientY, moved: false };
  el.setPointerCapture(event.pointerId);
  el.addEventListener("pointermove", moveDrag);
  el.addEventListener("pointerup", endDrag, { once: true });
  el.addEventListener("pointercancel", endDrag, { once: true });
}

function moveDrag(event) {
  if (!drag) return;
  const dx = event.clientX - drag.x;
  const dy = event.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < 10) return;
  drag.moved = true;
  drag.el.classList.add("dragging");
  drag.el.style.transform = `translate(${dx}px, ${dy}px)`;
}

function endDrag(event) {
  const done = drag;
  if (!done) return;
  done.el.removeEventListener("pointermove", moveDrag);
  if (!done.moved) {
    drag = null;
    return;
  }
  const box = $("center").getBoundingClientRect();
  const inMiddle = event.type === "pointerup" && event.clientX >= box.left && event.clientX <= box.right &&
    event.clientY >= box.top && event.clientY <= box.bottom;
  done.el.style.transform = "";
  done.el.classList.remove("dragging");
  setTimeout(() => { drag = null; }, 0);  // the click that follows a drag is not a tap
  if (inMiddle) act(done.name);
}

// ---------------------------------------------------------------- keys

const KEY_NAMES = { p: "P", o: "O", a: "A", c: "C", d: "D", h: "H", s: "S", arrowleft: "←", arrowright: "→", enter: "Enter" };

function keyPressed(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const open = document.querySelector("dialog[open]");
  const key = event.key.toLowerCase();
  if (open) {
    if (open.id === "new-game" && key === "enter" && event.target.tagName !== "BUTTON") {
      event.preventDefault();
      $("new-game-form").requestSubmit();
    }
    return;
  }
  if (key === "escape" && $("side").classList.contains("open")) return toggleLog(false);
  if (continueResult && (key === "enter" || key === " ")) {
    event.preventDefault();
    return continueResult();
  }
  if (key === "n") return openNewGame();
  if (key === "?") return showHelp();
  if (!view || !(key in KEY_NAMES)) return;
  if (key === "enter" && event.target.closest && event.target.closest("button:not(.card)")) return;  // a focused button
  event.preventDefault();
  const why = keyAction(key);
  if (why) {
    note = `${KEY_NAMES[key]} does nothing now: ${why}`;
    renderCenter();
  }
}

// Do what `key` means now, if the server lists it as legal; else why not (one line).
function keyAction(key) {
  if (continueResult) return "the hand's result is showing (Enter continues)";
  if (pumping || view.over || view.to_play !== view.you) return view.over ? "the game is over (N starts a new one)" : "wait for your turn";
  const legal = new Set(view.legal.map((c) => c.action));
  const cards = legalCards();
  note = "";
  if (key === "arrowleft" || key === "arrowright") {
    if (!cards.length) return "there is no card to play now; " + (PHASE_PROMPT[view.phase] || "").toLowerCase();
    const i = cards.indexOf(highlight);
    highlight = cards[(i + (key === "arrowright" ? 1 : cards.length - 1)) % cards.length];
    renderHand();
    renderCenter();
    document.querySelector("#hand .highlight").focus();
    return "";
  }
  if (key === "enter") return cards.length ? (act(highlight), "") : "there is no card to play now";
  const wanted = {
    p: ["pass", "partner"], a: ["alone"],
    o: view.phase === "bid_round_1" ? view.legal.filter((c) => c.kind === "call" && c.action !== "pass").map((c) => c.action) : [],
  }[key] || [SUIT_KEYS[key]];
  const action = wanted.find((a) => legal.has(a));
  if (action) return act(action), "";
  return `you may now ${view.legal.filter((c) => c.kind === "call").map((c) => c.label).join(", ") || "play a card"}`;
}

// ---------------------------------------------------------------- new game

function levelOptions() {
  const rows = levels.map((l) =>
    `<option value="${l.id}" ${l.available ? "" : "disabled"}>${l.name}${l.available ? "" : " (can't play this table)"}</option>`);
  rows.push(`<option value="${ADVANCED}">Advanced: a bot by its name…</option>`);
  return rows.join("");
}

function fillNewGameForm() {
  const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) || "null");
  levels = options.levels;
  for (const id of ["partner", "opponents"]) {
    $(`${id}-spec`).innerHTML = options.bots.map((b) =>
      `<option value="${b.spec}">${b.label}${b.fair ? "" : " [CHEATS]"}</option>`).join("");
    const choice = saved ? saved[id] : options.defaults[id];
    const isLevel = options.levels.some((l) => l.id === choice);
    $(id).innerHTML = levelOptions();
    $(id).value = isLevel ? choice : ADVANCED;
    if (!isLevel) $(`${id}-spec`).value = choice;
    $(id).addEventListener("change", describeLevels);
    $(`${id}-spec`).addEventListener("change", describeLevels);
  }
  if (saved) $("seat").value = String(saved.seat);
  $("speed").value = String(delay);
  $("table-name").innerHTML = options.tables.map((t) => `<option value="${t.name}">${t.name}</option>`).join("") +
    '<option value="custom">custom</option>';
  fillRules(saved ? saved.rules : options.defaults.rules);
  $("table-name").addEventListener("change", () => {
    const table = options.tables.find((t) => t.name === $("table-name").value);
    if (table) fillRules(table.rules);
    rulesChanged();
  });
  rulesChanged();
}

function fillRules(values) {
  const fieldset = $("rules");
  fieldset.querySelectorAll("label").forEach((l) => l.remove());
  for (const rule of options.rules) {
    const value = values[rule.name];
    const label = document.createElement("label");
    const about = `<small>${rule.about}</small>`;
    if (rule.kind === "bool") {
      label.innerHTML = `<span><input type="checkbox" name="${rule.name}" ${value ? "checked" : ""}> ${rule.title}</span>${about}`;
    } else if (rule.kind === "choice") {
      const opts = rule.choices.map((c) => `<option value="${c.value}" ${c.value === value ? "selected" : ""}>${c.label}</option>`);
      label.innerHTML = `<span>${rule.title} <select name="${rule.name}">${opts.join("")}</select></span>${about}`;
    } else {
      label.innerHTML = `<span>${rule.title} <input type="number" name="${rule.name}" value="${value}" min="1" max="100"></span>${about}`;
    }
    label.querySelector("[name]").addEventListener("change", () => {
      $("table-name").value = matchingTable() || "custom";
      rulesChanged();
    });
    fieldset.appendChild(label);
  }
  $("table-name").value = matchingTable() || "custom";
}

function matchingTable() {
  const rules = chosenRules();
  const table = options.tables.find((t) => options.rules.every((r) => t.rules[r.name] === rules[r.name]));
  return table ? table.name : null;
}

// Ask the server which levels can play the chosen table, and show them.
async function rulesChanged() {
  const table = options.tables.find((t) => t.name === $("table-name").value);
  $("table-about").textContent = table ? table.about : tableLine(chosenRules());
  try {
    levels = (await api("POST", "/api/levels", { rules: chosenRules() })).levels;
  } catch (error) {
    $("levels-note").textContent = error.message;
    return;
  }
  for (const id of ["partner", "opponents"]) {
    const value = $(id).value;
    $(id).innerHTML = levelOptions();
    const level = levels.find((l) => l.id === value);
    $(id).value = level && !level.available ? "medium" : value;
  }
  describeLevels();
}

function describeLevels() {
  for (const id of ["partner", "opponents"]) {
    const level = levels.find((l) => l.id === $(id).value);
    const bot = options.bots.find((b) => b.spec === $(`${id}-spec`).value);
    const who = id === "partner" ? "Partner" : "Opponents";
    $(`${id}-about`).innerHTML = level ? `${who}: <b>${level.name}</b>, ${level.about}.` :
      `${who}: the bot <code>${bot.spec}</code>${bot.fair ? "" : ' <b class="cheat">CHEATS: it sees every hand</b>'}.`;
  }
  $("advanced").hidden = !["partner", "opponents"].some((id) => $(id).value === ADVANCED);
  $("levels-note").textContent = levels.filter((l) => !l.available).map((l) => l.why).join(" ");
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

function chosenSettings() {
  const pick = (id) => ($(id).value === ADVANCED ? $(`${id}-spec`).value : $(id).value);
  return { partner: pick("partner"), opponents: pick("opponents"), seat: Number($("seat").value), rules: chosenRules() };
}

async function startGame(settings) {
  const request = { ...settings };
  if (view && !view.over) request.replaces = view.id;  // the server drops it once the new game is dealt
  try {
    $("status").textContent = "Dealing…";
    const fresh = await api("POST", "/api/games", request);
    localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
    if ($("new-game").open) $("new-game").close();
    $("result").hidden = true;
    view = fresh;
    acknowledged = view.last_hand ? view.last_hand.number : 0;
    note = "";
    render();
    pump();
  } catch (error) {
    showError(error.message);
    if (view) render();
  }
}

function openNewGame() {
  $("speed").value = String(delay);
  $("new-game").showModal();
}

async function leaveGame() {
  if (!view || view.over) return;
  const id = view.id;
  try {
    await api("DELETE", `/api/games/${id}`);
  } catch (error) {
    if (error.status !== 404) return showError(error.message);
  }
  view = null;
  localStorage.removeItem(GAME_KEY);
  $("result").hidden = true;
  $("hand").innerHTML = "";
  $("actions").innerHTML = "";
  $("trick").innerHTML = "";
  $("status").textContent = "You left the game. Start a new game.";
  $("leave-button").disabled = true;
  openNewGame();
}

async function start() {
  options = await api("GET", "/api/options");
  fillNewGameForm();
  $("new-game-form").addEventListener("submit", (event) => {
    event.preventDefault();
    delay = Number($("speed").value);
    localStorage.setItem("euchre-lab-speed", String(delay));
    startGame(chosenSettings());
  });
  $("new-game-button").addEventListener("click", openNewGame);
  $("result-new-game-button").addEventListener("click", openNewGame);
  $("play-again-button").addEventListener("click", () => startGame(JSON.parse(localStorage.getItem(SETTINGS_KEY)) || chosenSettings()));
  $("continue-button").addEventListener("click", () => continueResult && continueResult());
  $("center").addEventListener("click", (event) => { if (continueResult && !event.target.closest("button")) continueResult(); });
  $("cancel-new-game").addEventListener("click", () => $("new-game").close());
  $("last-trick-button").addEventListener("click", showLastTrick);
  $("help-button").addEventListener("click", showHelp);
  $("leave-button").addEventListener("click", leaveGame);
  $("log-button").addEventListener("click", () => toggleLog(!$("side").classList.contains("open")));
  $("close-side").addEventListener("click", () => toggleLog(false));
  document.addEventListener("keydown", keyPressed);
  const saved = localStorage.getItem(GAME_KEY);
  if (saved) {
    try {
      view = await api("GET", `/api/games/${saved}`);
      acknowledged = view.last_hand ? view.last_hand.number : 0;
      render();
      pump();
      return;
    } catch (error) {
      localStorage.removeItem(GAME_KEY);
    }
  }
  openNewGame();
}

start().catch((error) => showError(error.message));
