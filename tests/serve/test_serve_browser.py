"""The recourse page in a real headless Chromium (Playwright), against a live uvicorn server."""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("z3")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

import counterfact as cf  # noqa: E402
from counterfact.methods import NearestObservable  # noqa: E402
from counterfact.schema._format import format_value  # noqa: E402
from counterfact.serve import Service, create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("Chromium is not installed (Debian package 'chromium')", allow_module_level=True)

LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class NearestWithoutCap(NearestObservable):
    """A method that declares it cannot honour ``max_changes`` (the page must say so)."""

    tags = dataclasses.replace(
        NearestObservable.tags, constraints=NearestObservable.tags.constraints - {"max_changes"}
    )


@pytest.fixture(scope="module")
def served():
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    methods = {
        "mace": cf.MACE(random_state=0).fit(model, train),
        "nearest": NearestObservable(random_state=0).fit(model, train),
        "nearest_nocap": NearestWithoutCap(random_state=0).fit(model, train),
    }
    service = Service(data=train, model=model, methods=methods)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/", service, model
    server.should_exit = True
    thread.join(15)
    assert not thread.is_alive()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


def _wait_answers(page, n):
    page.wait_for_function(
        "n => document.querySelectorAll('#cards .card').length === n"
        " && !document.querySelector('#cards').hasAttribute('aria-busy')",
        arg=n,
        timeout=60_000,
    )


def test_page_feedback_two_methods_and_a_method_that_cannot_honour(served, browser, tmp_path):
    url, service, model = served
    schema = service.schema
    page = browser.new_page(viewport={"width": 1366, "height": 900}, accept_downloads=True)
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

    # the form comes from the schema and holds the first example, a rejected case
    example = service.example(0)["row"]
    for f in schema:
        shown = page.input_value(f"#v-{f.name}")
        assert shown == (str(example[f.name]) if f.categories else format_value(f, example[f.name]))
    assert (
        page.get_attribute("#v-age", "min") == "19" and page.get_attribute("#v-age", "max") == "75"
    )
    assert (
        page.is_disabled("#c-age") is False and page.query_selector("#c-purpose") is None
    )  # purpose is fixed
    assert "Decision: bad" in page.inner_text("#decision")
    # German Credit names its favourable class: no empty "desired outcome" picker is shown
    assert not page.is_visible("#target-field")
    # a long feature name wraps only after an underscore, never inside a word
    sel = "label[for='v-other_installment_plans']"
    assert page.inner_text(sel) == "other_installment_plans"
    assert page.eval_on_selector(sel, "l => l.querySelectorAll('wbr').length") == 2
    assert page.eval_on_selector(sel, "l => getComputedStyle(l).overflowWrap") != "anywhere"

    # change a value: the decision follows the real model
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

    # feedback: telephone is fixed, duration may only go down to 12 months less
    lo, hi = max(4, d1 - 12), d1
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
    assert "telephone" not in sent["features_to_vary"] and sent["ranges"] == {
        "duration_months": [lo, hi]
    }
    constraints = cf.Constraints.from_dict(sent)
    x = schema.coerce(pd.DataFrame([case])).iloc[0]
    n_cf = 0
    for card, entry in zip(cards, record["answers"], strict=True):
        assert entry["method"] == card.get_attribute("data-method")
        res = entry["answer"]["results"][0]
        assert card.get_attribute("data-status") == res["status"]
        assert res["certificate"] in card.inner_text()
        items = card.query_selector_all("li.cf")
        assert len(items) == len(res["counterfactuals"])
        if not items:  # a method that found nothing says why
            assert (
                "No counterfactual found" in card.inner_text()
                and res["reason"] in card.inner_text()
            )
        for item, c in zip(items, res["counterfactuals"], strict=True):
            row = schema.coerce(pd.DataFrame([c["row"]]))
            assert model.predict(row)[0] == 1  # re-checked with the real model
            assert cf.violations(x, row, schema, constraints).empty  # the feedback holds
            changed = [ch.feature for ch in cf.result.changes(schema, x, row.iloc[0])]
            shown = [
                li.get_attribute("data-feature")
                for li in item.query_selector_all("li[data-feature]")
            ]
            assert shown == changed and changed  # only (and all) the changed features
            assert "telephone" not in shown
            for li in item.query_selector_all("li[data-feature]"):
                f = schema[li.get_attribute("data-feature")]
                assert li.query_selector(".after").inner_text() == format_value(
                    f, row.iloc[0][f.name]
                )
            assert lo <= row.iloc[0]["duration_months"] <= hi
            assert f"{100 * c['probability_after']:.1f}%" in item.inner_text()
            n_cf += 1
    assert n_cf >= 1

    # a method that cannot honour a constraint: the page says so, with the library's message
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
    assert "nearest_nocap cannot honour your constraints" in text and "max_changes" in text
    page.screenshot(path=str(tmp_path / "cannot_honour.png"), full_page=True)

    # another example replaces the case
    page.click("#another")
    second = service.example(1)["row"]
    page.wait_for_function(
        "v => document.querySelector('#v-age').value === v", arg=str(second["age"]), timeout=20_000
    )
    assert errors == [] and external == []
    page.close()
