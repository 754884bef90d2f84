// LegalMem chat page: plain JS over the /ws/chat/ protocol (docs/chat-page.md).
// The server is the source of truth: each conversation has its own URL (/chat/<id>/); opening
// it, reloading, or going back/forward reads /api/chat/conversations/<id>/messages/, which
// returns every reply with the memories recalled for it, so the thread and the panel come back.
(function () {
  "use strict";
  const app = document.getElementById("chat-app");
  const t = (key) => app.dataset["i18n" + key.charAt(0).toUpperCase() + key.slice(1)] || key;
  const L = JSON.parse(document.getElementById("memory-labels").textContent);
  const label = (group, key) => (L[group] && L[group][key]) || key;
  const $ = (id) => document.getElementById(id);
  const messagesEl = $("messages"), recalledEl = $("recalled"), planEl = $("plan");
  const form = $("ask-form"), question = $("question"), sendBtn = $("send"), stopBtn = $("stop");
  const errorEl = $("error"), noticeEl = $("notice"), statusEl = $("connection-status"), matterEl = $("matter");
  const listEl = $("conversation-list");

  let socket = null, retry = 0, busy = false, lastAsked = "";
  let conversationId = Number(app.dataset.conversationId) || null;
  let conversationMatter = app.dataset.conversationMatter || "";
  let streamingEl = null, pendingEl = null, lastPlan = null;
  const recalledByMessage = new Map(); // assistant message id -> {notes, plan}

  // Control characters would render as empty boxes: show them as visible escapes instead.
  const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
  const visible = (text) => String(text == null ? "" : text)
    .replace(CONTROL, (c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0"));
  const oneLine = (text) => visible(String(text == null ? "" : text).replace(/[\t\r\n]+/g, " ")).trim();
  // One clock on the page: every time in the user's time zone (the server's, data-time-zone),
  // as the server writes the list, never the browser's own clock.
  const clock = new Intl.DateTimeFormat("en-CA", {
    timeZone: app.dataset.timeZone || undefined, hourCycle: "h23",
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
  });
  const when = (date) => {
    const part = Object.fromEntries(clock.formatToParts(date).map((p) => [p.type, p.value]));
    return part.year + "-" + part.month + "-" + part.day + " " + part.hour + ":" + part.minute;
  };

  function showError(text) { errorEl.textContent = text || ""; errorEl.hidden = !text; }
  function showNotice(text) { noticeEl.textContent = text || ""; noticeEl.hidden = !text; }
  function setBusy(value) { busy = value; sendBtn.disabled = value; stopBtn.disabled = !value; }

  // --- the thread -----------------------------------------------------------------------

  function setStatus(li, status, reason) {
    li.dataset.status = status;
    li.className = li.dataset.role + (status && status !== "complete" && status !== "sent" ? " " + status : "");
    const meta = li.querySelector(".meta");
    const word = li.dataset.role === "assistant" || status === "rejected" || status === "pending" ? label("status", status) : "";
    meta.dataset.statusLabel = word;
    meta.querySelector(".reply-status").textContent = word ? " · " + word : "";
    const reasonEl = li.querySelector(".reason");
    reasonEl.textContent = reason ? t("rejectedReason") + ": " + reason : "";
    reasonEl.hidden = !reason;
  }

  // An answer's source markers [n] as links to their item's source (docs/citations.md): only a
  // number of this answer's recalled items (as the reader may still see them) becomes a link;
  // hovering one highlights its item in the panel.
  function renderAnswer(body, text, notes) {
    const byNumber = new Map((notes || []).filter((n) => n.number && n.source_url).map((n) => [n.number, n]));
    body.replaceChildren();
    const marker = /\[(\d{1,4})\]/g;
    let last = 0, m;
    while ((m = marker.exec(text))) {
      const note = byNumber.get(Number(m[1]));
      if (!note) continue;
      body.append(visible(text.slice(last, m.index)));
      const a = document.createElement("a");
      a.className = "cite";
      a.href = note.source_url;
      a.textContent = m[0];
      a.dataset.number = m[1];
      a.title = oneLine(note.citation || note.content).slice(0, 120);
      a.addEventListener("mouseenter", () => highlightSource(a.dataset.number));
      a.addEventListener("mouseleave", () => highlightSource(null));
      body.append(a);
      last = marker.lastIndex;
    }
    body.append(visible(text.slice(last)));
  }

  function highlightSource(number) {
    recalledEl.querySelectorAll(".note").forEach((el) =>
      el.classList.toggle("cited-source", number !== null && el.dataset.number === String(number)));
  }

  function messageItem(role, text, status, id) {
    const li = document.createElement("li");
    li.dataset.role = role;
    if (id) { li.dataset.messageId = id; li.id = "message-" + id; }
    const meta = document.createElement("span");
    meta.className = "meta";
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = role === "user" ? t("you") : t("assistant");
    const state = document.createElement("span");
    state.className = "reply-status";
    meta.append(who, state);
    const body = document.createElement("span");
    body.className = "body";
    body.textContent = visible(text);
    const reason = document.createElement("span");
    reason.className = "reason";
    li.append(meta, body, reason);
    if (role === "assistant") {
      const show = document.createElement("button");
      show.type = "button";
      show.className = "link show-memories";
      show.textContent = t("showMemories");
      show.addEventListener("click", () => selectAnswer(li));
      meta.append(show);
    }
    setStatus(li, status);
    messagesEl.append(li);
    messagesEl.scrollTop = messagesEl.scrollHeight;
    return li;
  }

  function selectAnswer(li) {
    messagesEl.querySelectorAll("li.selected").forEach((el) => el.classList.remove("selected"));
    if (!li) { renderRecalled(null, null); return; }
    li.classList.add("selected");
    const saved = recalledByMessage.get(Number(li.dataset.messageId)) || { notes: [], plan: null };
    showHeldAt(saved.heldAt || null);
    renderRecalled(saved.notes, saved.plan);
  }

  // --- the recalled-memory panel ------------------------------------------------------------

  function scoreLine(score, kind) {
    if (kind === "document") {
      // a document passage is ranked by its keywords and its meaning, fused: those ranks, not zeros
      return ["keyword_rank", "dense_rank"].filter((k) => score[k])
        .map((k) => label("score", k) + " " + score[k])
        .concat([label("score", "total") + " " + Number(score.total || 0).toFixed(3)]).join(" · ");
    }
    return ["semantic", "keyword", "importance", "confidence", "graph", "recency"]
      .map((k) => label("score", k) + " " + Number(score[k] || 0).toFixed(2)).join(" · ") +
      " · " + label("score", "total") + " " + Number(score.total || 0).toFixed(3);
  }

  function noteItem(note) {
    const div = document.createElement("div");
    div.className = "note" + (note.changed ? " changed" : "");
    div.dataset.noteId = note.id;
    if (note.number) div.dataset.number = note.number;
    const content = document.createElement("p");
    // the product's own speakers ("assistant", "offline") by their translated names, people by name
    const speaker = (m) => (L.speaker || {})[m.speaker] || m.speaker || label("speaker", m.role);
    const said = (m) => "[" + (m.said_at || "").slice(0, 16).replace("T", " ") + " " + speaker(m) + "] " + m.content;
    // a recalled turn: the question, then the reply under it (in the order they were said)
    const turn = note.partner ? [note, note.partner].sort((a, b) => (a.said_at < b.said_at ? -1 : 1)) : [note];
    content.textContent = (note.number ? "[" + note.number + "] " : "") +
      visible(note.kind === "message" ? turn.map(said).join("\n  ↳ ") : note.content);
    if (note.partner) content.style.whiteSpace = "pre-wrap";
    const facts = document.createElement("p");
    facts.className = "facts";
    const bits = [];
    if (note.category) bits.push(t("category") + ": " + label("category", note.category));
    if (note.matter_reference || note.matter) bits.push(oneLine(note.matter_reference || note.matter));
    facts.textContent = bits.join(" · ");
    const why = document.createElement("details");
    const summary = document.createElement("summary");
    // the panel is in recall order: the summary shows the rank it is sorted by (the scores are inside)
    summary.textContent = t("why") + " · " + label("score", "rank") + " " + (note.rank || "—");
    const scores = document.createElement("p");
    scores.className = "scores";
    scores.textContent = scoreLine(note.score || {}, note.kind);
    const reasons = document.createElement("ul");
    for (const reason of note.reasons || []) {
      const li = document.createElement("li");
      li.textContent = visible(reason);
      reasons.append(li);
    }
    why.append(summary, scores, reasons);
    if (note.kind === "document" && note.url) {
      // a document passage: its citation opens the viewer at the page, the passage highlighted
      const cite = document.createElement("a");
      cite.href = note.url;
      cite.target = "_blank";
      cite.className = "citation";
      cite.textContent = note.citation;
      div.append(cite);
    } else if (note.provenance_url) {
      const link = document.createElement("a");
      link.href = note.provenance_url;
      link.target = "_blank";
      link.className = "provenance";
      // "Where it came from: Chat": the note's page, with the turn it was said in
      link.textContent = t("provenance").replace("{source}", label("source", note.source_type));
      why.append(link);
    }
    div.append(content);
    if (note.document_url) {
      // a note the write path made from a document: its source page, the passage highlighted
      const source = document.createElement("a");
      source.href = note.document_url;
      source.target = "_blank";
      source.className = "citation";
      source.textContent = note.document_citation || t("source");
      div.append(source);
    }
    if (bits.length) div.append(facts);
    const contradictions = note.contradictions || [];
    if (contradictions.length) div.append(contradictionFlag(contradictions));
    if (note.weak) { // recalled, but it does not bear on the question (docs/citations.md)
      div.classList.add("weak");
      const weak = document.createElement("p");
      weak.className = "weak-note";
      weak.textContent = t("weak");
      div.append(weak);
    }
    if (note.changed) {
      const changed = document.createElement("p");
      changed.className = "changed-note";
      changed.textContent = t("changed");
      div.append(changed);
    }
    div.append(why);
    return div;
  }

  // Another current note of the same slot says otherwise: flagged until one is corrected.
  function contradictionFlag(others) {
    const flag = document.createElement("div");
    flag.className = "contradiction";
    const title = document.createElement("p");
    title.className = "contradiction-title";
    title.textContent = t("contradiction");
    flag.append(title);
    for (const other of others) {
      const line = document.createElement("p");
      const link = document.createElement("a");
      link.href = other.url;
      link.target = "_blank";
      link.textContent = oneLine(other.content);
      const said = other.said_at ? " (" + when(new Date(other.said_at)) + ")" : "";
      line.append((other.other_is_newer ? t("contradictionNewer") : t("contradictionOlder")) + " ", link, said);
      flag.append(line);
    }
    return flag;
  }

  // The "as of" chip: the day this answer's memory was read at (chosen, or named by the question).
  const heldAtEl = $("held-at"), heldAtChip = $("held-at-chip");
  let lastHeldAt = null;
  function showHeldAt(heldAt) {
    heldAtChip.hidden = !heldAt;
    if (!heldAt) return;
    const words = heldAt.words ? "（" + oneLine(heldAt.words) + "）" : "";
    heldAtChip.querySelector("span").textContent = t("heldAt") + " " + heldAt.on + words + " · " + t("heldAtLater");
  }
  $("held-at-clear").addEventListener("click", () => { heldAtEl.value = ""; showHeldAt(null); });

  function renderRecalled(notes, plan, nothingOn) {
    recalledEl.replaceChildren();
    planEl.textContent = plan && plan.layers && plan.layers.length
      ? t("plan") + ": " + plan.layers.map((layer) => label("layer", layer)).join(" → ") : "";
    if (notes === null) {
      const p = document.createElement("p");
      p.className = "hint";
      p.textContent = t("noAnswerSelected");
      recalledEl.append(p);
      return;
    }
    if (!notes.length) {
      const p = document.createElement("p");
      p.textContent = nothingOn && nothingOn.length
        ? t("nothingOn") + " " + nothingOn.map((name) => "“" + oneLine(name) + "”").join("、") : t("noMemory");
      recalledEl.append(p);
      return;
    }
    const groups = new Map();
    for (const note of notes) {
      if (!groups.has(note.layer)) groups.set(note.layer, []);
      groups.get(note.layer).push(note);
    }
    for (const [layer, items] of groups) {
      const group = document.createElement("div");
      group.className = "layer-group";
      const h = document.createElement("h3");
      const badge = document.createElement("span");
      badge.className = "badge " + layer;
      badge.textContent = label("layer", layer);
      h.append(badge);
      group.append(h, ...items.map(noteItem));
      recalledEl.append(group);
    }
  }

  // --- conversations and their URLs ---------------------------------------------------------

  const pathFor = (id) => (id ? "/chat/" + id + "/" : "/chat/");
  const idFromPath = () => { const m = location.pathname.match(/^\/chat\/(\d+)\/$/); return m ? Number(m[1]) : null; };

  const exportEl = document.getElementById("export-conversation");

  function markActive() {
    listEl.querySelectorAll("a[data-conversation]").forEach((a) =>
      a.classList.toggle("active", Number(a.dataset.conversation) === conversationId));
    if (exportEl) { // the open conversation as Markdown, with each answer's numbered sources
      exportEl.hidden = !conversationId;
      exportEl.href = conversationId ? pathFor(conversationId) + "export.md" : "";
    }
  }

  function go(id) {
    if (location.pathname !== pathFor(id)) history.pushState({ conversation: id }, "", pathFor(id));
  }

  let loads = 0; // the latest loadConversation call: only its answer is shown

  async function loadConversation(id) {
    const load = ++loads;
    conversationId = id;
    markActive();
    messagesEl.replaceChildren();
    recalledByMessage.clear();
    pendingEl = null;
    streamingEl = null;
    showNotice("");
    if (!id) { conversationMatter = ""; renderRecalled(null, null); return; }
    const link = listEl.querySelector('a[data-conversation="' + id + '"]');
    if (link) { conversationMatter = link.dataset.matter || ""; matterEl.value = conversationMatter; }
    const response = await fetch("/api/chat/conversations/" + id + "/messages/", { credentials: "same-origin" });
    // another conversation was opened meanwhile, or this one again (a click while the socket
    // reconnects, a turn finishing in another tab): only the latest load shows its messages
    if (load !== loads || id !== conversationId) return;
    if (!response.ok) { showError(response.status === 404 ? t("notFound") : "HTTP " + response.status); return; }
    const data = await response.json();
    if (load !== loads) return;
    let last = null;
    for (const m of data.results) {
      const li = messageItem(m.role, m.content, m.status, m.id);
      if (m.role === "assistant") {
        renderAnswer(li.querySelector(".body"), m.content, m.recalled);
        recalledByMessage.set(m.id, { notes: m.recalled || [], plan: m.recall_plan || null });
        last = li;
      }
    }
    if (!busy) selectAnswer(last);
    // a source marker of another answer led here: show the turn it cited
    const target = location.hash.startsWith("#message-") ? document.getElementById(location.hash.slice(1)) : null;
    if (target) { target.classList.add("cited-target"); target.scrollIntoView({ block: "center" }); }
  }

  function conversationLink(id, title, matterId) {
    let a = listEl.querySelector('a[data-conversation="' + id + '"]');
    if (!a) {
      a = document.createElement("a");
      a.href = pathFor(id);
      a.className = "conversation-link";
      a.dataset.conversation = id;
      a.dataset.matter = matterId || "";
      const name = document.createElement("span");
      name.className = "title";
      name.textContent = oneLine(title) || String(id);
      a.title = name.textContent;
      const small = document.createElement("small");
      small.className = "when";
      const option = matterId ? matterEl.querySelector('option[value="' + matterId + '"]') : null;
      small.append(document.createElement("time"));
      if (option) small.append(" · " + option.textContent.trim().split(" ")[0]);
      a.append(name, small);
      const li = document.createElement("li");
      li.append(a);
      listEl.prepend(li);
    }
    const now = new Date();
    const time = a.querySelector("time");
    time.dateTime = now.toISOString();
    time.textContent = when(now);
    listEl.prepend(a.closest("li")); // newest first
  }

  // --- the socket ----------------------------------------------------------------------------

  function onFrame(frame) {
    switch (frame.type) {
      case "ready":
        // "offline" → 离线引擎, "llm:<model>" → 语言模型 <model>: no internal key on the screen
        const engine = frame.engine || "";
        statusEl.textContent = t("connected") + " · " + (engine === "offline" ? t("offlineEngine")
          : engine.startsWith("llm:") ? t("llmEngine") + " " + engine.slice(4) : engine);
        break;
      case "conversation":
        conversationId = frame.conversation_id;
        conversationMatter = frame.matter_id ? String(frame.matter_id) : "";
        conversationLink(frame.conversation_id, frame.title, frame.matter_id);
        markActive();
        // the blank /chat/ page becomes the new conversation's URL (back then leads to the previous one)
        if (frame.created && location.pathname === pathFor(null)) {
          history.replaceState({ conversation: conversationId }, "", pathFor(conversationId));
        } else {
          go(conversationId);
        }
        if (pendingEl) { pendingEl.dataset.messageId = frame.user_message_id; setStatus(pendingEl, "sent"); pendingEl = null; }
        break;
      case "recalled":
        lastHeldAt = frame.held_at || null;
        showHeldAt(lastHeldAt);
        lastPlan = frame.plan;
        streamingEl = messageItem("assistant", "", "streaming");
        messagesEl.querySelectorAll("li.selected").forEach((el) => el.classList.remove("selected"));
        streamingEl.classList.add("selected");
        renderRecalled(frame.notes, frame.plan, frame.nothing_on);
        break;
      case "token":
        if (streamingEl) {
          streamingEl.querySelector(".body").textContent += visible(frame.text);
          messagesEl.scrollTop = messagesEl.scrollHeight;
        }
        break;
      case "done":
        setBusy(false);
        recalledByMessage.set(frame.message_id, { notes: frame.notes || [], plan: lastPlan, heldAt: lastHeldAt });
        if (!streamingEl && frame.conversation_id === conversationId) {
          streamingEl = messageItem("assistant", "", "streaming"); // failed before anything was recalled
        }
        if (streamingEl) {
          renderAnswer(streamingEl.querySelector(".body"), frame.reply, frame.notes);
          streamingEl.dataset.messageId = frame.message_id;
          streamingEl.id = "message-" + frame.message_id;
          setStatus(streamingEl, frame.status);
          const shown = messagesEl.contains(streamingEl);
          if (shown && (streamingEl.classList.contains("selected") || !messagesEl.querySelector("li.selected"))) {
            selectAnswer(streamingEl);
          }
        }
        streamingEl = null;
        break;
      case "conversation_updated":
        // a turn finished in another tab (maybe served by another server): list it, and show it if open here
        conversationLink(frame.conversation_id, frame.title, frame.matter_id);
        markActive();
        if (frame.conversation_id === conversationId && !busy) loadConversation(conversationId);
        break;
      case "error":
        showError(frame.message);
        if (!frame.user_message_id) {
          // never saved (rate limit, too long, bad input …): the question is shown as rejected,
          // and its words go back into the box to edit and resend
          if (pendingEl) { setStatus(pendingEl, "rejected", frame.message); pendingEl = null; }
          if (busy && !question.value) question.value = lastAsked;
          setBusy(false);
        }
        break;
    }
  }

  // A question asked before the socket is open (just after the page loads, or while it
  // reconnects) waits here and is sent as soon as it opens: it is never dropped.
  let queuedAsk = null;

  function sendOrQueue(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
    else queuedAsk = frame;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/chat/");
    socket.onopen = () => {
      retry = 0;
      if (conversationId) loadConversation(conversationId);
      if (queuedAsk) { const frame = queuedAsk; queuedAsk = null; socket.send(JSON.stringify(frame)); }
    };
    socket.onmessage = (event) => onFrame(JSON.parse(event.data));
    socket.onclose = () => {
      statusEl.textContent = t("reconnecting");
      if (busy && !queuedAsk) { setBusy(false); streamingEl = null; }
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 500 * 2 ** retry);
    };
  }

  function stopAnswer() {
    if (queuedAsk) {  // never sent: take it back into the box
      queuedAsk = null;
      if (pendingEl) { pendingEl.remove(); pendingEl = null; }
      if (!question.value) question.value = lastAsked;
      setBusy(false);
      return;
    }
    if (busy && socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "cancel" }));
  }

  function newConversation() {
    stopAnswer();
    loadConversation(null);
    go(null);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text || busy) return;
    lastAsked = text;
    showError("");
    showNotice("");
    setBusy(true);
    pendingEl = messageItem("user", text, "pending");
    const frame = { type: "ask", question: text };
    if (heldAtEl.value) frame.as_of = heldAtEl.value; // read memory as it held that day
    if (conversationId) frame.conversation_id = conversationId;
    else if (matterEl.value) frame.matter_id = Number(matterEl.value);
    sendOrQueue(frame);
    question.value = "";
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  stopBtn.addEventListener("click", stopAnswer);
  $("new-conversation").addEventListener("click", newConversation);
  matterEl.addEventListener("change", () => {
    // a conversation belongs to one matter: another matter starts a new conversation
    if (conversationId && matterEl.value !== conversationMatter) {
      newConversation();
      showNotice(t("matterChanged"));
    }
  });
  listEl.addEventListener("click", (event) => {
    const a = event.target.closest("a[data-conversation]");
    if (!a || event.ctrlKey || event.metaKey || event.shiftKey) return; // let a new tab open
    event.preventDefault();
    if (busy) return;
    loadConversation(Number(a.dataset.conversation));
    go(conversationId);
  });
  window.addEventListener("popstate", () => {
    stopAnswer();
    const id = idFromPath();
    if (!id) matterEl.value = "";
    loadConversation(id);
  });

  history.replaceState({ conversation: conversationId }, "", location.pathname + location.hash);
  renderRecalled(null, null);
  connect();
})();
