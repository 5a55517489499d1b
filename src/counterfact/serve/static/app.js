// The recourse page: a form generated from /api/schema, the user's feedback, and answers as cards.
// Plain browser JavaScript, no build step, nothing loaded from elsewhere.
//
// Answers belong to one case and one set of feedback. Every change of either (another
// example, an edited value, a feedback field) starts a new "generation": the answers on
// screen are removed, "Download the answer (JSON)" is disabled, the requests in flight are
// aborted, and any response that still arrives for an older generation is discarded.
"use strict";

(() => {
  const DEFAULT_MARGIN = 60; // percent: the page's default least probability of the outcome
  const state = {
    schema: null,
    methods: [],
    exampleIndex: 0,
    exampleTotal: 1, // the examples are numbered 0 to exampleTotal - 1
    token: sessionStorage.getItem("counterfact-token"),
    lastAnswer: null,
    generation: 0, // bumped whenever the case or the feedback changes
    inflight: null, // AbortController of the explanation running, if any
    notice: null, // why the answers were removed, until the next explanation
    predictSeq: 0, // only the latest /api/predict answer is shown
    exampleSeq: 0, // only the latest /api/example answer is shown
  };
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------- utilities
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("data-") || k.startsWith("aria-") || ["role", "for", "inputmode", "title"].includes(k)) node.setAttribute(k, v);
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

  const copies = (n) => `${n} retrained ${n === 1 ? "copy" : "copies"} of the model`;
  const pct = (p) => (p === null || p === undefined ? "n/a" : (100 * p).toFixed(1) + "%");
  const featureOf = (name) => state.schema.features.find((f) => f.name === name);
  const classLabel = (c) => state.schema.class_labels[String(c)] || String(c);
  const favLabel = () => (state.schema.favourable === null ? null : classLabel(state.schema.favourable));
  // the outcome asked for: the favourable class, else the one picked in "Desired outcome"
  const wantedLabel = () => favLabel() || ($("target").value ? classLabel($("target").value) : "the desired outcome");

  async function api(path, body, signal) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (state.token) headers.Authorization = "Bearer " + state.token;
    const resp = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
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

  // the Explain button and its copy in the bar that stays on screen on a narrow page
  function setExplainDisabled(disabled) {
    for (const id of ["explain", "explain-quick"]) {
      const button = $(id);
      if (button) button.disabled = disabled;
    }
  }

  function showLoadError(message) {
    const box = $("load-error");
    box.textContent = message;
    box.hidden = !message;
  }

  // ------------------------------------------------------- generations
  // The case or the feedback changed: what is on screen no longer answers it.
  function invalidate(why) {
    state.generation += 1;
    if (state.inflight) {
      state.inflight.abort(); // the server stops the work when the request goes away
      state.inflight = null;
    }
    const had = state.lastAnswer !== null || $("cards").childElementCount > 0;
    state.lastAnswer = null;
    $("cards").textContent = "";
    $("cards").removeAttribute("aria-busy");
    clearRanking();
    $("download").disabled = true;
    setExplainDisabled(false);
    if (had) {
      state.notice = `${why} The answers for the previous case were removed; press Explain for this one.`;
      $("busy").textContent = "";
    }
    const empty = $("answers-empty");
    empty.hidden = false;
    empty.textContent = state.notice || "Press Explain to see what could change the decision.";
  }

  // --------------------------------------------------------------- form
  // a feature the person cannot change: fixed, or moved only by the passing of time
  const isFixed = (f) => f.actionability === "immutable" || f.actionability === "time";

  // a horizon is chosen: features only time moves change with it (else they stay as they are)
  const horizonChosen = () => !$("horizon-field").hidden && Number($("horizon").value) > 0;

  function hintFor(f) {
    if (f.actionability === "immutable") return "fixed";
    if (f.actionability === "time") return horizonChosen() ? "changes with time" : "fixed (no waiting)";
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

  // A closed drop-down shows only as much of its value as fits; when the value is cut
  // off, the whole value is written under it.
  function fitSelect(select) {
    const caption = $("full-" + select.dataset.feature);
    if (!caption) return;
    const text = select.selectedIndex >= 0 ? select.options[select.selectedIndex].text : "";
    select.title = text;
    if (!select.clientWidth) return;
    const ctx = (fitSelect.canvas ||= document.createElement("canvas")).getContext("2d");
    const style = getComputedStyle(select);
    ctx.font = style.font || `${style.fontSize} ${style.fontFamily}`;
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 22; // the arrow
    caption.textContent = text;
    caption.hidden = ctx.measureText(text).width <= room;
  }

  const fitSelects = () => document.querySelectorAll("#features select").forEach(fitSelect);

  function valueCell(f, vid) {
    if (f.categories) {
      const select = el("select", { id: vid, "data-feature": f.name });
      for (const c of f.categories) select.append(el("option", { value: String(c), text: String(c) }));
      select.addEventListener("change", () => fitSelect(select));
      return [select, el("span", { class: "full-value", id: "full-" + f.name, hidden: true })];
    }
    return [
      numberInput(f, vid, { "data-feature": f.name }),
      el("span", { class: "domain", text: `${fmtValue(f, f.lower)} to ${fmtValue(f, f.upper)}` }),
    ];
  }

  function toggleCell(f, fixed) {
    if (f.actionability === "time") return el("span", { class: "time-toggle", text: timeToggleText() });
    if (fixed) return el("span", { text: "no (fixed)" });
    const box = el("input", { type: "checkbox", id: "c-" + f.name, checked: true, "aria-label": `I can change ${f.name}` });
    box.addEventListener("change", () => {
      box.closest("tr").classList.toggle("off", !box.checked);
      for (const id of ["lo-", "hi-"]) {
        const input = $(id + f.name);
        if (input) input.disabled = !box.checked;
      }
    });
    return el("label", { class: "toggle-label" }, box, el("span", { class: "narrow-only", text: " I can change this" }));
  }

  const timeToggleText = () => (horizonChosen() ? "no (changes with time)" : "no (fixed)");

  // the rows of features only time moves say whether the chosen horizon moves them
  function markTimeFeatures() {
    for (const f of state.schema.features) {
      if (f.actionability !== "time") continue;
      const row = document.querySelector(`#features tr[data-feature="${CSS.escape(f.name)}"]`);
      if (!row) continue;
      row.classList.toggle("timed", horizonChosen());
      const hint = row.querySelector(".hint");
      if (hint) hint.textContent = hintFor(f);
      const toggle = row.querySelector(".time-toggle");
      if (toggle) toggle.textContent = timeToggleText();
    }
  }

  function rangeCell(f, fixed) {
    if (f.categories || fixed) return el("span", { class: "muted" });
    return el(
      "span",
      { class: "range-inputs" },
      el("span", { class: "narrow-only muted", text: "Range I could reach: " }),
      numberInput(f, "lo-" + f.name, { placeholder: fmtValue(f, f.lower), "aria-label": `lowest ${f.name} I could reach` }),
      el("span", { class: "sep", text: "to" }),
      numberInput(f, "hi-" + f.name, { placeholder: fmtValue(f, f.upper), "aria-label": `highest ${f.name} I could reach` }),
    );
  }

  function buildForm() {
    const tbody = document.querySelector("#features tbody");
    tbody.textContent = "";
    for (const f of state.schema.features) {
      const fixed = isFixed(f);
      const vid = "v-" + f.name;
      const hint = hintFor(f);
      tbody.append(
        el(
          "tr",
          { class: fixed ? "fixed locked" : "", "data-feature": f.name },
          el(
            "td",
            { class: "name" },
            el("label", { for: vid }, ...breakable(f.name)),
            f.description ? el("span", { class: "desc", text: f.description }) : null,
            f.unit ? el("span", { class: "unit", text: `in ${f.unit}` }) : null,
            hint ? el("span", { class: "hint", text: hint }) : null,
          ),
          el("td", { class: "value" }, ...valueCell(f, vid)),
          el("td", { class: "toggle" }, toggleCell(f, fixed)),
          el("td", { class: "range" }, rangeCell(f, fixed)),
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
    fitSelects();
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
        const problem = valueProblem(f, input.value);
        if (problem) {
          input.setAttribute("aria-invalid", "true");
          problems.push(problem);
        }
        row[f.name] = input.value.trim() === "" ? NaN : Number(input.value);
      }
    }
    return { row, problems };
  }

  // ------------------------------------------------------------- checks
  // Everything the page can check before it asks, said in the page's own words: the field's
  // label as the person sees it, what it takes and what was typed. The request's field
  // names (min_probability, time_limit, ...) never show.
  const LABELS = {
    margin: "Margin (%)",
    "n-cf": "Answers per method",
    "time-limit": "Time limit per method (seconds)",
    "max-changes": "At most how many changes?",
    relations: "Relations between features",
    robustness: "Advice that still holds after the model is retrained",
    robust: "Must also hold for retrained copies of the model",
    horizon: "Within how many months?",
    target: "Desired outcome",
  };
  const RANGE = "Range I could reach";
  const CAN_CHANGE = "I can change this";

  const quoted = (id) => `"${LABELS[id]}"`;
  const isWhole = (v) => Number.isInteger(v);
  const between = (f) =>
    f.lower === null || f.lower === undefined || f.upper === null || f.upper === undefined
      ? ""
      : ` from ${fmtValue(f, f.lower)} to ${fmtValue(f, f.upper)}`;

  // a feature's value: a number inside the domain the model was trained on
  function valueProblem(f, raw) {
    const text = String(raw).trim();
    const kind = f.kind === "integer" ? "a whole number" : "a number";
    if (text === "") return `Enter ${kind}${between(f)} for "${f.name}".`;
    const v = Number(text);
    const outside = (f.lower !== null && f.lower !== undefined && v < f.lower) || (f.upper !== null && f.upper !== undefined && v > f.upper);
    if (!Number.isFinite(v) || outside || (f.kind === "integer" && !isWhole(v))) {
      return `"${f.name}" must be ${kind}${between(f)}; you typed ${text}.`;
    }
    return null;
  }

  // "Range I could reach" of a feature: its lowest side not above its highest, and
  // overlapping the domain
  function rangeProblem(f, lo, hi) {
    const typed = `${lo === null ? "" : lo} to ${hi === null ? "" : hi}`.trim();
    if (lo !== null && hi !== null && lo > hi) {
      return `"${RANGE}" of "${f.name}" goes from ${lo} to ${hi}: the first number must not be above the second.`;
    }
    if ((lo !== null && f.upper !== null && lo > f.upper) || (hi !== null && f.lower !== null && hi < f.lower)) {
      return `"${RANGE}" of "${f.name}" must overlap${between(f)}, the values the model was trained on; you typed ${typed}.`;
    }
    return null;
  }

  // one field of "Ask": null, or what is wrong with it
  function askProblem(id) {
    const box = $(id);
    const text = box ? box.value.trim() : "";
    if (!box || box.disabled || text === "") return null;
    const v = Number(text);
    const lim = state.schema.limits;
    if (id === "margin" && !(v > 0 && v < 100)) {
      return `${quoted(id)} must be above 0 and below 100, or empty for none; you typed ${text}.`;
    }
    if (id === "n-cf" && !(isWhole(v) && v >= 1 && v <= lim.max_counterfactuals)) {
      return `${quoted(id)} must be a whole number from 1 to ${lim.max_counterfactuals}; you typed ${text}.`;
    }
    if (id === "time-limit" && !(v > 0 && v <= lim.max_time_limit)) {
      return `${quoted(id)} must be above 0 and at most ${lim.max_time_limit}, or empty for ${lim.default_time_limit}; you typed ${text}.`;
    }
    const n = state.schema.features.length;
    if (id === "max-changes" && !(isWhole(v) && v >= 1 && v <= n)) {
      return `${quoted(id)} must be a whole number from 1 to ${n}, or empty for no limit; you typed ${text}.`;
    }
    return null;
  }

  const mutableFeatures = () => state.schema.features.filter((f) => !isFixed(f));

  // the feedback: at least one feature may change, and every range makes sense
  function feedbackProblems() {
    const problems = [];
    const mutable = mutableFeatures();
    const ticked = mutable.filter((f) => $("c-" + f.name).checked);
    if (mutable.length && !ticked.length) {
      problems.push({ id: "c-" + mutable[0].name, text: `Tick "${CAN_CHANGE}" for at least one feature: with none ticked, nothing may change and no answer can exist.` });
    }
    for (const f of ticked) {
      if (f.categories) continue;
      const problem = rangeProblem(f, readNumber("lo-" + f.name), readNumber("hi-" + f.name));
      if (problem) problems.push({ id: "lo-" + f.name, text: problem });
    }
    return problems;
  }

  // every field of the page that is wrong, with the id of its input, in the page's order
  function pageProblems() {
    const problems = [];
    for (const f of state.schema.features) {
      if (f.categories) continue;
      const problem = valueProblem(f, $("v-" + f.name).value);
      if (problem) problems.push({ id: "v-" + f.name, text: problem });
    }
    problems.push(...feedbackProblems());
    for (const id of ["max-changes", "margin", "n-cf", "time-limit"]) {
      const problem = askProblem(id);
      if (problem) problems.push({ id, text: problem });
    }
    return problems;
  }

  // mark the fields that are wrong (and only those)
  function markProblems(problems) {
    for (const box of document.querySelectorAll("main [aria-invalid]")) box.removeAttribute("aria-invalid");
    for (const p of problems) {
      const box = $(p.id);
      if (box) box.setAttribute("aria-invalid", "true");
    }
  }

  function readNumber(id) {
    const box = $(id);
    if (!box || box.disabled || box.value.trim() === "") return null;
    const v = Number(box.value);
    return Number.isFinite(v) ? v : null;
  }

  function readConstraints() {
    const c = {};
    const mutable = state.schema.features.filter((f) => !isFixed(f));
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
    const relations = $("relations"); // "Relations between features (expert)": one per line
    if (relations && relations.value.trim()) c.relations = relations.value.split("\n").map((t) => t.trim()).filter(Boolean);
    return c;
  }

  // ----------------------------------------------------------- decision
  async function refreshDecision() {
    const box = $("decision");
    const seq = ++state.predictSeq;
    const { row, problems } = readRow();
    box.className = "decision";
    if (problems.length) {
      box.textContent = problems.join(" ");
      return;
    }
    try {
      const out = await api("/api/predict", { rows: [row] });
      if (seq !== state.predictSeq) return; // the case changed meanwhile
      const p = out.predictions[0];
      const fav = favLabel();
      box.textContent = `Decision: ${p.label}.` + (fav ? ` Probability of ${fav}: ${pct(p.probability_favourable)}.` : "");
      if (state.schema.favourable !== null) {
        box.classList.add(p.prediction === state.schema.favourable ? "favourable" : "unfavourable");
      }
      box.dataset.prediction = String(p.prediction);
    } catch (err) {
      if (seq === state.predictSeq) box.textContent = "Cannot decide: " + pageMessage(null, err).text;
    }
  }

  async function loadExample(index) {
    const seq = ++state.exampleSeq;
    if (state.schema) invalidate("Another example was picked.");
    $("decision").className = "decision stale";
    try {
      const ex = await api("/api/example?index=" + encodeURIComponent(index));
      if (seq !== state.exampleSeq) return; // a later click won
      state.exampleIndex = ex.index;
      state.exampleTotal = ex.total;
      setRow(ex.row);
      invalidate("Another example was picked.");
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
      const how = m.proves_optimality ? " (proves its answers are the smallest)" : " (finds answers by search; not proven smallest)";
      list.append(el("label", { for: "m-" + m.name }, box, " ", m.name, el("span", { class: "summary", text: how })));
    }
  }

  function selectedMethods() {
    return state.methods.map((m) => m.name).filter((n) => $("m-" + n).checked);
  }

  // ------------------------------------------------------------ answers
  function regionSentence(region, label, robustTo) {
    const parts = [];
    for (const [name, b] of Object.entries(region.bounds)) {
      const f = featureOf(name);
      if (!Array.isArray(b)) {
        const vals = b.values.map(String);
        parts.push(vals.length === 1 ? `${name} ${vals[0]}` : `${name} one of ${vals.join(", ")}`);
        continue;
      }
      const [lo, hi] = b;
      const [dlo, dhi] = region.domain[name] || [-Infinity, Infinity];
      if (lo === hi) parts.push(`${name} ${fmtValue(f, lo)}`);
      else if (lo <= dlo && hi < dhi) parts.push(`${name} at most ${fmtValue(f, hi)}`);
      else if (hi >= dhi && lo > dlo) parts.push(`${name} at least ${fmtValue(f, lo)}`);
      else parts.push(`${name} from ${fmtValue(f, lo)} to ${fmtValue(f, hi)}`);
    }
    if (!parts.length) return null;
    if (!region.certified && !region.n_checked) return null; // only the answer itself: no region
    const models = robustTo ? `the model and its ${copies(robustTo).replace(" of the model", "")}` : "this model";
    const how = region.certified ? `proven for ${models}` : `checked on ${region.n_checked} samples, not proven`;
    return `Holds for any values with ${parts.join(" and ")}, everything else as it is: the decision stays "${label}" (${how}).`;
  }

  function changeList(cf) {
    const changes = el("ul", { class: "changes" });
    for (const ch of cf.changes) {
      const f = featureOf(ch.feature);
      changes.append(
        el(
          "li",
          { "data-feature": ch.feature },
          el("span", { class: "feat", text: ch.feature, title: f && f.description ? f.description : null }),
          ": ",
          el("span", { class: "before", text: ch.before_text }),
          " \u2192 ",
          el("span", { class: "after", text: ch.after_text }),
          ch.unit ? el("span", { class: "unit", text: ` ${ch.unit}` }) : null,
        ),
      );
    }
    return changes;
  }

  // when an answer holds: "In 8 months, if ...", "No change needed: wait 12 months", "Now: ..."
  function whenSentence(cf) {
    return cf.when.charAt(0).toUpperCase() + cf.when.slice(1) + ".";
  }

  // an answer's value in the page's one measure of effort ("cost 2")
  function costLine(cf) {
    if (cf.cost === null || cf.cost === undefined) return null;
    return el("p", { class: "cost", "data-cost": String(cf.cost), text: `Cost: ${cf.cost_text} (smaller is less effort).` });
  }

  function answerItem(cf, r, robustTo) {
    const sentence = cf.region ? regionSentence(cf.region, r.target_label, robustTo) : null;
    return el(
      "li",
      { class: "cf", "data-rank": String(cf.rank) },
      cf.when ? el("p", { class: "when", text: whenSentence(cf) }) : null,
      changeList(cf),
      el("p", { class: "prob", text: `Probability of ${r.target_label} after: ${pct(cf.probability_after)} (now ${pct(r.probability_before)}).` }),
      costLine(cf),
      sentence ? el("p", { class: "region", text: sentence }) : null,
      cf.robustness ? el("p", { class: "robustness", text: robustnessSentence(cf.robustness) }) : null,
    );
  }

  // An answer's estimated share of retrained models that still accept it.
  // The estimate to one decimal (7 of 8 is 87.5 %, not 88 %), the interval rounded outwards,
  // the shortfall in points to one decimal: the figures add up to what was asked.
  function robustnessSentence(rb) {
    const pctOf = (v) => `${+(100 * v).toFixed(1)} %`;
    const low = Math.floor(100 * rb.low + 1e-9);
    const high = Math.ceil(100 * rb.high - 1e-9);
    let short = "";
    if (rb.reached === false) {
      short = rb.shortfall > 0
        ? ` (${(100 * rb.shortfall).toFixed(1)} points short of what was asked)`
        : " (not said to reach what was asked: the retrained copies that choose did not let it)";
    }
    return `Still holds after the model is retrained: ${pctOf(rb.estimate)} (95 % interval ${low} %-${high} %, ${rb.accepted} of ${rb.copies} retrained copies)${short}.`;
  }

  // ------------------------------------------------------------ ranking
  // Every method's answers on one scale (the page's measure of effort), smallest first.
  function clearRanking() {
    const box = $("ranking");
    if (!box) return;
    box.textContent = "";
    box.hidden = true;
  }

  function rankedAnswers(record) {
    const items = [];
    for (const a of record.answers) {
      if (!a.answer) continue;
      for (const cf of a.answer.results[0].counterfactuals) {
        if (cf.cost !== null && cf.cost !== undefined) items.push({ method: a.method, cf, measure: a.answer.measure });
      }
    }
    // smallest first; ties in the order the methods were asked, then by rank
    items.sort((x, y) => x.cf.cost - y.cf.cost || record.methods.indexOf(x.method) - record.methods.indexOf(y.method) || x.cf.rank - y.cf.rank);
    return items;
  }

  function renderRanking(record) {
    clearRanking();
    const items = rankedAnswers(record);
    // one method's card already lists its answers in order
    if (record.methods.length < 2 || !items.length) return;
    const list = el("ol", { class: "ranking-list" });
    for (const { method, cf } of items) {
      list.append(
        el(
          "li",
          { "data-method": method, "data-rank": String(cf.rank), "data-cost": String(cf.cost) },
          el("span", { class: "value", text: `cost ${cf.cost_text}` }),
          " \u2014 ",
          el("b", { text: method }),
          ` answer ${cf.rank + 1}: ${cf.description}`,
        ),
      );
    }
    const box = $("ranking");
    box.append(
      el("h3", { text: "All answers on one scale, smallest first" }),
      el("p", { class: "muted help", text: `Smaller means ${items[0].measure}.` }),
      list,
    );
    box.hidden = false;
  }

  function noticeBlock(method, cf) {
    if (!cf || !cf.notice) return null;
    const area = el("textarea", { class: "notice-text", readOnly: true, rows: 8, "aria-label": `reasons for a notice from ${method}` });
    area.value = cf.notice;
    const copy = el("button", { type: "button", class: "copy", text: "Copy the text" });
    copy.addEventListener("click", async () => {
      area.select();
      try {
        await navigator.clipboard.writeText(area.value);
        copy.textContent = "Copied";
      } catch (e) {
        copy.textContent = "Selected: press Ctrl+C";
      }
    });
    return el(
      "details",
      { class: "reasons" },
      el("summary", { text: "Reasons for a notice" }),
      el("p", { class: "muted help", text: "The principal reasons for the decision, from the first answer, in words a person or a lender can copy and adapt." }),
      area,
      copy,
    );
  }

  // What every answer was held to, unless the guarantee above already says it ("required:
  // ..."): then only the share of retrained models asked for, which it does not.
  function requirementsLine(answer, r) {
    const parts = [];
    const said = (r.plain_certificate || "").includes("; required: ");
    if (answer.min_probability !== null && answer.min_probability !== undefined) {
      parts.push(`gives "${r.target_label}" a probability of at least ${pct(answer.min_probability)}`);
    }
    if (answer.robust_to) parts.push(`also holds for ${copies(answer.robust_to)}`);
    const every = parts.length && !said ? `Every answer ${parts.join(" and ")}.` : "";
    const held = answer.robustness_words ? ` Asked for ${answer.robustness_words}.` : "";
    return every || held ? el("p", { class: "requirements", text: (every + held).trim() }) : null;
  }

  // ------------------------------------------------------ the server's refusals
  // A refusal names the request's field (min_probability, rows[0]['age'], ...): the page
  // says it with the label the person sees, checked again against what was typed; the
  // server's own words stay under "Details from the server".
  const REQUEST_FIELDS = [
    [/\bmin_probability\b/, "margin"],
    [/\bn_counterfactuals\b/, "n-cf"],
    [/\btime_limit\b/, "time-limit"],
    [/\bmax_changes\b/, "max-changes"],
    [/\brelations?\b/i, "relations"],
    [/\b(robustness|min_vote_share)\b/, "robustness"],
    [/^robust\b/, "robust"],
    [/\b(horizon|timeline)\b/, "horizon"],
    [/^target\b/, "target"],
  ];

  // the constraint kinds a method may not honour, by the page's names for them
  const KIND_LABELS = {
    max_changes: LABELS["max-changes"],
    ranges: RANGE,
    features_to_vary: CAN_CHANGE,
    relations: LABELS.relations,
    timeline: LABELS.horizon,
  };

  function unsupportedText(method, detail) {
    const kinds = [...(detail.match(/of kind \[([^\]]*)\]/) || ["", ""])[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
    const named = kinds.map((k) => `"${KIND_LABELS[k] || k}"`);
    const which = named.length ? `: ${named.join(", ")}` : "";
    return `${method} cannot honour your constraints${which}. Clear ${named.length > 1 ? "them" : "it"}, or pick another method.`;
  }

  // the page's words for a refusal of the request's fields
  function fieldText(detail) {
    const row = detail.match(/rows\[\d+\]\['([^']+)'\]/);
    if (row && featureOf(row[1])) {
      const f = featureOf(row[1]);
      return (!f.categories && valueProblem(f, $("v-" + f.name).value)) || `The value of "${f.name}" was refused.`;
    }
    const range = detail.match(/ranges\['([^']+)'\]/);
    if (range && featureOf(range[1])) {
      const f = featureOf(range[1]);
      return rangeProblem(f, readNumber("lo-" + f.name), readNumber("hi-" + f.name)) || `"${RANGE}" of "${f.name}" was refused.`;
    }
    if (/\bfeatures_to_vary\b/.test(detail)) {
      return (feedbackProblems()[0] || {}).text || `"${CAN_CHANGE}" was refused.`;
    }
    for (const [pattern, id] of REQUEST_FIELDS) {
      if (!pattern.test(detail)) continue;
      // relations are written with the features' names: the server's words are about them
      if (id === "relations") return `${quoted(id)}: ${detail}`;
      return askProblem(id) || `${quoted(id)} was refused.`;
    }
    return null;
  }

  // {text, detail}: what to tell the person, and the server's words when they differ
  function pageMessage(method, err) {
    const detail = err.message || "";
    if (err.kind === "UnsupportedConstraintError") return { text: unsupportedText(method, detail), detail };
    if (err.status === 422) {
      const text = fieldText(detail);
      if (text) return { text, detail: text.includes(detail) ? null : detail };
    }
    return { text: detail, detail: null };
  }

  function serverDetails(detail) {
    if (!detail) return null;
    return el("details", { class: "server-detail" }, el("summary", { text: "Details from the server" }), el("p", { text: detail }));
  }

  function errorCard(card, head, method, error) {
    head.append(el("span", { class: "badge error", text: "not answered" }));
    card.dataset.status = "error";
    card.dataset.error = error.kind;
    const { text, detail } = error.page;
    const what = error.kind === "UnsupportedConstraintError" ? "" : `${method} could not answer: `;
    card.append(el("p", { class: "notice error", role: "note", text: what + text }), serverDetails(detail) || "");
    return card;
  }

  // the reason the library gives a case the model already grants
  const ALREADY_GRANTED = "query already predicted as target";

  function renderAnswer(method, answer, error) {
    const card = el("article", { class: "card", "data-method": method, "aria-label": `answer of ${method}` });
    const head = el("header", {}, el("h3", { text: method }));
    card.append(head);
    if (error) return errorCard(card, head, method, error);
    const r = answer.results[0];
    card.dataset.status = r.status;
    head.append(el("span", { class: "badge " + r.status, text: r.status }));
    // what the status means for this method ("failed" says it with its reason below)
    if (r.meaning && r.status !== "failed") card.append(el("p", { class: "meaning", text: r.meaning }));
    // the guarantee in words; its raw values and bounds stay in the downloaded JSON
    if (r.plain_certificate) card.append(el("p", { class: "certificate", text: r.plain_certificate }));
    if (!r.counterfactuals.length) {
      // a case the model already grants needs nothing: its meaning says so
      const why = r.reason ? r.reason : "no reason given";
      const text = r.reason === ALREADY_GRANTED && r.meaning ? r.meaning : `No counterfactual found: ${why}.`;
      card.append(el("p", { class: "notice", role: "note", text }));
      return card;
    }
    card.append(requirementsLine(answer, r) || "");
    const list = el("ol", { class: "cfs" });
    for (const cf of r.counterfactuals) list.append(answerItem(cf, r, answer.robust_to));
    card.append(list);
    // why fewer answers than asked, or why the search stopped early ("1 of 2: ...")
    if (r.reason) card.append(el("p", { class: "notice reason", role: "note", text: `${r.reason}.` }));
    card.append(noticeBlock(method, r.counterfactuals[0]) || "");
    return card;
  }

  // A share of retrained models retrains copies of its own: the server's copies are then
  // not asked for, and the box says so rather than being dropped silently.
  function syncRobust() {
    const share = Boolean($("robustness").value);
    $("robust").disabled = share;
    if (share) $("robust").checked = false;
    $("robust-note").hidden = !share;
  }

  function buildRequest(row) {
    const request = {
      rows: [row],
      n_counterfactuals: readNumber("n-cf") || 1,
      time_limit: readNumber("time-limit"),
      constraints: readConstraints(),
      regions: $("regions").checked,
      reasons: true,
    };
    const margin = readNumber("margin");
    if (margin !== null) request.min_probability = margin / 100;
    const share = $("robustness").value;
    if (share) request.robustness = Number(share) / 100;
    else if (state.schema.robust_to && $("robust").checked) request.robust = true;
    if (!$("horizon-field").hidden) request.horizon = Number($("horizon").value);
    if (state.schema.favourable !== null) request.target = state.schema.favourable;
    else request.target = state.schema.classes.find((c) => String(c) === $("target").value);
    return request;
  }

  async function explain() {
    const methods = selectedMethods();
    const cards = $("cards");
    const busy = $("busy");
    if (!methods.length) {
      busy.textContent = "Pick at least one method.";
      return;
    }
    const problems = pageProblems();
    markProblems(problems);
    if (problems.length) {
      // nothing is sent: the first field to fix gets the focus
      busy.textContent = "Not sent: " + problems.map((p) => p.text).join(" ");
      const first = $(problems[0].id);
      if (first) first.focus();
      return;
    }
    const { row } = readRow();
    const request = buildRequest(row);
    if (state.inflight) state.inflight.abort(); // a second press: only the latest request counts
    const generation = ++state.generation;
    const controller = new AbortController();
    state.inflight = controller;
    state.notice = null;
    state.lastAnswer = null;
    setExplainDisabled(true);
    $("download").disabled = true;
    $("answers-empty").hidden = true;
    cards.textContent = "";
    clearRanking();
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
          const answer = await api("/api/explain", { ...request, method: m }, controller.signal);
          if (generation !== state.generation) return; // an answer for a case that has changed since
          record.answers.push({ method: m, answer });
          card = renderAnswer(m, answer, null);
        } catch (err) {
          if (generation !== state.generation) return;
          err.page = pageMessage(m, err);
          record.answers.push({ method: m, error: { kind: err.kind, status: err.status, detail: err.message, message: err.page.text } });
          card = renderAnswer(m, null, err);
        }
        slots[m].replaceWith(card);
      }),
    );
    if (generation !== state.generation) return;
    record.answers.sort((a, b) => methods.indexOf(a.method) - methods.indexOf(b.method));
    renderRanking({ ...record, methods });
    state.lastAnswer = record;
    state.inflight = null;
    cards.removeAttribute("aria-busy");
    busy.textContent = statusLine(record, methods);
    setExplainDisabled(false);
    $("download").disabled = false;
  }

  // what happened, in one line that agrees with the cards
  function statusLine(record, methods) {
    const failed = record.answers.filter((a) => a.error);
    const answered = methods.length - failed.length;
    const plural = (n) => `${n} method${n === 1 ? "" : "s"}`;
    if (!failed.length) return `Done: ${plural(answered)} answered.`;
    const messages = [...new Set(failed.map((a) => a.error.message))];
    if (!answered) {
      return messages.length === 1 ? `Not answered: ${messages[0]}` : `Not answered: none of the ${plural(methods.length)} answered; each card says why.`;
    }
    const names = failed.map((a) => a.method).join(", ");
    return `Done: ${answered} of ${plural(methods.length)} answered; not answered: ${names} (${failed.length === 1 ? "its card says" : "their cards say"} why).`;
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
  function setUpAsk() {
    const lim = state.schema.limits;
    $("n-cf").max = lim.max_counterfactuals;
    $("n-cf").value = Math.min(2, lim.max_counterfactuals);
    $("time-limit").max = lim.max_time_limit;
    $("time-limit").value = lim.default_time_limit;
    $("margin").value = DEFAULT_MARGIN;
    const fav = favLabel();
    $("margin-label").textContent = `Margin: least probability of ${fav ? `"${fav}"` : "the outcome"} (%)`;
    if (state.schema.robust_to) {
      $("robust-label").textContent = `Must also hold for ${copies(state.schema.robust_to)}`;
      $("robust-field").hidden = false;
    }
    $("robustness").addEventListener("change", syncRobust);
    syncRobust();
    const timeline = state.schema.timeline;
    if (timeline) {
      const select = $("horizon");
      select.textContent = "";
      for (const h of timeline.horizons) {
        const text = h === 0 ? "now (no waiting)" : `${h} months`;
        select.append(el("option", { value: String(h), text, selected: h === timeline.horizon }));
      }
      select.value = String(timeline.horizon);
      select.addEventListener("change", markTimeFeatures);
      $("horizon-field").hidden = false;
      $("horizon-help").hidden = false;
    }
    if (state.schema.api_docs === "/docs") {
      $("api-links").append(" \u00b7 ", el("a", { href: "/docs", text: "/docs" }));
    }
    if (state.schema.favourable === null) {
      // no outcome is known to be the wanted one: the person picks it
      const select = $("target");
      select.textContent = "";
      for (const c of state.schema.classes) select.append(el("option", { value: String(c), text: classLabel(c) }));
      $("target-field").hidden = false;
    }
  }

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
    setUpAsk();
    buildForm();
    renderMethods();
    await loadExample(0);
    document.body.dataset.ready = "true";
  }

  // Any edit of the case or of the feedback makes the answers on screen stale at once.
  function watchChanges() {
    const caseChanged = (event) => {
      if (!state.schema || !event.target.matches("input, select, textarea")) return;
      // a field being fixed is no longer marked wrong (the case's values are checked as typed)
      if (!event.target.id.startsWith("v-")) event.target.removeAttribute("aria-invalid");
      const what = event.target.id.startsWith("v-") ? "The case was edited." : "Your feedback changed.";
      if (event.target.id.startsWith("v-")) $("decision").classList.add("stale");
      invalidate(what);
    };
    for (const id of ["form", "ask"]) {
      for (const type of ["input", "change"]) {
        $(id).addEventListener(type, (event) => {
          if (event.target.closest("#method-list")) return; // picking methods does not change the case
          caseChanged(event);
        });
      }
    }
    $("form").addEventListener("change", (event) => {
      if (event.target.id.startsWith("v-")) refreshDecision();
    });
    // Enter in a field asks, as in a form (a text area keeps Enter for its lines; a tick box
    // and a list keep their own keys). Asking waits for the field's own "change", which
    // Enter may fire, so that it is not taken for an edit made after the question.
    for (const id of ["form", "ask"]) {
      $(id).addEventListener("keydown", (event) => {
        const t = event.target;
        if (event.key !== "Enter" || event.isComposing || event.defaultPrevented) return;
        if (t.tagName !== "INPUT" || ["checkbox", "radio", "button", "submit"].includes(t.type)) return;
        event.preventDefault();
        setTimeout(explain, 0);
      });
    }
    let resizing = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizing);
      resizing = setTimeout(fitSelects, 100);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    // after the last example comes the first again
    $("another").addEventListener("click", () => loadExample((state.exampleIndex + 1) % state.exampleTotal));
    $("explain").addEventListener("click", explain);
    $("explain-quick").addEventListener("click", () => {
      explain();
      $("answers").scrollIntoView({ block: "start" });
    });
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
    watchChanges();
    init();
  });
})();
