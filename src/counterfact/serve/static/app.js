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
      if (seq === state.predictSeq) box.textContent = "Cannot decide: " + err.message;
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

  function errorCard(card, head, method, error) {
    head.append(el("span", { class: "badge error", text: "not answered" }));
    card.dataset.status = "error";
    card.dataset.error = error.kind;
    const what = error.kind === "UnsupportedConstraintError" ? `${method} cannot honour your constraints: ` : `${method} could not answer: `;
    card.append(el("p", { class: "notice error", role: "note", text: what + error.message }));
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
    const { row, problems } = readRow();
    if (problems.length) {
      busy.textContent = problems.join(" ");
      return;
    }
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
          record.answers.push({ method: m, error: { kind: err.kind, status: err.status, detail: err.message } });
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
    busy.textContent = `Done: ${methods.length} method${methods.length > 1 ? "s" : ""} answered.`;
    setExplainDisabled(false);
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
    let resizing = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizing);
      resizing = setTimeout(fitSelects, 100);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("another").addEventListener("click", () => loadExample(state.exampleIndex + 1));
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
