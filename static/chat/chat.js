// LegalMem chat page: plain JS over the /ws/chat/ protocol (README "Chat protocol").
// The server is the source of truth: on (re)connect and after each answer the thread is
// reloaded from /api/chat/conversations/<id>/messages/, so nothing is lost or duplicated.
(function () {
  "use strict";
  const app = document.getElementById("chat-app");
  const t = (key) => app.dataset["i18n" + key.charAt(0).toUpperCase() + key.slice(1)] || key;
  const $ = (id) => document.getElementById(id);
  const messagesEl = $("messages"), recalledEl = $("recalled"), planEl = $("plan");
  const form = $("ask-form"), question = $("question"), sendBtn = $("send"), stopBtn = $("stop");
  const errorEl = $("error"), statusEl = $("connection-status"), matterEl = $("matter");

  let socket = null, conversationId = null, streamingEl = null, retry = 0, busy = false, lastAsked = "";

  function showError(text) { errorEl.textContent = text; errorEl.hidden = !text; }
  function setBusy(value) { busy = value; sendBtn.disabled = value; stopBtn.disabled = !value; }

  function messageItem(role, text, status) {
    const li = document.createElement("li");
    li.className = role + (status && status !== "complete" ? " " + status : "");
    if (status === "cancelled") li.dataset.statusLabel = t("cancelled");
    if (status === "failed") li.dataset.statusLabel = t("failed");
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = role === "user" ? t("you") : t("assistant");
    const body = document.createElement("span");
    body.className = "body";
    body.textContent = text;
    li.append(meta, body);
    messagesEl.append(li);
    messagesEl.scrollTop = messagesEl.scrollHeight;
    return li;
  }

  function renderRecalled(notes, plan) {
    recalledEl.replaceChildren();
    planEl.textContent = plan && plan.layers ? plan.layers.join(" → ") : "";
    if (!notes || !notes.length) {
      const p = document.createElement("p");
      p.textContent = t("noMemory");
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
      h.innerHTML = '<span class="badge"></span>';
      h.firstChild.classList.add(layer);
      h.firstChild.textContent = items[0].layer_label || layer;
      group.append(h);
      for (const note of items) {
        const div = document.createElement("div");
        div.className = "note";
        div.dataset.noteId = note.id;
        const content = document.createElement("p");
        const said = (m) => "[" + (m.said_at || "").slice(0, 16).replace("T", " ") + " " + m.speaker + "] " + m.content;
        // a recalled turn: the question, then the reply under it (in the order they were said)
        const turn = note.partner ? [note, note.partner].sort((a, b) => (a.said_at < b.said_at ? -1 : 1)) : [note];
        content.textContent = note.kind === "message" ? turn.map(said).join("\n  ↳ ") : note.content;
        if (note.partner) content.style.whiteSpace = "pre-wrap";
        const why = document.createElement("details");
        const summary = document.createElement("summary");
        summary.textContent = t("why") + " · " + (note.score.total || 0).toFixed(3);
        const reasons = document.createElement("ul");
        for (const reason of note.reasons || []) {
          const li = document.createElement("li");
          li.textContent = reason;
          reasons.append(li);
        }
        const scores = document.createElement("p");
        scores.textContent = ["semantic", "keyword", "importance", "confidence", "graph", "recency"]
          .map((k) => k + " " + Number(note.score[k] || 0).toFixed(2)).join(" · ");
        const link = document.createElement("a");
        link.href = note.provenance_url;
        link.target = "_blank";
        link.textContent = t("provenance") + (note.source_id ? " (" + note.source_type + ":" + note.source_id + ")" : "");
        why.append(summary, scores, reasons);
        if (note.provenance_url) why.append(link);
        div.append(content, why);
        group.append(div);
      }
      recalledEl.append(group);
    }
  }

  async function loadConversation(id) {
    conversationId = id;
    document.querySelectorAll("#conversation-list a").forEach((a) =>
      a.classList.toggle("active", Number(a.dataset.conversation) === id));
    messagesEl.replaceChildren();
    if (!id) { renderRecalled([], null); return; }
    const response = await fetch("/api/chat/conversations/" + id + "/messages/", { credentials: "same-origin" });
    if (!response.ok) { showError("HTTP " + response.status); return; }
    const data = await response.json();
    for (const m of data.results) messageItem(m.role, m.content, m.status);
    if (!busy) renderRecalled([], null);
  }

  function addConversationLink(id, title) {
    if (document.querySelector('#conversation-list a[data-conversation="' + id + '"]')) return;
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "#";
    a.dataset.conversation = id;
    a.textContent = title || String(id);
    li.append(a);
    $("conversation-list").prepend(li);
  }

  function onFrame(frame) {
    switch (frame.type) {
      case "ready":
        statusEl.textContent = t("connected") + " · " + frame.engine;
        break;
      case "conversation":
        if (frame.created) addConversationLink(frame.conversation_id, frame.title);
        conversationId = frame.conversation_id;
        document.querySelectorAll("#conversation-list a").forEach((a) =>
          a.classList.toggle("active", Number(a.dataset.conversation) === conversationId));
        break;
      case "recalled":
        renderRecalled(frame.notes, frame.plan);
        streamingEl = messageItem("assistant", "", "streaming");
        break;
      case "token":
        if (streamingEl) {
          streamingEl.querySelector(".body").textContent += frame.text;
          messagesEl.scrollTop = messagesEl.scrollHeight;
        }
        break;
      case "done":
        setBusy(false);
        if (streamingEl) {
          streamingEl.querySelector(".body").textContent = frame.reply;
          streamingEl.className = "assistant" + (frame.status !== "complete" ? " " + frame.status : "");
          if (frame.status === "cancelled") streamingEl.dataset.statusLabel = t("cancelled");
          if (frame.status === "failed") streamingEl.dataset.statusLabel = t("failed");
          streamingEl.dataset.messageId = frame.message_id;
        }
        streamingEl = null;
        break;
      case "error":
        showError(frame.message);
        // Refused before it was saved (e.g. bad_request): give the words back to edit and resend.
        if (!frame.user_message_id && busy && !question.value) question.value = lastAsked;
        if (!frame.user_message_id) setBusy(false);
        break;
    }
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws/chat/");
    socket.onopen = () => {
      retry = 0;
      if (conversationId) loadConversation(conversationId);
    };
    socket.onmessage = (event) => onFrame(JSON.parse(event.data));
    socket.onclose = () => {
      statusEl.textContent = t("reconnecting");
      if (busy) { setBusy(false); streamingEl = null; }
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 500 * 2 ** retry);
    };
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text || busy || !socket || socket.readyState !== WebSocket.OPEN) return;
    lastAsked = text;
    showError("");
    setBusy(true);
    messageItem("user", text, "complete");
    const frame = { type: "ask", question: text };
    if (conversationId) frame.conversation_id = conversationId;
    else if (matterEl.value) frame.matter_id = Number(matterEl.value);
    socket.send(JSON.stringify(frame));
    question.value = "";
  });
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  stopBtn.addEventListener("click", () => {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "cancel" }));
  });
  $("new-conversation").addEventListener("click", () => loadConversation(null));
  $("conversation-list").addEventListener("click", (event) => {
    const a = event.target.closest("a[data-conversation]");
    if (!a) return;
    event.preventDefault();
    if (busy) return;
    matterEl.value = a.dataset.matter || "";
    loadConversation(Number(a.dataset.conversation));
  });

  connect();
})();
