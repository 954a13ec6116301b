"""The wheel's metadata: version, licence (MIT, LICENSE shipped), classifiers for every
supported Python, project URLs. Builds the wheel once with pip (hatchling from the index)."""

from __future__ import annotations

import email
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from unveil import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if res.returncode != 0:
        pytest.fail(f"pip wheel failed: {res.stderr[-2000:]}")
    (whl,) = out.glob("unveil-*.whl")
    return zipfile.ZipFile(whl)


def test_metadata(wheel):
    meta = email.message_from_bytes(wheel.read(f"unveil-{__version__}.dist-info/METADATA"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["Name"] == "unveil" and meta["Version"] == __version__ == project["version"]
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.10"
    classifiers = meta.get_all("Classifier")
    assert [c for c in classifiers if c.startswith("Programming Language :: Python :: 3.")] == [
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
    ]
    assert "Topic :: Security" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert all(u.startswith("https://github.com/unveil-lsp/unveil") for u in urls.values())


def test_licence_shipped(wheel):
    text = wheel.read(f"unveil-{__version__}.dist-info/licenses/LICENSE").decode()
    assert text.startswith("MIT License\n") and text == (ROOT / "LICENSE").read_text()
    names = wheel.namelist()
    assert "unveil/rules/hidden-content.toml" in names and "unveil/docs/rules.md" in names
