"""Issue 9 item 4: every file unveil reads goes through core/safe_read.py: regular files only
(FIFOs never block), configuration / rule / price files bounded to 1 MiB, a clear refusal."""

from __future__ import annotations

import os

import pytest
from helpers import bounded

from unveil.core import imports, project, safe_read
from unveil.core.rules import load_rule_files


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "pipe"
    os.mkfifo(p)
    return p


def test_fifo_is_refused_without_blocking(fifo):
    with pytest.raises(safe_read.RefusedRead) as exc:
        bounded(lambda: safe_read.read_bytes(fifo))
    assert str(exc.value) == f"{fifo}: refused to read: a named pipe (FIFO), not a regular file"


def test_device_is_refused(tmp_path):
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    with pytest.raises(safe_read.RefusedRead) as exc:
        safe_read.read_bytes(link)
    assert exc.value.reason == "refused to read: a character device, not a regular file"


def test_size_bound(tmp_path):
    p = tmp_path / "big.toml"
    p.write_bytes(b"#" * (safe_read.MAX_CONFIG_BYTES + 1))
    with pytest.raises(safe_read.RefusedRead) as exc:
        safe_read.read_config_text(p)
    assert exc.value.reason == "refused to read: 1,048,577 bytes is more than the 1,048,576-byte limit"
    assert len(safe_read.read_bytes(p)) == safe_read.MAX_CONFIG_BYTES + 1  # scanned files: no cap


CHUNK = 1 << 20


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7])
@pytest.mark.parametrize("checked", [False, True])
def test_every_byte_is_read_whatever_the_size(tmp_path, size, checked):
    data = bytes((i * 7 + i // 251) % 256 for i in range(size))
    p = tmp_path / "f.md"
    p.write_bytes(data)
    assert safe_read.read_bytes(p, checked=checked) == data
    assert safe_read.read_bytes(p, size, checked=checked) == data  # exactly at the cap
    if size:
        with pytest.raises(safe_read.RefusedRead):
            safe_read.read_bytes(p, size - 1, checked=checked)


def test_a_file_whose_size_says_nothing_is_read_to_the_end():
    # /proc files report st_size 0 and give their content in several reads
    data = safe_read.read_bytes("/proc/self/status")
    assert data.startswith(b"Name:") and data.endswith(b"\n") and b"VmPeak" in data


def test_checked_still_refuses_what_is_not_a_regular_file(fifo, tmp_path):
    # the stat before open is left out, the fstat after it is not (a FIFO opens without blocking)
    with pytest.raises(safe_read.RefusedRead) as exc:
        bounded(lambda: safe_read.read_bytes(fifo, checked=True))
    assert exc.value.reason == "refused to read: a named pipe (FIFO), not a regular file"
    with pytest.raises(safe_read.RefusedRead):
        safe_read.read_bytes(tmp_path, checked=True)


def test_config_pointing_at_dev_zero_is_an_error_not_a_hang(tmp_path):
    (tmp_path / ".unveil.toml").symlink_to("/dev/zero")
    cfg = bounded(lambda: project.load(tmp_path / ".unveil.toml"))
    assert cfg.errors == (
        f"{tmp_path / '.unveil.toml'}: cannot read config: refused to read: a character device, not a regular file",
    )


def test_config_fifo(tmp_path):
    os.mkfifo(tmp_path / ".unveil.toml")
    cfg = bounded(lambda: project.load(tmp_path / ".unveil.toml"))
    assert cfg.errors[0].endswith("refused to read: a named pipe (FIFO), not a regular file")


def test_rule_file_fifo(tmp_path):
    os.mkfifo(tmp_path / "rules.toml")
    rs = bounded(lambda: load_rule_files([tmp_path / "rules.toml"]))
    assert rs.errors == [
        f"{tmp_path / 'rules.toml'}: cannot read rule file: refused to read: a named pipe (FIFO), not a regular file"
    ]


def test_prices_file_fifo(tmp_path):
    from unveil.core import prices

    os.mkfifo(tmp_path / "prices.toml")
    got = bounded(lambda: prices._read_user_file(str(tmp_path / "prices.toml")))
    assert (
        got
        == f"prices file {tmp_path / 'prices.toml'}: cannot read it (refused to read: a named pipe (FIFO), not a regular file)"
    )


def test_import_of_fifo_reads_nothing(tmp_path, fifo):
    read = imports.disk_reader()
    assert bounded(lambda: read(str(fifo))) is None


def test_watched_fifo_does_not_block_the_workspace_worker(tmp_path):
    from unveil.core.discovery import read_text

    os.mkfifo(tmp_path / "AGENTS.md")
    with pytest.raises(OSError):
        bounded(lambda: read_text(tmp_path / "AGENTS.md"))


def test_deeply_nested_config_is_a_message(tmp_path):
    (tmp_path / ".unveil.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    cfg = bounded(lambda: project.load(tmp_path / ".unveil.toml"))
    assert len(cfg.errors) == 1 and "invalid TOML" in cfg.errors[0]


def test_will_need_advises_regular_files_only_and_reads_nothing(tmp_path, fifo):
    files = [tmp_path / f"f{i}.md" for i in range(3)]
    for f in files:
        f.write_text("x" * 10)
    paths = [str(f) for f in files] + [str(tmp_path / "missing.md"), str(tmp_path), str(fifo)]
    assert bounded(lambda: safe_read.will_need(paths)) == 3  # the FIFO opens without blocking, is skipped
    assert safe_read.will_need([]) == 0
    assert [f.read_text() for f in files] == ["x" * 10] * 3
