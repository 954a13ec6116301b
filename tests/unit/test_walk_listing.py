"""``discovery.walk`` lists each folder once with ``os.scandir`` and asks the filters about a
folder's entries only where one can apply. These tests hold it to the walk it replaced (an
``os.walk`` that asked :meth:`Filters.excluded` about every entry and ``stat``-ed every file) over
a generated family of trees: the same files in the same order, the same symlinks reported as
leaving the root, the same counts of what the filters left out."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from unveil.core import kinds
from unveil.core.discovery import SKIP_DIRS, Exclude, Filters, collect, display_path, escape_target, is_regular, walk


def reference_walk(root: Path, filters: Filters, outside) -> list[Path]:
    """The walk before ``os.scandir``: ``os.walk``, every entry through ``filters.excluded``."""
    root = Path(root).absolute()
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        kept = []
        for d in sorted(dirs):
            reason = filters.excluded(here / d, True)
            if reason is None:
                kept.append(d)
            elif d not in SKIP_DIRS and d != ".git":
                filters._count(reason)
        dirs[:] = kept
        for name in sorted(files):
            f = here / name
            if not kinds.is_agent_file(str(f)):
                continue
            reason = filters.excluded(f, False)
            if reason is not None:
                filters._count(reason)
                continue
            if os.path.islink(f):
                target = escape_target(f, root)
                if target is not None:
                    outside(f, target)
                    continue
            if is_regular(f):
                found.append(f)
    return found


NAMES = ["a", "b", "Docs", ".claude", "node_modules", ".git", "build", "rules", "x.md", "z"]
FILES = ["AGENTS.md", "CLAUDE.md", "notes.md", "readme.txt", ".cursorrules", "SKILL.md", "a.mdc", "b.draft.md"]


def _tree(root: Path, rng: random.Random, outside_dir: Path) -> None:
    folders = [root]
    for _ in range(rng.randint(3, 14)):
        parent = rng.choice(folders)
        d = parent / rng.choice(NAMES)
        if d.exists():
            continue
        d.mkdir()
        folders.append(d)
    for folder in folders:
        for name in rng.sample(FILES, rng.randint(0, 4)):
            (folder / name).write_text(f"# {name}\n")
    for _ in range(rng.randint(0, 4)):  # symlinks: inside, outside, broken, to a folder
        folder = rng.choice(folders)
        name = rng.choice(["link.md", "CLAUDE.md", "linked", "env.md"])
        link = folder / name
        if link.exists() or link.is_symlink():
            continue
        target = rng.choice(
            [outside_dir / "secret.md", rng.choice(folders), root / "missing.md", outside_dir, root / "AGENTS.md"]
        )
        os.symlink(target, link)
    if hasattr(os, "mkfifo") and rng.random() < 0.3:
        fifo = rng.choice(folders) / "pipe.md"
        if not fifo.exists():
            os.mkfifo(fifo)


def _filters(rng: random.Random, root: Path) -> Filters:
    choice = rng.randrange(3)
    if choice == 0:
        return Filters()
    if choice == 1:
        return Filters(excludes=(Exclude("*.draft.md", root), Exclude("rules/", root)))
    return Filters(skip_names=frozenset(), excludes=(Exclude("Docs/**", root),))


def _generated(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    """``(root, a folder outside it)``: the tree :func:`_tree` makes for ``seed``."""
    root, outside_dir = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    outside_dir.mkdir()
    (outside_dir / "secret.md").write_text("secret\n")
    _tree(root, random.Random(seed), outside_dir)
    return root, outside_dir


@pytest.mark.parametrize("seed", range(40))
def test_walk_agrees_with_the_os_walk_it_replaced(tmp_path, seed):
    root, outside_dir = _generated(tmp_path, seed)
    if seed % 4 == 3 and shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".gitignore").write_text("notes.md\n!Docs/notes.md\nz/\n")
    got_out: list = []
    want_out: list = []
    f1, f2 = _filters(random.Random(seed), root), _filters(random.Random(seed), root)
    got = list(walk(root, filters=f1, outside=lambda f, t: got_out.append((f, t))))
    want = reference_walk(root, f2, lambda f, t: want_out.append((f, t)))
    assert got == want
    assert got_out == want_out
    assert f1.ignored == f2.ignored


def test_a_deep_tree_is_walked_without_recursion(tmp_path):
    depth = sys.getrecursionlimit() + 200
    folder = tmp_path / "deep"
    chain = []
    try:
        for _ in range(depth):  # one level at a time: Path.mkdir(parents=True) itself recurses
            folder = folder / "d" if chain else folder
            folder.mkdir()
            chain.append(folder)
        (folder / "AGENTS.md").write_text("# deep\n")
        got = list(walk(tmp_path, filters=Filters()))
        assert got == [folder / "AGENTS.md"]
    finally:  # removed bottom up here: shutil.rmtree (and pytest's clean-up of old runs) recurses
        if chain:
            (chain[-1] / "AGENTS.md").unlink(missing_ok=True)
        for f in reversed(chain):
            f.rmdir()


def test_a_folder_that_cannot_be_listed_goes_to_onerror(tmp_path):
    errors: list[OSError] = []
    missing = tmp_path / "gone"
    assert list(walk(missing, onerror=errors.append, filters=Filters())) == []
    assert [type(e) for e in errors] == [FileNotFoundError]
    assert errors[0].filename == str(missing)


def test_filters_say_where_they_may_exclude(tmp_path):
    assert Filters().may_exclude_in(tmp_path) is False
    assert Filters(excludes=(Exclude("*.md", tmp_path),)).may_exclude_in(tmp_path) is True
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / "sub").mkdir()
        assert Filters().may_exclude_in(tmp_path / "sub") is True
        assert Filters(gitignore=False).may_exclude_in(tmp_path / "sub") is False


@pytest.mark.parametrize("seed", range(0, 40, 3))
@pytest.mark.parametrize("where", ["inside", "above", "elsewhere"])
def test_collect_shows_paths_and_real_paths_as_display_path_and_realpath_do(tmp_path, seed, where, monkeypatch):
    root, outside_dir = _generated(tmp_path, seed)
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / ".unveil.toml").write_text("ignore = []\n")
    (root / "sub" / "CLAUDE.md").write_text("# c\n")
    cwd = {"inside": root, "above": tmp_path, "elsewhere": outside_dir}[where]
    monkeypatch.chdir(cwd)
    got = collect([str(root)], cwd=cwd, filters=Filters())
    want = [(display_path(p, cwd.resolve()), p) for p in walk(root, filters=Filters())]
    reals = [os.path.realpath(p) for _, p in want]
    keep = [w for i, w in enumerate(want) if reals[i] not in reals[:i]]  # a file reached twice is taken once
    assert got.files == keep
    # every folder the walk listed, with the configuration names its listing showed
    listed = {str(Path(f).absolute()) for f, _dirs, _files in os.walk(root)}
    assert set(got.listed) <= listed and str(root) in got.listed
    assert got.listed[str(root / "sub")] == frozenset({".unveil.toml"})
    assert all(names == frozenset() for f, names in got.listed.items() if f != str(root / "sub"))
