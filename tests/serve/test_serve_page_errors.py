"""The recourse page says what is wrong in its own words, keeps its status line in step with
the cards, and asks on Enter (Playwright, headless Chromium, against a live uvicorn server
on 127.0.0.1)."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

from _nocap import NearestWithoutCap  # noqa: E402

import counterfact as cf  # noqa: E402
from _live import HAS_CHROMIUM, NO_CHROMIUM, live  # noqa: E402
from counterfact.methods import NearestObservable  # noqa: E402
from counterfact.serve import Limits, Service, create_app  # noqa: E402

if not HAS_CHROMIUM:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)
#: the request's field names: the page never shows them to the person
API_WORDS = ("min_probability", "features_to_vary", "time_limit", "n_counterfactuals", "rows[")


@pytest.fixture(scope="module")
def served():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {
        "nearest": NearestObservable(random_state=0).fit(model, train),
        "nearest_nocap": NearestWithoutCap(random_state=0).fit(model, train),
    }
    rejected = Service(data=train, model=model, methods=methods).examples
    service = Service(
        data=train,
        model=model,
        methods=methods,
        examples=rejected.head(2),  # two examples: "Pick another example" comes round again
        limits=Limits(max_counterfactuals=3, max_time_limit=10.0, default_time_limit=2.0),
    )
    with live(create_app(service)) as url:
        yield url, service


@pytest.fixture
def page(served, browser):
    url, _ = served
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.explained = []  # the /api/explain requests the page sent
    page.on("request", lambda r: "/api/explain" in r.url and page.explained.append(r))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    yield page
    page.close()
    assert errors == []


def _methods(page, *names):
    for box in page.query_selector_all("#method-list input[type=checkbox]"):
        (box.check if box.get_attribute("value") in names else box.uncheck)()


def _wait_answers(page, n, timeout=30_000):
    page.wait_for_function(
        "n => document.querySelectorAll('#cards .card').length === n"
        " && !document.querySelector('#cards').hasAttribute('aria-busy')",
        arg=n,
        timeout=timeout,
    )


def _not_sent(page, field, value):
    """Type ``value`` in ``field``, press Explain: nothing is sent, the line says why."""
    page.fill(field, value)
    page.click("#explain")
    page.wait_for_function(
        "() => document.querySelector('#busy').textContent.startsWith('Not sent: ')",
        timeout=5_000,
    )
    assert page.explained == []
    assert page.get_attribute(field, "aria-invalid") == "true"
    assert page.evaluate("() => document.activeElement.id") == field[1:]
    text = page.inner_text("#busy")
    assert not any(word in text for word in API_WORDS), text
    return text


def test_fields_are_checked_in_the_pages_words_before_asking(page):
    _methods(page, "nearest")
    text = _not_sent(page, "#margin", "100")
    assert text == (
        'Not sent: "Margin (%)" must be above 0 and below 100, or empty for none; you typed 100.'
    )
    page.fill("#margin", "60")
    text = _not_sent(page, "#time-limit", "1000")
    assert '"Time limit per method (seconds)" must be above 0 and at most 10' in text
    assert "you typed 1000" in text
    page.fill("#time-limit", "")
    text = _not_sent(page, "#n-cf", "10")
    assert '"Answers per method" must be a whole number from 1 to 3; you typed 10.' in text
    page.fill("#n-cf", "1")
    text = _not_sent(page, "#max-changes", "0")
    assert '"At most how many changes?" must be a whole number from 1 to 20' in text
    page.fill("#max-changes", "")
    text = _not_sent(page, "#v-age", "200")
    assert text == 'Not sent: "age" must be a whole number from 19 to 75; you typed 200.'
    # the decision says it too, in the same words
    page.press("#v-age", "Tab")
    page.wait_for_function(
        "() => document.querySelector('#decision').textContent.includes('you typed 200')",
        timeout=5_000,
    )
    assert "rows[" not in page.inner_text("#decision")
    page.fill("#v-age", "30")
    # no feature left to change
    for box in page.query_selector_all("#features input[type=checkbox]"):
        box.uncheck()
    page.click("#explain")
    page.wait_for_function(
        "() => document.querySelector('#busy').textContent.startsWith('Not sent: ')",
        timeout=5_000,
    )
    text = page.inner_text("#busy")
    assert 'Tick "I can change this" for at least one feature' in text
    assert "features_to_vary" not in text and page.explained == []
    # a range the wrong way round
    page.check("#c-duration_months")
    page.fill("#lo-duration_months", "30")
    page.fill("#hi-duration_months", "10")
    page.click("#explain")
    page.wait_for_function(
        "() => document.querySelector('#busy').textContent.includes('Range I could reach')",
        timeout=5_000,
    )
    assert page.explained == []


def _refuse(page, detail, kind="ValidationError"):
    """The server refuses every explanation with ``detail`` (as it words its 422s)."""
    body = json.dumps({"error": kind, "detail": detail})
    page.route(
        "**/api/explain",
        lambda route: route.fulfill(status=422, content_type="application/json", body=body),
    )


def test_a_refusal_is_said_with_the_pages_label_and_the_status_line_agrees(page):
    _methods(page, "nearest")
    detail = (
        "min_probability must be strictly between 0 and 1 (the least probability of the "
        "target an answer must reach). Got 1. Send a probability strictly between 0 and 1 "
        "(0.6 for 60 %), or null for none."
    )
    _refuse(page, detail)
    page.click("#explain")
    _wait_answers(page, 1)
    card = page.query_selector("#cards .card")
    assert card.get_attribute("data-status") == "error"
    shown = card.query_selector(".notice").inner_text()
    assert shown == 'nearest could not answer: "Margin (%)" was refused.'
    # the server's own words are kept, folded, under "Details from the server"
    assert card.query_selector("details.server-detail").text_content().endswith(detail)
    assert page.inner_text("#busy") == 'Not answered: "Margin (%)" was refused.'
    # the feedback's field is named as the page names it
    page.unroute("**/api/explain")
    _refuse(
        page,
        "Constraints.features_to_vary is empty: no feature may change, so no counterfactual "
        "can exist. Name at least one feature, or pass None for all.",
        kind="ConstraintError",
    )
    page.fill("#n-cf", "1")  # an edit: the answer on screen goes
    page.click("#explain")
    _wait_answers(page, 1)
    assert page.inner_text("#busy") == 'Not answered: "I can change this" was refused.'


def test_a_method_that_does_not_answer_is_counted_as_such(page):
    _methods(page, "nearest", "nearest_nocap")
    page.fill("#n-cf", "1")
    page.fill("#max-changes", "3")
    page.click("#explain")
    _wait_answers(page, 2)
    cards = {c.get_attribute("data-method"): c for c in page.query_selector_all("#cards .card")}
    assert cards["nearest"].get_attribute("data-status") != "error"
    nocap = cards["nearest_nocap"]
    assert nocap.get_attribute("data-status") == "error"
    said = nocap.query_selector(".notice").inner_text()
    assert said.startswith('nearest_nocap cannot honour your constraints: "At most how many')
    assert "max_changes" in nocap.query_selector("details.server-detail").text_content()
    assert page.inner_text("#busy") == (
        "Done: 1 of 2 methods answered; not answered: nearest_nocap (its card says why)."
    )


def test_enter_in_a_field_asks(page):
    _methods(page, "nearest")
    page.fill("#n-cf", "1")
    page.press("#n-cf", "Enter")
    _wait_answers(page, 1, timeout=20_000)
    assert len(page.explained) == 1
    assert page.inner_text("#busy") == "Done: 1 method answered."
    # Enter right after editing the case asks about the edited case, and the answer stays
    page.fill("#v-duration_months", "12")
    page.press("#v-duration_months", "Enter")
    _wait_answers(page, 1, timeout=20_000)
    assert len(page.explained) == 2
    sent = json.loads(page.explained[-1].post_data)
    assert sent["rows"][0]["duration_months"] == 12
    time.sleep(0.3)  # no edit is seen after the question: the answer stays
    assert len(page.query_selector_all("#cards .card")) == 1
    assert page.inner_text("#busy") == "Done: 1 method answered."
    # a tick box keeps its own keys: Enter there asks nothing
    page.focus("#regions")
    page.keyboard.press("Enter")
    time.sleep(0.3)
    assert len(page.explained) == 2


def test_pick_another_example_comes_round_to_the_first(page, served):
    _, service = served
    ages = [str(service.example(k)["row"]["age"]) for k in (0, 1)]
    for k in (1, 0):  # two examples: after the second comes the first again
        page.click("#another")
        page.wait_for_function(
            "v => document.querySelector('#v-age').value === v", arg=ages[k], timeout=20_000
        )
        page.wait_for_function(
            "k => document.querySelector('#context').textContent.includes(`Example ${k + 1} of 2`)",
            arg=k,
            timeout=20_000,
        )
    assert page.is_hidden("#load-error")
