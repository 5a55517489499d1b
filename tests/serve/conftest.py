"""Fixtures of the page tests: one headless Chromium per test module."""

from __future__ import annotations

import pytest

from _live import CHROMIUM, LAUNCH_ARGS


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()
