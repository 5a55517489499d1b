"""The recourse page in a real headless Chromium (Playwright), against a live uvicorn server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("z3")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

from _nocap import NearestWithoutCap  # noqa: E402

import counterfact as cf  # noqa: E402
from _live import HAS_CHROMIUM, NO_CHROMIUM, live  # noqa: E402
from counterfact.methods import NearestObservable  # noqa: E402
from counterfact.schema._format import format_value  # noqa: E402
from counterfact.serve import Service, create_app  # noqa: E402

if not HAS_CHROMIUM:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


@pytest.fixture(scope="module")
def served():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {
        "mace": cf.MACE(random_state=0).fit(model, train),
        "nearest": NearestObservable(random_state=0).fit(model, train),
        "nearest_nocap": NearestWithoutCap(random_state=0).fit(model, train),
        "ufce": cf.UFCE(random_state=0).fit(model, train),
    }
    service = Service(data=train, model=model, methods=methods)
    with live(create_app(service)) as url:
        yield url, service, model


def _wait_answers(page, n):
    page.wait_for_function(
        "n => document.querySelectorAll('#cards .card').length === n"
        " && !document.querySelector('#cards').hasAttribute('aria-busy')",
        arg=n,
        timeout=60_000,
    )


def _check_form(page, service):
    """The form comes from the schema and holds the first example, a rejected case."""
    schema = service.schema
    example = service.example(0)["row"]
    for f in schema:
        shown = page.input_value(f"#v-{f.name}")
        assert shown == (str(example[f.name]) if f.categories else format_value(f, example[f.name]))
    assert (
        page.get_attribute("#v-age", "min") == "19" and page.get_attribute("#v-age", "max") == "75"
    )
    assert page.is_disabled("#c-duration_months") is False
    assert page.query_selector("#c-purpose") is None  # purpose is fixed
    assert page.query_selector("#c-age") is None  # age changes only as time passes
    assert "Decision: bad" in page.inner_text("#decision")
    # German Credit names its favourable class: no empty "desired outcome" picker is shown
    assert not page.is_visible("#target-field")
    # a long feature name wraps only after an underscore, never inside a word
    sel = "label[for='v-other_installment_plans']"
    assert page.inner_text(sel) == "other_installment_plans"
    assert page.eval_on_selector(sel, "l => l.querySelectorAll('wbr').length") == 2
    assert page.eval_on_selector(sel, "l => getComputedStyle(l).overflowWrap") != "anywhere"
    return example


def _edit_case(page, schema, model, example):
    """Change a value: the decision follows the real model.  Returns the edited case."""
    d0 = int(example["duration_months"])
    d1 = d0 - 6 if d0 > 16 else d0 + 6
    page.fill("#v-duration_months", str(d1))
    page.press("#v-duration_months", "Tab")
    case = {**example, "duration_months": d1}
    p_fav = model.predict_proba(schema.coerce(pd.DataFrame([case])))[0, 1]
    page.wait_for_function(
        "t => document.querySelector('#decision').textContent.includes(t)",
        arg=f"{100 * p_fav:.1f}%",
        timeout=20_000,
    )
    return case


def _check_answer_item(item, c, schema, model, x, constraints, lo, hi):
    """One answer on a card: valid, within the feedback, showing only the changed features."""
    row = schema.coerce(pd.DataFrame([c["row"]]))
    assert model.predict(row)[0] == 1  # re-checked with the real model
    assert cf.violations(x, row, schema, constraints).empty  # the feedback holds
    changed = [ch.feature for ch in cf.result.changes(schema, x, row.iloc[0])]
    shown = [li.get_attribute("data-feature") for li in item.query_selector_all("li[data-feature]")]
    assert shown == changed and changed  # only (and all) the changed features
    assert "telephone" not in shown
    for li in item.query_selector_all("li[data-feature]"):
        f = schema[li.get_attribute("data-feature")]
        assert li.query_selector(".after").inner_text() == format_value(f, row.iloc[0][f.name])
    assert lo <= row.iloc[0]["duration_months"] <= hi
    assert f"{100 * c['probability_after']:.1f}%" in item.inner_text()


def _check_cards(page, cards, record, schema, model, case, lo, hi):
    """Every card shows its method's answers, its guarantee in words and why it has none."""
    asked = cf.Constraints.from_dict(record["request"]["constraints"])
    x = schema.coerce(pd.DataFrame([case])).iloc[0]
    n_cf = 0
    for card, entry in zip(cards, record["answers"], strict=True):
        assert entry["method"] == card.get_attribute("data-method")
        # the answer's constraints: the feedback plus the timeline of the horizon chosen
        constraints = cf.Constraints.from_dict(entry["answer"]["constraints"])
        assert constraints == asked.merge(cf.Constraints(timeline=constraints.timeline))
        res = entry["answer"]["results"][0]
        assert card.get_attribute("data-status") == res["status"]
        # the guarantee in words, never the certificate's raw numbers
        assert res["plain_certificate"] in card.inner_text()
        if res["certificate"] != res["plain_certificate"]:
            assert res["certificate"] not in card.inner_text()
        items = card.query_selector_all("li.cf")
        assert len(items) == len(res["counterfactuals"])
        if not items:  # a method that found nothing says why
            text = card.inner_text()
            assert "No counterfactual found" in text and res["reason"] in text
        elif res["reason"]:  # fewer answers than asked says why
            assert res["reason"] in card.inner_text()
        for item, c in zip(items, res["counterfactuals"], strict=True):
            _check_answer_item(item, c, schema, model, x, constraints, lo, hi)
            n_cf += 1
    assert n_cf >= 1


