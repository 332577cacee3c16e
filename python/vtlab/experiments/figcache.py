"""Figures drawn again only when their inputs changed.

A reproduction's figures (PNG and SVG) take most of the time of re-rendering a
finished campaign. Each figure's inputs are the campaign's stored runs (its store's
commit records, :mod:`vtlab.store`), the configuration (quick, profile, runs) and the
code that draws it (every source file of the ``vtlab`` package, the core build and
matplotlib's version). ``OUT/.figures.json`` records, per figure, the key of those
inputs and the SHA-256 of each file written; a figure whose key is unchanged and
whose files are there with those digests is not drawn again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from vtlab.api import core_build
from vtlab.forkmap import started

__all__ = ["CACHE_FILE", "FigureCache", "drawing", "inputs_key"]

#: The record of the figures drawn, in the output folder.
CACHE_FILE = ".figures.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _code_digest() -> str:
    """The vtlab package's sources (and data files of its experiments), matplotlib's
    version and the core build, hashed."""
    import matplotlib

    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"{matplotlib.__version__} {core_build()}".encode())
    files = sorted(package.rglob("*.py")) + sorted((package / "experiments").rglob("*.toml"))
    for path in files:
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _store_digest(store: Path) -> str:
    """The store's commit records (which runs it holds and each part's digests)."""
    digest = hashlib.sha256()
    journal = store / "_journal"
    names = sorted(os.listdir(journal)) if journal.is_dir() else []
    for name in names:
        if name.endswith(".json"):
            digest.update(name.encode())
            digest.update((journal / name).read_bytes())
    return digest.hexdigest()


def inputs_key(store: Path, config: Mapping[str, Any]) -> str:
    """The key of every figure's inputs: the store's runs, ``config``, the code."""
    text = json.dumps(
        {"store": _store_digest(store), "config": dict(config), "code": _code_digest()},
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class FigureCache:
    """The figures of the output folder ``out`` drawn with inputs ``key``."""

    def __init__(self, out: Path, key: str) -> None:
        self.out = out
        self.key = key
        self.path = out / CACHE_FILE
        try:
            recorded = json.loads(self.path.read_text())
            self.figures: dict[str, Any] = dict(recorded["figures"])
        except (OSError, ValueError, KeyError, TypeError):
            self.figures = {}

    def fresh(self, stem: str) -> list[Path] | None:
        """The files of figure ``stem`` when drawn with these inputs and unchanged
        since; ``None`` when it must be drawn."""
        entry = self.figures.get(stem)
        if not isinstance(entry, dict) or entry.get("key") != self.key:
            return None
        files = entry.get("files")
        if not isinstance(files, dict) or not files:
            return None
        paths = [self.out / name for name in files]
        for path, digest in zip(paths, files.values(), strict=True):
            if not path.is_file() or _sha256(path) != digest:
                return None
        return paths

    def drawn(self, stem: str, paths: Iterable[Path]) -> None:
        """Record that figure ``stem`` was drawn into ``paths`` with these inputs."""
        files = {p.name: _sha256(p) for p in paths}
        self.figures[stem] = {"key": self.key, "files": files}

    def save(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text(json.dumps({"figures": self.figures}, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path)


@contextlib.contextmanager
def drawing(
    cache: FigureCache, draws: Mapping[str, Callable[[], list[Path] | None]], jobs: int = 1
) -> Iterator[Callable[[], list[Path]]]:
    """Every figure of ``draws`` (stem: a function that draws and saves it and returns
    its files, or ``None`` when there is nothing to draw) that is not fresh in the
    cache, drawn up to ``jobs`` at a time in forked processes while the block runs
    (:func:`vtlab.forkmap.started`; with one job, here before it): gives a function
    that waits for them, records them in the cache (saved) and returns every figure's
    files in order (the fresh ones from the cache)."""
    fresh = {stem: cache.fresh(stem) for stem in draws}
    stale = [stem for stem, paths in fresh.items() if paths is None]
    if len(stale) > 1 and jobs > 1:
        # Imported once here rather than in each child at its first figure (the
        # backends, and the figure with its axes: 0.25-0.35 s in each child).
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.backends.backend_svg  # noqa: F401
        import matplotlib.figure  # noqa: F401

    with started([draws[stem] for stem in stale], jobs) as results:

        def files() -> list[Path]:
            drawn = dict(zip(stale, results(), strict=True))
            out: list[Path] = []
            for stem, paths in fresh.items():
                if paths is None:
                    paths = drawn[stem]
                    if not paths:
                        continue
                    cache.drawn(stem, paths)
                out += paths
            cache.save()
            return out

        yield files
