// The labelling page. Every text from the board (question, key, response, grader details) is untrusted:
// it is set with textContent, never parsed as HTML.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
let current = null;
let busy = false;

function $(id) { return document.getElementById(id); }

function setText(id, text) { $(id).textContent = text; }

function list(id, lines) {
  const target = $(id);
  target.replaceChildren(...lines.map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
}

async function call(path, body) {
  const options = { headers: { "X-Dualboard-Token": token } };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const reply = await fetch(path, options);
  const data = await reply.json();
  if (!reply.ok) throw new Error(data.error || reply.statusText);
  return data;
}

function show(state) {
  const p = state.progress;
  setText("progress", `${state.labeller}: ${p.mine} labels of yours · ${p.labelled} of ${p.items} distinct answers `
    + `labelled (${p.answers} answers in all)`);
  list("agreement", p.agreement.map((row) => row.sentence));
  for (const id of ["mark", "mark-label", "give-mark"]) $(id).hidden = !p.partial;
  if (state.revealed) {
    $("last").hidden = false;
    list("revealed", Object.entries(state.revealed).map(([grader, v]) => `${grader}: ${v.scores.join(", ")} — ${v.detail}`));
  }
  current = state.item;
  $("item").hidden = !current;
  $("done").hidden = !!current;
  if (!current) return;
  setText("question-id", current.question_id);
  setText("prompt", current.prompt);
  list("choices", current.choices);
  setText("answer", current.answer || "(none: the key is a reference)");
  setText("reference", current.reference || "(none)");
  setText("response", current.response);
  setText("covers", current.answers > 1 ? `(given ${current.answers} times: one label covers them all)` : "");
  $("mark").value = "";
}

async function act(path, body) {
  if (busy) return;
  busy = true;
  $("error").hidden = true;
  try {
    show(await call(path, body));
  } catch (error) {
    $("error").hidden = false;
    setText("error", String(error.message || error));
  } finally {
    busy = false;
  }
}

function label(value) {
  if (current) act("/api/label", { question_id: current.question_id, response_sha256: current.response_sha256, label: value });
}

function giveMark() {
  const raw = $("mark").value.trim();
  if (raw !== "") label(Number(raw));
}

$("pass").addEventListener("click", () => label("pass"));
$("fail").addEventListener("click", () => label("fail"));
$("give-mark").addEventListener("click", giveMark);
$("skip").addEventListener("click", () => current && act("/api/skip", { question_id: current.question_id, response_sha256: current.response_sha256 }));
$("undo").addEventListener("click", () => act("/api/undo", {}));
$("mark").addEventListener("keydown", (event) => {
  if (event.key === "Enter") { event.preventDefault(); giveMark(); }
  if (event.key === "Escape") $("mark").blur();
});
document.addEventListener("keydown", (event) => {
  if (event.target === $("mark") || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "m" && $("mark").hidden) return;
  const keys = { p: () => $("pass").click(), f: () => $("fail").click(), s: () => $("skip").click(),
    u: () => $("undo").click(), m: () => $("mark").focus() };
  if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
});

act("/api/next");