def _open(browser, url, **kwargs):
    """A page on the served app, ready, collecting script errors and outside requests."""
    page = browser.new_page(**kwargs)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    external: list[str] = []
    page.on(
        "request",
        lambda r: (
            external.append(r.url)
            if not r.url.startswith(url) and not r.url.startswith(("data:", "blob:"))
            else None
        ),
    )
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    return page, errors, external


def test_page_feedback_two_methods_and_a_method_that_cannot_honour(served, browser, tmp_path):
    url, service, model = served
    schema = service.schema
    viewport = {"width": 1366, "height": 900}
    page, errors, external = _open(browser, url, viewport=viewport, accept_downloads=True)
    case = _edit_case(page, schema, model, _check_form(page, service))
    # feedback: telephone is fixed, duration may only go down to 12 months less
    lo, hi = max(4, case["duration_months"] - 12), case["duration_months"]
    page.uncheck("#c-telephone")
    page.fill("#lo-duration_months", str(lo))
    page.fill("#hi-duration_months", str(hi))
    # two methods
    page.check("#m-mace")
    page.check("#m-nearest")
    page.uncheck("#m-nearest_nocap")
    page.click("#explain")
    _wait_answers(page, 2)
    page.screenshot(path=str(tmp_path / "answers.png"), full_page=True)
    cards = page.query_selector_all("#cards .card")
    assert [c.get_attribute("data-method") for c in cards] == ["mace", "nearest"]
    with page.expect_download() as info:
        page.click("#download")
    record = json.loads(Path(info.value.path()).read_text())
    assert record["case"] == case
    sent = record["request"]["constraints"]
    assert "telephone" not in sent["features_to_vary"]
    assert sent["ranges"] == {"duration_months": [lo, hi]}
    _check_cards(page, cards, record, schema, model, case, lo, hi)
    _cannot_honour(page, tmp_path)
    # another example replaces the case
    page.click("#another")
    second = service.example(1)["row"]
    page.wait_for_function(
        "v => document.querySelector('#v-age').value === v", arg=str(second["age"]), timeout=20_000
    )
    assert errors == [] and external == []
    page.close()


def _cannot_honour(page, tmp_path):
    """A method that cannot honour a constraint: the page says so, with the library's message."""
    page.uncheck("#m-mace")
    page.uncheck("#m-nearest")
    page.check("#m-nearest_nocap")
    page.fill("#max-changes", "3")
    page.focus("#explain")
    page.keyboard.press("Enter")  # keyboard works
    _wait_answers(page, 1)
    card = page.query_selector("#cards .card")
    assert card.get_attribute("data-status") == "error"
    assert card.get_attribute("data-error") == "UnsupportedConstraintError"
    text = card.inner_text()
    assert 'nearest_nocap cannot honour your constraints: "At most how many changes?"' in text
    # the library's message is kept, folded, under "Details from the server"
    assert "max_changes" in card.query_selector("details.server-detail").text_content()
    page.screenshot(path=str(tmp_path / "cannot_honour.png"), full_page=True)


