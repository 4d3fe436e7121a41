// cardtable replay viewer: shows the frames cardtable worked out (replay/frames.py) one at a
// time. No game rule lives here: every hand, trick, score and place comes in the data.
// The current position is kept in the page for people and tests alike: body[data-step]
// (1-based), body[data-steps], body[data-deal], and the URL fragment #step=N.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const frames = data.frames;
  const players = data.players;
  const SVG = "http://www.w3.org/2000/svg";
  const RED = new Set(["H", "D"]);
  const CARD = /^(10|[2-9JQKA])([SHDC])$/;
  const SIGNED = data.game === "whist" || data.game === "358";
  let current = -1;

  const $ = (id) => document.getElementById(id);
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function pip(suit, className) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", className);
    svg.setAttribute("viewBox", "0 0 100 100");
    const use = document.createElementNS(SVG, "use");
    use.setAttribute("href", "#suit-" + suit);
    svg.appendChild(use);
    return svg;
  }
  function card(text) {
    const match = CARD.exec(text);
    if (!match) return el("div", "card", text);
    const node = el("div", "card " + (RED.has(match[2]) ? "red" : "black"));
    node.dataset.card = text;
    node.title = text;
    node.appendChild(el("span", "rank", match[1]));
    node.appendChild(pip(match[2], "small"));
    node.appendChild(pip(match[2], "big"));
    return node;
  }
  function back() {
    return el("div", "card back");
  }
  // Text with the red suits' symbols in red; the text itself is never parsed as HTML.
  function suited(parent, text) {
    for (const part of String(text).split(/([♥♦])/)) {
      if (part === "♥" || part === "♦") parent.appendChild(el("span", "red-suit", part));
      else if (part) parent.appendChild(document.createTextNode(part));
    }
    return parent;
  }
  function signed(value) {
    return SIGNED && value > 0 ? "+" + value : String(value);
  }
  function seatName(seat) {
    const entry = data.seats[seat];
    return entry.name ? entry.label + " · " + entry.name : entry.label;
  }

  // -- where each seat sits: the viewpoint's seat at the bottom, play going clockwise ------
  const bottom = data.viewpoint_seat === null ? 0 : data.viewpoint_seat;
  function angle(seat) {
    const turn = ((seat - bottom) % players + players) % players;
    return Math.PI / 2 + (turn * 2 * Math.PI) / players;
  }

  // -- the header and the parts that never change -------------------------------------------
  function header() {
    const options = Object.entries(data.options).map(([key, value]) => key + "=" + value);
    $("title").textContent = [data.title, players + " players", ...options].join(" · ");
    const lines = [data.viewpoint];
    if (data.teams.length) {
      lines.push("teams: " + data.teams.map((team) => team.map(seatName).join(" & ")).join(" against "));
    }
    $("subtitle").textContent = lines.join(" · ");
    if (data.stopped) {
      $("stopped").hidden = false;
      $("stopped").textContent =
        "The record stops following the rules at " + data.stopped + ": shown up to there.";
    }
    const sheet = $("score-sheet");
    const head = sheet.createTHead().insertRow();
    head.appendChild(el("th", "", "deal"));
    for (let seat = 0; seat < players; seat++) head.appendChild(el("th", "", data.seats[seat].label));
    sheet.createTBody();
    const blob = new Blob([JSON.stringify(data.record, null, 2)], { type: "application/json" });
    $("record-link").href = URL.createObjectURL(blob);
    if (data.record.note) $("record-note").textContent = "(" + data.record.note + ")";
    $("slider").max = String(frames.length);
  }

  // -- one frame ------------------------------------------------------------------------
  function drawSeats(frame) {
    const seats = $("seats");
    seats.replaceChildren();
    for (let seat = 0; seat < players; seat++) {
      const box = el("div", "seat");
      box.dataset.seat = String(seat);
      const a = angle(seat);
      box.style.left = 50 + 33 * Math.cos(a) + "%";
      box.style.top = 50 + 37 * Math.sin(a) + "%";
      if (frame.to_act.includes(seat)) box.classList.add("to-act");
      if (frame.trick_winner === seat) box.classList.add("winner");
      const head = el("div", "seat-head", seatName(seat));
      if (frame.dealer === seat) {
        const badge = el("span", "badge", "D");
        badge.title = "dealer";
        head.appendChild(badge);
      }
      if (frame.totals.length) head.appendChild(el("span", "total", frame.totals[seat]));
      box.appendChild(head);
      const hand = frame.hands[seat];
      const row = el("div", "hand");
      if (hand.cards) {
        row.dataset.cards = hand.cards.join(" ");
        hand.cards.forEach((text) => row.appendChild(card(text)));
        if (!hand.cards.length) row.appendChild(el("span", "empty", "no cards"));
      } else {
        row.classList.add("hidden");
        row.dataset.count = String(hand.count);
        for (let i = 0; i < hand.count; i++) row.appendChild(back());
        if (!hand.count) row.appendChild(el("span", "empty", "no cards"));
      }
      box.appendChild(row);
      box.appendChild(suited(el("div", "notes"), frame.notes[seat].join(" · ")));
      seats.appendChild(box);
    }
  }

  function drawTable(frame) {
    const chips = $("chips");
    chips.replaceChildren(...frame.chips.map((chip) => suited(el("li"), chip)));
    const trick = $("trick");
    trick.replaceChildren();
    frame.trick.forEach((played, order) => {
      const node = card(played.card);
      const a = angle(played.seat);
      node.style.left = 70 * Math.cos(a) + "px";
      node.style.top = 62 * Math.sin(a) + "px";
      node.style.zIndex = String(order + 1);
      node.dataset.seat = String(played.seat);
      if (played.seat === frame.trick_winner) node.classList.add("winner");
      trick.appendChild(node);
    });
  }

  function drawScores(frame, index) {
    const justScored = frame.scored > (index > 0 ? frames[index - 1].scored : 0);
    const body = $("score-sheet").tBodies[0];
    body.replaceChildren();
    data.deals.slice(0, frame.scored).forEach((deal) => {
      const row = body.insertRow();
      row.dataset.deal = String(deal.number);
      if (justScored && row === body.rows[frame.scored - 1]) row.classList.add("now");
      row.appendChild(el("td", "", deal.number));
      deal.scores.forEach((score, seat) => {
        const cell = el("td");
        const shown = el("span", "score", signed(score));
        if (SIGNED && score) shown.classList.add(score > 0 ? "plus" : "minus");
        cell.appendChild(shown);
        cell.appendChild(el("span", "total", deal.totals[seat]));
        row.appendChild(cell);
      });
    });
  }

  function drawResult(frame) {
    const panel = $("result-panel");
    panel.hidden = !frame.over || !data.result;
    if (panel.hidden) return;
    const table = $("places");
    table.replaceChildren();
    const head = table.createTHead().insertRow();
    const changes = data.ratings.changes;
    for (const title of ["place", "seat", "total"].concat(changes ? ["rating"] : [])) {
      head.appendChild(el("th", "", title));
    }
    const body = table.createTBody();
    const order = [...Array(players).keys()].sort(
      (a, b) => data.result.places[a] - data.result.places[b] || a - b
    );
    for (const seat of order) {
      const row = body.insertRow();
      row.dataset.seat = String(seat);
      row.appendChild(el("td", "place", data.result.places[seat]));
      row.appendChild(el("td", "", seatName(seat)));
      row.appendChild(el("td", "total", data.result.totals[seat]));
      if (changes) {
        const change = changes[seat];
        const cell = el("td", change > 0 ? "plus" : change < 0 ? "minus" : "", (change > 0 ? "+" : "") + change);
        row.appendChild(cell);
      }
    }
    $("rating-note").textContent = data.ratings.note;
  }

  const dealStart = [];
  frames.forEach((frame, index) => {
    dealStart.push(index > 0 && frames[index - 1].deal_index === frame.deal_index ? dealStart[index - 1] : index);
  });

  function drawLog(index) {
    const log = $("log");
    log.replaceChildren();
    for (let at = dealStart[index]; at <= index; at++) {
      for (const line of frames[at].log) {
        log.appendChild(suited(el("div", at === index ? "now" : ""), line || " "));
      }
    }
    log.scrollTop = log.scrollHeight;
  }

  function show(index) {
    index = Math.max(0, Math.min(frames.length - 1, index));
    if (index === current || !frames.length) return;
    current = index;
    const frame = frames[index];
    drawSeats(frame);
    drawTable(frame);
    drawScores(frame, index);
    drawResult(frame);
    drawLog(index);
    $("caption").replaceChildren();
    suited($("caption"), frame.caption);
    $("position").textContent = "deal " + frame.deal + " · step " + (index + 1) + " of " + frames.length;
    $("slider").value = String(index + 1);
    $("first").disabled = $("prev").disabled = $("prev-deal").disabled = index === 0;
    $("last").disabled = $("next").disabled = $("next-deal").disabled = index === frames.length - 1;
    document.body.dataset.step = String(index + 1);
    document.body.dataset.deal = String(frame.deal);
    // The address follows a moment after the last step: browsers ignore most history
    // rewrites made in quick succession (a key held down steps many times a second).
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => rememberStep(index + 1), 150);
  }

  let hashTimer = 0;
  function rememberStep(step) {
    try {
      history.replaceState(null, "", "#step=" + step);
    } catch (error) {
      location.replace("#step=" + step); // where a file: page may not rewrite its history
    }
  }

  function nextDeal() {
    let at = current + 1;
    while (at < frames.length && dealStart[at] !== at) at++;
    show(Math.min(at, frames.length - 1));
  }
  function previousDeal() {
    const start = dealStart[current];
    show(start < current ? start : dealStart[Math.max(0, start - 1)]);
  }

  const keys = {
    ArrowRight: () => show(current + 1),
    ArrowLeft: () => show(current - 1),
    Home: () => show(0),
    End: () => show(frames.length - 1),
    PageDown: nextDeal,
    PageUp: previousDeal,
  };
  document.addEventListener("keydown", (event) => {
    const move = keys[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    move();
  });
  $("first").addEventListener("click", keys.Home);
  $("prev").addEventListener("click", keys.ArrowLeft);
  $("next").addEventListener("click", keys.ArrowRight);
  $("last").addEventListener("click", keys.End);
  $("next-deal").addEventListener("click", nextDeal);
  $("prev-deal").addEventListener("click", previousDeal);
  $("slider").addEventListener("input", (event) => show(Number(event.target.value) - 1));

  header();
  document.body.dataset.steps = String(frames.length);
  const asked = /step=(\d+)/.exec(location.hash);
  show(asked ? Number(asked[1]) - 1 : data.start);
  document.body.dataset.ready = "true";
})();
