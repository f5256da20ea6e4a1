"""The LICENSE file: the Apache licence, version 2.0, that pyproject.toml declares."""

from __future__ import annotations

import tomllib

from tests.conftest import REPO


def test_license_file_is_the_apache_licence_pyproject_declares() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"]
    assert declared == "Apache-2.0"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    for part in (
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
        "2. Grant of Copyright License.",
        "3. Grant of Patent License.",
        "9. Accepting Warranty or Additional Liability.",
        "END OF TERMS AND CONDITIONS",
    ):
        assert part in text, part