def _answer_values(page):
    """Per card, the values its answers show (data-cost), in the card's order."""
    return page.eval_on_selector_all(
        "#cards .card",
        "cards => cards.map(c => [c.dataset.method, [...c.querySelectorAll('li.cf')].map(li => {"
        " const p = li.querySelector('.cost'); return p ? Number(p.dataset.cost) : null; })])",
    )


def test_compare_all_ranks_every_answer_on_one_scale(served, browser):
    url, service, _ = served
    page, errors, external = _open(browser, url, viewport={"width": 1366, "height": 900})
    page.click("#another")  # the second example: several methods answer it, at a 60 % margin
    example = service.example(1)["row"]
    page.wait_for_function(
        "v => document.querySelector('#v-duration_months').value === v",
        arg=str(example["duration_months"]),
        timeout=20_000,
    )
    page.click("#compare-all")
    _wait_answers(page, 4)
    assert page.is_visible("#ranking")
    values = _answer_values(page)
    shown = [(m, v) for m, vs in values for v in vs]
    assert shown and all(v is not None for _, v in shown)  # every answer shows its value
    ranked = page.eval_on_selector_all(
        "#ranking li", "lis => lis.map(li => [li.dataset.method, Number(li.dataset.cost)])"
    )
    ranked = [tuple(r) for r in ranked]
    # the ranking lists every answer of every method, in increasing value
    assert sorted(ranked) == sorted(shown)
    costs = [v for _, v in ranked]
    assert costs == sorted(costs)
    assert len({m for m, _ in ranked}) >= 2
    text = page.inner_text("#ranking")
    assert "Smaller means fewer changes or smaller moves, counting 1 per changed feature" in text
    # the values are the answers' cost in the default measure (known answer: recomputed here)
    measure = cf.Costs().bind(service.schema, service.data.X)
    x = service.schema.coerce(pd.DataFrame([example])).iloc[0]
    for card in page.query_selector_all("#cards .card"):
        for li in card.query_selector_all("li.cf"):
            row = {f.name: x[f.name] for f in service.schema}
            for ch in li.query_selector_all("li[data-feature]"):
                f = service.schema[ch.get_attribute("data-feature")]
                after = ch.query_selector(".after").inner_text()
                row[f.name] = after if f.categories else float(after)
            got = float(li.query_selector(".cost").get_attribute("data-cost"))
            want = measure.evaluate(x, service.schema.coerce(pd.DataFrame([row])))[0]
            assert got == pytest.approx(float(want), rel=1e-3, abs=1e-3)
    # no raw certificate number on the page: the lay words name the measure instead
    body = page.inner_text("#answers")
    assert "closer than" not in body and "costs less than" not in body
    assert errors == [] and external == []
    page.close()


def test_explain_is_within_reach_on_a_phone(served, browser):
    url, _, _ = served
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height > 3 * 844  # the form is long on a phone ...
    main = page.locator("#explain").bounding_box()
    assert main["y"] > 844  # ... and the form's own Explain button is below it
    quick = page.locator("#explain-quick")
    box = quick.bounding_box()
    assert quick.is_visible() and box["y"] + box["height"] <= 844  # on the first screen
    page.mouse.wheel(0, 2500)  # and it stays on screen while the form is scrolled
    page.wait_for_function("() => window.scrollY > 2000")
    box = quick.bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= 844
    quick.click()
    _wait_answers(page, 1)
    assert page.locator("#cards .card").first.bounding_box()["y"] < 844 * 2
    page.close()


def test_explain_bar_is_hidden_when_the_form_and_the_button_fit_side_by_side(served, browser):
    url, _, _ = served
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    assert not page.is_visible("#explain-quick") and page.is_visible("#explain")
    page.close()


