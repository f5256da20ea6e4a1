"""Headless Chromium for page tests: a page's DOM after loading and a screenshot, or a skip."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.bounded import COMMAND_GUARD_S, run_bounded

# The flags DESIGN.md names: without the background-networking ones Chromium's connections
# are refused by the closed network and it stalls.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
# Every host name fails to resolve: a page opened with this flag gets no network at all.
NO_NETWORK = "--host-resolver-rules=MAP * ~NOTFOUND"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SHOTS_ENV = "FACTDEBATE_SCREENSHOTS"  # a folder: the page tests keep their screenshots there
MAX_SHOT_BYTES = 300_000


class _Text(HTMLParser):
    """Visible text of a page (what is not inside <style>/<script>), and the tags seen."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.tags: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._skip += tag in ("style", "script", "title")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("style", "script", "title")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible(html: str) -> tuple[str, list[str]]:
    """The text a reader sees (whitespace collapsed, no space before punctuation), and tags."""
    parser = _Text()
    parser.feed(html)
    text = " ".join(" ".join(parser.parts).split())
    return re.sub(r" ([:;,.)])", r"\1", text), parser.tags


def executable() -> str | None:
    """The Chromium binary on PATH, if any."""
    return next((p for n in ("chromium", "chromium-browser") if (p := shutil.which(n))), None)


def opener(tmp_path: Path, *flags: str) -> Callable[..., str]:
    """A function opening a local page in headless Chromium; skips the test without one.

    ``open_page(page, png, size="1280,2000")`` returns the DOM after loading and saves a
    screenshot of the window to ``png``; ``flags`` are added to ``FLAGS`` (``NO_NETWORK``).
    """
    exe = executable()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    assert exe is not None

    def open_page(page: Path, png: Path, size: str = "1280,2000") -> str:
        profile = tmp_path / f"profile-{png.stem}"
        profile.mkdir()
        dom = run_bounded(
            [
                exe,
                *FLAGS,
                *flags,
                f"--user-data-dir={profile}",
                f"--window-size={size}",
                "--dump-dom",
                f"--screenshot={png}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            what="headless Chromium",
            guard_s=COMMAND_GUARD_S,
            check=True,
        ).stdout
        assert png.read_bytes()[:8] == PNG_MAGIC
        return dom

    return open_page


def keep_screenshot(png: Path, name: str) -> Path | None:
    """Copy a screenshot to ``$FACTDEBATE_SCREENSHOTS/name`` when that is set (docs/img).

    The blank window below the page is cropped and the colours reduced until the file is at
    most 300 KB; returns the copy's path (None when the variable is not set).
    """
    folder = os.environ.get(SHOTS_ENV)
    if not folder:
        return None
    from PIL import Image, ImageChops

    image = Image.open(png).convert("RGB")
    blank = Image.new("RGB", image.size, (255, 255, 255))
    box = ImageChops.difference(image, blank).getbbox()
    if box is not None:
        image = image.crop((0, 0, image.width, min(image.height, box[3] + 16)))
    target = Path(folder) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    for colors in (256, 128, 64, 32):
        image.quantize(colors=colors).save(target, optimize=True)
        if target.stat().st_size <= MAX_SHOT_BYTES:
            return target
    raise AssertionError(f"{target}: over {MAX_SHOT_BYTES} bytes even with 32 colours")
