"""The VS Code extension packages: one ``.vsix`` per platform whose compiled libraries are built for
that platform, for every bundled CPython, and a universal one without libraries.

Built by ``bash scripts/vscode-package.sh`` (``.ci/run`` does it through the editor setup).
Skipped with the reason when the packages are not built, except under CI, where that fails.
"""

from __future__ import annotations

import json
import os
import struct
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "client-vscode" / "dist"
TARGETS = ("linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64")
PYTHONS = ("cp310", "cp311", "cp312", "cp313")
NATIVE = (".so", ".pyd", ".dylib")

#: what a compiled file's header must say for each target: (format, architecture)
WANT = {
    "linux-x64": ("ELF", "x86-64"),
    "linux-arm64": ("ELF", "aarch64"),
    "darwin-x64": ("Mach-O", "x86-64"),
    "darwin-arm64": ("Mach-O", "arm64"),
    "win32-x64": ("PE", "x86-64"),
}


def binary_kind(data: bytes) -> tuple[str, set[str]]:
    """``(format, architectures)`` from a compiled file's first bytes: ELF ``e_machine``
    (System V ABI: 0x3E x86-64, 0xB7 AArch64), Mach-O ``cputype`` (0x01000007 x86-64,
    0x0100000C arm64; a fat/universal2 file lists each slice), PE ``Machine`` (0x8664 x86-64,
    0xAA64 arm64). ``("?", set())`` when unknown."""
    if data[:4] == b"\x7fELF":
        little = data[5] == 1
        machine = struct.unpack("<H" if little else ">H", data[18:20])[0]
        return "ELF", {{0x3E: "x86-64", 0xB7: "aarch64"}.get(machine, hex(machine))}
    cpu = {0x01000007: "x86-64", 0x0100000C: "arm64"}
    if data[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe"):
        return "Mach-O", {cpu.get(struct.unpack("<I", data[4:8])[0], "?")}
    if data[:4] == b"\xca\xfe\xba\xbe":
        n = struct.unpack(">I", data[4:8])[0]
        archs = {cpu.get(struct.unpack(">I", data[8 + 20 * i : 12 + 20 * i])[0], "?") for i in range(min(n, 8))}
        return "Mach-O", archs
    if data[:2] == b"MZ":
        pe = struct.unpack("<I", data[0x3C:0x40])[0]
        if data[pe : pe + 4] == b"PE\0\0":
            machine = struct.unpack("<H", data[pe + 4 : pe + 6])[0]
            return "PE", {{0x8664: "x86-64", 0xAA64: "arm64"}.get(machine, hex(machine))}
    return "?", set()


def _vsix(name: str) -> Path:
    path = DIST / name
    if not path.is_file():
        reason = f"{path.relative_to(ROOT)} not built (run: bash scripts/vscode-package.sh)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.mark.parametrize("target", TARGETS)
def test_platform_vsix_bundles_binaries_for_its_target(target):
    with zipfile.ZipFile(_vsix(f"unveil-{target}.vsix")) as z:
        names = z.namelist()
        manifest = z.read("extension.vsixmanifest").decode("utf-8")
        assert f'TargetPlatform="{target}"' in manifest
        libs = "extension/bundled/libs/"
        assert z.read(libs + "TARGET").decode().strip() == target
        assert any(n.startswith(libs + "common/unveil/") for n in names)
        for py in PYTHONS:
            natives = [n for n in names if n.startswith(f"{libs}{py}/") and n.endswith(NATIVE)]
            assert natives, f"no compiled library for {py} in the {target} build"
            assert any("/regex/" in n for n in natives) and any("tiktoken" in n for n in natives), natives
            for n in natives:
                fmt, archs = binary_kind(z.read(n)[:4096])
                want_fmt, want_arch = WANT[target]
                assert fmt == want_fmt and want_arch in archs, f"{n}: {fmt} {sorted(archs)} in the {target} build"
        assert not [n for n in names if n.startswith(libs + "common/") and n.endswith(NATIVE)]
        lower = {n.lower() for n in names}  # vsce writes readme.md / changelog.md / LICENSE.txt
        for must in (
            "extension/readme.md",
            "extension/license.txt",
            "extension/changelog.md",
            "extension/images/icon.png",
        ):
            assert must in lower, must


def test_universal_vsix_has_no_bundled_libraries():
    with zipfile.ZipFile(_vsix("unveil-universal.vsix")) as z:
        names = z.namelist()
        assert not [n for n in names if n.startswith("extension/bundled/libs/")]
        assert "extension/bundled/tool/lsp_server.py" in names
        assert "TargetPlatform" not in z.read("extension.vsixmanifest").decode("utf-8")
        pkg = json.loads(z.read("extension/package.json"))
        assert pkg["icon"] == "images/icon.png"


def test_binary_kind_reads_headers():
    elf = b"\x7fELF\x02\x01\x01" + b"\0" * 11 + struct.pack("<H", 0xB7)
    assert binary_kind(elf) == ("ELF", {"aarch64"})
    macho = b"\xcf\xfa\xed\xfe" + struct.pack("<I", 0x0100000C)
    assert binary_kind(macho) == ("Mach-O", {"arm64"})
    fat = (
        b"\xca\xfe\xba\xbe"
        + struct.pack(">I", 2)
        + struct.pack(">I", 0x01000007)
        + b"\0" * 16
        + struct.pack(">I", 0x0100000C)
    )
    assert binary_kind(fat) == ("Mach-O", {"x86-64", "arm64"})
    pe = bytearray(b"MZ" + b"\0" * 0x3A + struct.pack("<I", 0x40) + b"PE\0\0" + struct.pack("<H", 0x8664))
    assert binary_kind(bytes(pe)) == ("PE", {"x86-64"})
    assert binary_kind(b"text") == ("?", set())