def test_a_chosen_horizon_gives_answers_that_say_when(served, browser):
    """The horizon picker (German Credit's default timeline: 24 months) moves age and the
    years at the address and in the job with time; each answer then says when."""
    url, _, _ = served
    page, errors, external = _open(browser, url, viewport={"width": 1366, "height": 900})
    assert page.is_visible("#horizon-field") and page.input_value("#horizon") == "24"
    options = page.eval_on_selector_all("#horizon option", "os => os.map(o => o.value)")
    assert options == ["0", "6", "12", "24"]
    hint = "#features tr[data-feature='age'] .hint"
    assert page.inner_text(hint) == "changes with time"
    page.select_option("#horizon", "0")
    assert page.inner_text(hint) == "fixed (no waiting)"
    page.select_option("#horizon", "12")
    assert page.inner_text(hint) == "changes with time"
    page.check("#m-mace")
    for other in ("nearest", "nearest_nocap", "ufce"):
        page.uncheck(f"#m-{other}")
    page.click("#explain")
    _wait_answers(page, 1)
    whens = page.eval_on_selector_all("#cards li.cf p.when", "ps => ps.map(p => p.textContent)")
    assert whens and len(whens) == len(page.query_selector_all("#cards li.cf"))
    span = r"(1 month|\d+ months)"
    pattern = rf"^(Now: .+|In {span}, if .+|No change needed: wait {span}.*)\.$"
    assert all(re.match(pattern, w) for w in whens), whens
    months = [int(m) for w in whens for m in re.findall(r"(\d+) months?", w.split(",")[0])]
    assert all(m <= 12 for m in months)
    assert errors == [] and external == []
    page.close()


def test_advice_that_holds_after_a_retrain_is_asked_and_answered_in_words(served, browser):
    """The page asks for robustness=0.9; each answer says the share of retrained models
    that still accept it, with its interval and the copies it was estimated on."""
    url, _, _ = served
    page, errors, external = _open(browser, url, viewport={"width": 1366, "height": 900})
    options = page.eval_on_selector_all("#robustness option", "os => os.map(o => o.value)")
    assert options == ["", "80", "90", "95"]
    page.select_option("#robustness", "90")
    page.check("#m-mace")
    for other in ("nearest", "nearest_nocap", "ufce"):
        page.uncheck(f"#m-{other}")
    with page.expect_response(lambda r: r.url.endswith("/explain")) as got:
        page.click("#explain")
    assert got.value.request.post_data_json["robustness"] == 0.9
    _wait_answers(page, 1)
    said = page.eval_on_selector_all("#cards p.robustness", "ps => ps.map(p => p.textContent)")
    assert said and len(said) == len(page.query_selector_all("#cards li.cf"))
    pattern = (
        r"^Still holds after the model is retrained: [\d.]+ % "
        r"\(95 % interval \d+ %-\d+ %, \d of 8 retrained copies\)"
    )
    assert all(re.match(pattern, s) for s in said), said
    # each sentence says what the server sent for its answer, to one decimal
    sent = [c["robustness"] for r in got.value.json()["results"] for c in r["counterfactuals"]]
    for s, rb in zip(said, sent, strict=True):
        estimate = round(100 * rb["estimate"], 1)
        assert s.split(": ")[1].startswith(f"{estimate:g} %"), s
        short = f"{100 * rb['shortfall']:.1f} points short" in s
        assert short == (rb["reached"] is False and rb["shortfall"] > 0), (s, rb)
        assert ("not said to reach" in s) == (rb["reached"] is False and rb["shortfall"] == 0)
    assert errors == [] and external == []
    page.close()


def test_a_case_the_model_already_grants_is_told_nothing_needs_to_change(served, browser):
    """A person whose case the model already grants reads that nothing needs to change,
    not "no counterfactual found"."""
    from counterfact.serve._render import ALREADY_MEANING

    url, service, model = served
    X = service.data.X
    granted = X[model.predict(X) == 1].iloc[0]
    page, errors, external = _open(browser, url, viewport={"width": 1366, "height": 900})
    for f in service.schema:
        value = granted[f.name]
        if f.categories:
            page.select_option(f"#v-{f.name}", str(value))
        else:
            page.fill(f"#v-{f.name}", format_value(f, value))
            page.press(f"#v-{f.name}", "Tab")
    page.wait_for_function(
        "() => document.querySelector('#decision').textContent.includes('Decision: good')",
        timeout=20_000,
    )
    page.check("#m-nearest")
    for other in ("mace", "nearest_nocap", "ufce"):
        page.uncheck(f"#m-{other}")
    page.click("#explain")
    _wait_answers(page, 1)
    text = page.inner_text("#cards .card")
    assert ALREADY_MEANING in text and "No counterfactual found" not in text
    assert errors == [] and external == []
    page.close()
