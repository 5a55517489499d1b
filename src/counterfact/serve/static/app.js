// The recourse page: a form generated from /api/schema, the user's feedback, and answers as cards.
// Plain browser JavaScript, no build step, nothing loaded from elsewhere.
"use strict";

(() => {
  const state = {
    schema: null,
    methods: [],
    exampleIndex: 0,
    token: sessionStorage.getItem("counterfact-token"),
    lastAnswer: null,
  };
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------- utilities
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("data-") || k.startsWith("aria-") || ["role", "for", "inputmode"].includes(k)) node.setAttribute(k, v);
      else if (v === true) node.setAttribute(k, "");
      else node[k] = v;
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }

  // a feature name that wraps only after its underscores (never inside a word)
  function breakable(name) {
    const parts = String(name).split("_");
    const out = [];
    parts.forEach((p, i) => {
      out.push(p + (i < parts.length - 1 ? "_" : ""));
      if (i < parts.length - 1) out.push(document.createElement("wbr"));
    });
    return out;
  }

  function decimals(step) {
    if (!step || step <= 0) return null;
    return Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  }

  function fmtValue(feature, v) {
    if (v === null || v === undefined) return "";
    if (feature.kind === "integer") return String(Math.round(v));
    if (feature.kind === "real") {
      const d = decimals(feature.resolution);
      return d === null ? String(v) : (Math.round(v / feature.resolution) * feature.resolution).toFixed(d);
    }
    return String(v);
  }

  const pct = (p) => (p === null || p === undefined ? "n/a" : (100 * p).toFixed(1) + "%");
  const favLabel = () => {
    const s = state.schema;
    return s.favourable === null ? null : s.class_labels[String(s.favourable)] || String(s.favourable);
  };

  async function api(path, body) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (state.token) headers.Authorization = "Bearer " + state.token;
    const resp = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try {
      data = await resp.json();
    } catch (e) {
      data = { detail: resp.statusText };
    }
    if (resp.status === 401) $("token-box").hidden = false;
    if (!resp.ok) {
      const err = new Error((data && data.detail) || resp.statusText);
      err.status = resp.status;
      err.kind = (data && data.error) || String(resp.status);
      throw err;
    }
    return data;
  }

  function showLoadError(message) {
    const box = $("load-error");
    box.textContent = message;
    box.hidden = !message;
  }

  // --------------------------------------------------------------- form
  function hintFor(f) {
    if (f.actionability === "immutable") return "fixed";
    if (f.actionability === "increasing") return "can only increase";
    if (f.actionability === "decreasing") return "can only decrease";
    return null;
  }

  function numberInput(f, id, extra) {
    return el("input", {
      id,
      type: "number",
      min: f.lower,
      max: f.upper,
      step: f.resolution || "any",
      inputmode: f.kind === "integer" ? "numeric" : "decimal",
      ...extra,
    });
  }

  function buildForm() {
    const tbody = document.querySelector("#features tbody");
    tbody.textContent = "";
    for (const f of state.schema.features) {
      const fixed = f.actionability === "immutable";
      const vid = "v-" + f.name;
      let input;
      let domain;
      if (f.categories) {
        input = el("select", { id: vid, "data-feature": f.name });
        for (const c of f.categories) input.append(el("option", { value: String(c), text: String(c) }));
        domain = null;
      } else {
        input = numberInput(f, vid, { "data-feature": f.name });
        domain = el("span", { class: "domain", text: `${fmtValue(f, f.lower)} to ${fmtValue(f, f.upper)}` });
      }
      input.addEventListener("change", refreshDecision);
      const hint = hintFor(f);
      const toggle = fixed
        ? el("span", { text: "no (fixed)" })
        : el("input", { type: "checkbox", id: "c-" + f.name, checked: true, "aria-label": `I can change ${f.name}` });
      let range = el("span", { class: "muted" });
      if (!f.categories && !fixed) {
        range = el(
          "span",
          {},
          numberInput(f, "lo-" + f.name, { placeholder: fmtValue(f, f.lower), "aria-label": `lowest ${f.name} I could reach` }),
          el("span", { class: "sep", text: "to" }),
          numberInput(f, "hi-" + f.name, { placeholder: fmtValue(f, f.upper), "aria-label": `highest ${f.name} I could reach` }),
        );
      }
      if (!fixed) {
        toggle.addEventListener("change", () => {
          toggle.closest("tr").classList.toggle("off", !toggle.checked);
          for (const id of ["lo-", "hi-"]) {
            const box = $(id + f.name);
            if (box) box.disabled = !toggle.checked;
          }
        });
      }
      tbody.append(
        el(
          "tr",
          { class: fixed ? "fixed locked" : "", "data-feature": f.name },
          el("td", { class: "name" }, el("label", { for: vid }, ...breakable(f.name)), hint ? el("span", { class: "hint", text: hint }) : null),
          el("td", { class: "value" }, input, domain),
          el("td", { class: "toggle" }, toggle),
          el("td", { class: "range" }, range),
        ),
      );
    }
  }

  function setRow(row) {
    for (const f of state.schema.features) {
      const input = $("v-" + f.name);
      input.value = f.categories ? String(row[f.name]) : fmtValue(f, row[f.name]);
      input.removeAttribute("aria-invalid");
      for (const id of ["lo-", "hi-"]) {
        const box = $(id + f.name);
        if (box) box.value = "";
      }
    }
  }

  function readRow() {
    const row = {};
    const problems = [];
    for (const f of state.schema.features) {
      const input = $("v-" + f.name);
      input.removeAttribute("aria-invalid");
      if (f.categories) {
        // the option's text is String(category): map back to the category's JSON value
        row[f.name] = f.categories.find((c) => String(c) === input.value);
      } else {
        const v = input.value.trim() === "" ? NaN : Number(input.value);
        if (!Number.isFinite(v)) {
          input.setAttribute("aria-invalid", "true");
          problems.push(`Enter a number for ${f.name}.`);
        }
        row[f.name] = v;
      }
    }
    return { row, problems };
  }

  function readNumber(id) {
    const box = $(id);
    if (!box || box.disabled || box.value.trim() === "") return null;
    const v = Number(box.value);
    return Number.isFinite(v) ? v : null;
  }

  function readConstraints() {
    const c = {};
    const mutable = state.schema.features.filter((f) => f.actionability !== "immutable");
    const canChange = mutable.filter((f) => $("c-" + f.name).checked).map((f) => f.name);
    if (canChange.length < mutable.length) c.features_to_vary = canChange;
    const ranges = {};
    for (const f of mutable) {
      if (f.categories || !$("c-" + f.name).checked) continue;
      const lo = readNumber("lo-" + f.name);
      const hi = readNumber("hi-" + f.name);
      if (lo !== null || hi !== null) ranges[f.name] = [lo, hi];
    }
    if (Object.keys(ranges).length) c.ranges = ranges;
    const maxChanges = readNumber("max-changes");
    if (maxChanges !== null) c.max_changes = maxChanges;
    return c;
  }

  // ----------------------------------------------------------- decision
  async function refreshDecision() {
    const box = $("decision");
    const { row, problems } = readRow();
    box.className = "decision";
    if (problems.length) {
      box.textContent = problems.join(" ");
      return;
    }
    try {
      const out = await api("/api/predict", { rows: [row] });
      const p = out.predictions[0];
      const fav = favLabel();
      box.textContent = `Decision: ${p.label}.` + (fav ? ` Probability of ${fav}: ${pct(p.probability_favourable)}.` : "");
      if (state.schema.favourable !== null) {
        box.classList.add(p.prediction === state.schema.favourable ? "favourable" : "unfavourable");
      }
      box.dataset.prediction = String(p.prediction);
    } catch (err) {
      box.textContent = "Cannot decide: " + err.message;
    }
  }

  async function loadExample(index) {
    try {
      const ex = await api("/api/example?index=" + encodeURIComponent(index));
      state.exampleIndex = ex.index;
      setRow(ex.row);
      const which = favLabel() ? `cases for which the model does not predict "${favLabel()}"` : "rows";
      $("context").textContent = `${state.schema.dataset}, model ${state.schema.model}. Example ${ex.index + 1} of ${ex.total} ${which}.`;
      await refreshDecision();
    } catch (err) {
      showLoadError("No example: " + err.message);
    }
  }

  // ------------------------------------------------------------ methods
  function renderMethods() {
    const list = $("method-list");
    list.textContent = "";
    for (const m of state.methods) {
      const box = el("input", { type: "checkbox", id: "m-" + m.name, value: m.name, checked: m.default });
      list.append(
        el("label", { for: "m-" + m.name }, box, " ", m.name, el("span", { class: "summary", text: m.certified ? " (answers come with a proof)" : "" })),
      );
    }
  }

  function selectedMethods() {
    return state.methods.map((m) => m.name).filter((n) => $("m-" + n).checked);
  }

  // ------------------------------------------------------------ answers
  function renderAnswer(method, answer, error) {
    const card = el("article", { class: "card", "data-method": method, "aria-label": `answer of ${method}` });
    const head = el("header", {}, el("h3", { text: method }));
    card.append(head);
    if (error) {
      head.append(el("span", { class: "badge error", text: "not answered" }));
      card.dataset.status = "error";
      card.dataset.error = error.kind;
      const what =
        error.kind === "UnsupportedConstraintError"
          ? `${method} cannot honour your constraints: `
          : `${method} could not answer: `;
      card.append(el("p", { class: "notice error", role: "note", text: what + error.message }));
      return card;
    }
    const r = answer.results[0];
    card.dataset.status = r.status;
    head.append(el("span", { class: "badge " + r.status, text: r.status }));
    card.append(el("p", { class: "certificate", text: r.certificate }));
    const fav = r.target_label;
    if (!r.counterfactuals.length) {
      const why = r.reason ? r.reason : "no reason given";
      card.append(el("p", { class: "notice", role: "note", text: `No counterfactual found: ${why}.` }));
      return card;
    }
    const list = el("ol", { class: "cfs" });
    for (const cf of r.counterfactuals) {
      const changes = el("ul", { class: "changes" });
      for (const ch of cf.changes) {
        changes.append(
          el(
            "li",
            { "data-feature": ch.feature },
            el("span", { class: "feat", text: ch.feature }),
            ": ",
            el("span", { class: "before", text: ch.before_text }),
            " \u2192 ",
            el("span", { class: "after", text: ch.after_text }),
          ),
        );
      }
      list.append(
        el(
          "li",
          { class: "cf", "data-rank": String(cf.rank) },
          changes,
          el("p", { class: "prob", text: `Probability of ${fav} after: ${pct(cf.probability_after)} (now ${pct(r.probability_before)}).` }),
        ),
      );
    }
    card.append(list);
    return card;
  }

  async function explain() {
    const methods = selectedMethods();
    const cards = $("cards");
    const busy = $("busy");
    if (!methods.length) {
      busy.textContent = "Pick at least one method.";
      return;
    }
    const { row, problems } = readRow();
    if (problems.length) {
      busy.textContent = problems.join(" ");
      return;
    }
    const request = {
      rows: [row],
      n_counterfactuals: readNumber("n-cf") || 1,
      time_limit: readNumber("time-limit"),
      constraints: readConstraints(),
    };
    if (state.schema.favourable !== null) request.target = state.schema.favourable;
    else request.target = state.schema.classes.find((c) => String(c) === $("target").value);
    $("explain").disabled = true;
    $("download").disabled = true;
    $("answers-empty").hidden = true;
    cards.textContent = "";
    cards.setAttribute("aria-busy", "true");
    busy.textContent = `Asking ${methods.join(", ")}\u2026`;
    const slots = {};
    for (const m of methods) {
      slots[m] = el("div", { class: "slot" }, el("p", { class: "muted", text: `${m}: working\u2026` }));
      cards.append(slots[m]);
    }
    const record = { case: row, request, answers: [] };
    await Promise.all(
      methods.map(async (m) => {
        let card;
        try {
          const answer = await api("/api/explain", { ...request, method: m });
          record.answers.push({ method: m, answer });
          card = renderAnswer(m, answer, null);
        } catch (err) {
          record.answers.push({ method: m, error: { kind: err.kind, status: err.status, detail: err.message } });
          card = renderAnswer(m, null, err);
        }
        slots[m].replaceWith(card);
      }),
    );
    record.answers.sort((a, b) => methods.indexOf(a.method) - methods.indexOf(b.method));
    state.lastAnswer = record;
    cards.removeAttribute("aria-busy");
    busy.textContent = `Done: ${methods.length} method${methods.length > 1 ? "s" : ""} answered.`;
    $("explain").disabled = false;
    $("download").disabled = false;
  }

  function download() {
    if (!state.lastAnswer) return;
    const blob = new Blob([JSON.stringify(state.lastAnswer, null, 2)], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const a = el("a", { href: url, download: "counterfact-answer.json" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // --------------------------------------------------------------- init
  async function init() {
    const m = location.hash.match(/token=([^&]+)/);
    if (m) {
      state.token = decodeURIComponent(m[1]);
      sessionStorage.setItem("counterfact-token", state.token);
      history.replaceState(null, "", location.pathname);
    }
    try {
      state.schema = await api("/api/schema");
      state.methods = (await api("/api/methods")).methods;
    } catch (err) {
      showLoadError(err.status === 401 ? "Enter the access token to continue." : "Cannot load the model: " + err.message);
      return;
    }
    showLoadError("");
    $("token-box").hidden = true;
    const lim = state.schema.limits;
    $("n-cf").max = lim.max_counterfactuals;
    $("n-cf").value = Math.min(2, lim.max_counterfactuals);
    $("time-limit").max = lim.max_time_limit;
    $("time-limit").value = lim.default_time_limit;
    buildForm();
    renderMethods();
    if (state.schema.favourable === null) {
      // no outcome is known to be the wanted one: the person picks it
      const select = $("target");
      select.textContent = "";
      for (const c of state.schema.classes) {
        select.append(el("option", { value: String(c), text: state.schema.class_labels[String(c)] || String(c) }));
      }
      $("target-field").hidden = false;
    }
    await loadExample(0);
    document.body.dataset.ready = "true";
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("another").addEventListener("click", () => loadExample(state.exampleIndex + 1));
    $("explain").addEventListener("click", explain);
    $("download").addEventListener("click", download);
    $("compare-all").addEventListener("click", () => {
      for (const m of state.methods) $("m-" + m.name).checked = true;
      explain();
    });
    $("token-box").addEventListener("submit", (event) => {
      event.preventDefault();
      state.token = $("token").value.trim() || null;
      if (state.token) sessionStorage.setItem("counterfact-token", state.token);
      init();
    });
    init();
  });
})();
