"""The recourse page never shows another case's answer, reads well at 1280 and 390 px, and
offers the margin, the regions and the reasons for a notice (Playwright, headless Chromium,
against a live uvicorn server on 127.0.0.1)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("z3")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

import counterfact as cf  # noqa: E402
from _live import HAS_CHROMIUM, NO_CHROMIUM, live  # noqa: E402
from counterfact.serve import Limits, Service, create_app  # noqa: E402
from counterfact.serve._docs import swagger_ui_assets  # noqa: E402

if not HAS_CHROMIUM:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)
#: the scripts that drive the page find these buttons by their names
EXPLAIN, ANOTHER, DOWNLOAD = "Explain", "Pick another example", "Download the answer (JSON)"


@pytest.fixture(scope="module")
def served():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {n: cf.methods.get(n, random_state=0).fit(model, train) for n in ("mace", "nearest")}
    service = Service(
        data=train,
        model=model,
        methods=methods,
        class_names="refused,granted",
        robust_to=cf.models.retrained(model, train, n=1, random_state=0),
        limits=Limits(default_time_limit=5.0),
    )
    with live(create_app(service)) as url:
        yield url, service


def _open(browser, url, width):
    page = browser.new_page(viewport={"width": width, "height": 900}, accept_downloads=True)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    return page, errors


def _button(page, name):
    # in the page's main part (the bar at the top of a narrow screen holds a copy of Explain)
    return page.locator("main").get_by_role("button", name=name, exact=True)


def _methods(page, *names):
    for box in page.query_selector_all("#method-list input[type=checkbox]"):
        (box.check if box.get_attribute("value") in names else box.uncheck)()


def _explain(page, n):
    _button(page, EXPLAIN).click()
    page.wait_for_function(
        "n => document.querySelectorAll('#cards .card').length === n"
        " && !document.querySelector('#cards').hasAttribute('aria-busy')",
        arg=n,
        timeout=60_000,
    )
    assert _button(page, DOWNLOAD).is_enabled()


def _answer_lines(page):
    """The text of every answer shown (its changes, probability and region)."""
    return [li.inner_text() for li in page.query_selector_all("#cards li.cf")]


def _assert_no_answer_of(page, lines):
    assert page.query_selector_all("#cards .card") == []
    assert _button(page, DOWNLOAD).is_disabled()
    text = page.inner_text("body")
    for line in lines:
        assert line not in text


def _wait_example(page, service, index):
    age = str(service.example(index)["row"]["age"])
    page.wait_for_function(
        "v => document.querySelector('#v-age').value === v", arg=age, timeout=20_000
    )


def _idle(service):
    deadline = time.monotonic() + 60
    while service.pending and time.monotonic() < deadline:
        time.sleep(0.05)


def test_answers_never_outlive_their_case(served, browser, tmp_path):
    url, service = served
    page, errors = _open(browser, url, 1280)
    # the class names given to the server
    assert "Decision: refused" in page.inner_text("#decision")
    assert page.input_value("#margin") == "60"  # the margin's default, shown
    _methods(page, "mace", "nearest")
    _explain(page, 2)
    first = _answer_lines(page)
    assert first
    with page.expect_download() as info:
        _button(page, DOWNLOAD).click()
    record = json.loads(Path(info.value.path()).read_text())
    assert record["request"]["min_probability"] == 0.6 and record["request"]["regions"] is True

    # another example: the answers go at once (before the new case has even arrived)
    _button(page, ANOTHER).click()
    _assert_no_answer_of(page, first)
    assert "previous case were removed" in page.inner_text("#answers")
    _wait_example(page, service, 1)
    _assert_no_answer_of(page, first)

    # answers for the second case, then an edit of one value removes them
    _explain(page, 2)
    second = _answer_lines(page)
    assert second and second != first
    page.fill("#v-duration_months", "13")
    _assert_no_answer_of(page, second + first)

    # ... and an edit of the feedback too
    _explain(page, 2)
    third = _answer_lines(page)
    page.uncheck("#c-telephone")
    _assert_no_answer_of(page, third)
    _explain(page, 2)
    fourth = _answer_lines(page)
    page.fill("#margin", "70")
    _assert_no_answer_of(page, fourth)
    assert errors == []
    page.close()


def test_an_answer_arriving_for_a_changed_case_is_discarded(served, browser):
    url, service = served
    page, errors = _open(browser, url, 1280)
    _methods(page, "nearest")
    _explain(page, 1)
    stale = _answer_lines(page)
    held: list = []
    page.route("**/api/explain", lambda route: held.append(route))  # hold the next answer back
    _button(page, EXPLAIN).click()
    page.wait_for_function("() => document.querySelector('#cards').hasAttribute('aria-busy')")
    deadline = time.monotonic() + 20
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the explanation was not sent"
    _button(page, ANOTHER).click()
    _wait_example(page, service, 1)
    for route in held:  # the answer now arrives, for the case as it was
        try:
            route.fulfill(
                status=200,
                content_type="application/json",
                body=json.dumps({"method": "nearest", "results": [{"status": "optimal"}]}),
            )
        except sync_api.Error:
            pass  # the page had already aborted it
    page.unroute("**/api/explain")
    page.evaluate("() => new Promise(r => setTimeout(r, 300))")
    _assert_no_answer_of(page, stale)
    assert _button(page, EXPLAIN).is_enabled()
    _idle(service)
    assert errors == []
    page.close()


def _no_value_cut_off(page):
    """Every drop-down shows its whole value, or the whole value is written under it."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#features select')].filter(s => {
            const text = s.options[s.selectedIndex].text;
            const probe = document.createElement('span');
            probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;font:'
                + getComputedStyle(s).font;
            probe.textContent = text;
            document.body.append(probe);
            const fits = probe.offsetWidth + 30 <= s.clientWidth;
            probe.remove();
            const caption = document.getElementById('full-' + s.dataset.feature);
            const written = caption && !caption.hidden && caption.offsetParent !== null
                && caption.textContent === text;
            return !(fits || written);
        }).map(s => s.id)"""
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_layout_descriptions_regions_and_reasons(served, browser, tmp_path, width):
    url, service = served
    page, errors = _open(browser, url, width)
    page.select_option("#v-property", "building society savings / life insurance")  # a long value
    desc = page.inner_text("tr[data-feature='duration_months'] td.name .desc")
    assert desc == service.schema["duration_months"].description
    assert (
        page.inner_text("tr[data-feature='duration_months'] td.name .unit") == "in months"
    )  # the schema's unit
    assert _no_value_cut_off(page) == []
    assert page.is_visible("#robust-field") and "1 retrained copy of the model" in page.inner_text(
        "#robust-field"
    )
    _methods(page, "mace")
    page.check("#robust")
    _explain(page, 1)
    card = page.query_selector("#cards .card[data-method=mace]")
    text = card.inner_text()
    assert card.get_attribute("data-status") in ("optimal", "feasible")
    # what the status means, in words
    assert "Proven smallest" in text or "not proven smallest" in text
    assert "fewer changes or smaller moves" in text  # the measure, in words
    # what the answers were held to, said once: in the guarantee, not again beside it
    held = "required: a probability of at least 0.6 for the target, the target in 1 other model"
    assert text.count(held) == 1 and "Every answer gives" not in text, text
    for item in card.query_selector_all("li.cf"):
        t = item.inner_text()
        assert "Probability of granted after:" in t
        after = float(t.split("Probability of granted after: ")[1].split("%")[0])
        assert after >= 60.0
        assert "Holds for any values with" in t and 'the decision stays "granted"' in t
        assert "proven for the model and its 1 retrained copy" in t
    card.query_selector("details.reasons summary").click()
    notice = card.query_selector("textarea.notice-text").input_value()
    assert notice.startswith("Principal reasons the application was not assigned to 'granted':")
    assert card.query_selector("textarea.notice-text").is_visible()
    page.screenshot(path=str(tmp_path / f"page-{width}.png"), full_page=True)
    assert (tmp_path / f"page-{width}.png").stat().st_size > 10_000
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no horizontal overflow
    assert _no_value_cut_off(page) == []
    assert errors == []
    page.close()


def test_docs_render_without_the_internet(served, browser):
    """/docs is Swagger UI from local files: it renders every endpoint and asks nothing of
    another site."""
    if swagger_ui_assets() is None:
        pytest.skip("no local Swagger UI installed (swagger-ui-bundle-v2): /docs is not served")
    url, _ = served
    page = browser.new_page()
    external: list[str] = []
    page.on(
        "request",
        lambda r: external.append(r.url) if not r.url.startswith((url, "data:", "blob:")) else None,
    )
    page.goto(url + "docs")
    page.wait_for_selector(".opblock-summary-path", timeout=30_000)
    paths = [e.inner_text() for e in page.query_selector_all(".opblock-summary-path")]
    assert "/api/explain" in " ".join(paths) and "/api/schema" in " ".join(paths)
    assert external == []
    page.close()


def test_a_share_of_retrained_models_takes_the_place_of_the_servers_copies(served, browser):
    """Choosing "Advice that still holds after the model is retrained" retrains copies of
    its own: the box asking for the server's copies is unticked, disabled and says why,
    and the request does not carry it; choosing no share gives the box back."""
    url, _ = served
    page, errors = _open(browser, url, 1280)
    page.check("#robust")
    page.select_option("#robustness", "80")
    assert page.is_disabled("#robust") and not page.is_checked("#robust")
    assert page.is_visible("#robust-note")
    _methods(page, "nearest")
    with page.expect_request(lambda r: r.url.endswith("/explain")) as sent:
        _button(page, EXPLAIN).click()
    body = sent.value.post_data_json
    assert body["robustness"] == 0.8 and "robust" not in body
    page.select_option("#robustness", "")
    assert page.is_enabled("#robust") and not page.is_visible("#robust-note")
    assert errors == []
    page.close()
