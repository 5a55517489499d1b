"""The audit's HTML report renders in a real headless Chromium; a screenshot is saved."""

from __future__ import annotations

from pathlib import Path

import pytest

import counterfact as cf
from counterfact.recourse import Statistics

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

from _live import CHROMIUM  # noqa: E402
from _live import LAUNCH_ARGS as ARGS  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    data = cf.datasets.load("german_credit")
    # every feature free: the bundled defaults leave the nearest observed row little to offer
    data = data.with_schema(
        data.schema.with_actionability(**dict.fromkeys(data.schema.names, "free"))
    )
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr")
    method = cf.NearestObservable().fit(model, train)
    X = test.X.iloc[:80]
    res = cf.audit(
        method,
        X,
        groups=["personal_status_sex", "age"],
        protected="duration_months",
        data=test,
        statistics=Statistics(n_bootstrap=100, min_group_size=10),
    )
    path = tmp_path_factory.mktemp("audit") / "audit.html"
    res.to_html(path)
    return path


def test_report_renders_in_chromium(report: Path, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium executable on this machine")
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        except Exception as exc:  # pragma: no cover - depends on the machine
            pytest.skip(f"Chromium does not start here: {exc}")
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri())
            assert page.title().startswith("Recourse audit")
            # every plot is embedded and decoded by the browser
            sizes = page.eval_on_selector_all(
                "img", "els => els.map(e => [e.complete, e.naturalWidth])"
            )
            assert len(sizes) >= 5 and all(ok and w > 100 for ok, w in sizes)
            # the guarantee sits next to every figure (and the report's top); the proof box for
            # "no recourse" only where a row was proven to have none (a heuristic proves nothing)
            assert page.locator(".guarantee:not(.none)").count() >= page.locator("figure").count()
            assert page.locator(".guarantee.none").count() == 0
            assert "not a proof" in page.inner_text("body")
            # each column header links to its definition in the glossary
            href = page.get_attribute("th a[href='#g-burden']", "href")
            assert href == "#g-burden" and page.locator("#g-burden").count() == 1
            page.click("text=What these numbers mean")
            assert page.is_visible("text=proven by an exact method")
            tables = page.locator("table").count()
            assert tables >= 3
            shot = tmp_path / "audit.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 20_000
            assert errors == []
        finally:
            browser.close()


def test_report_is_self_contained(report: Path) -> None:
    text = report.read_text()
    assert "http://" not in text and "https://" not in text  # nothing fetched from elsewhere
    assert text.count("data:image/png;base64,") >= 5
    assert "<script" not in text
