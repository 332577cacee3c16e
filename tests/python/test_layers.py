"""The core's layers: each module imports only from the layers below it
(engine ← net ← tcp ← sim; spec above them; emu, the real-time driver, on top), and
congestion controls and recoveries do not import the sender. Read from the sources'
`use crate::` lines."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).parents[2] / "crates" / "vtlab-core" / "src"

#: module → top-level modules it may import from.
ALLOWED = {
    "engine": set(),
    "net": {"engine"},
    "tcp": {"engine", "net"},
    "metrics": set(),
    "sim": {"engine", "net", "tcp", "metrics"},
    "spec": {"engine", "net", "tcp", "sim", "metrics"},
    "emu": {"engine", "net", "tcp", "sim", "spec", "metrics"},
}


def imports(path: Path) -> set[str]:
    text = path.read_text()
    text = text.split("#[cfg(test)]")[0]  # test modules may use anything
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return set(re.findall(r"crate::([a-z_]+(?:::[a-z_]+)*)", code))


def test_every_module_imports_only_from_lower_layers():
    bad = []
    for path in SRC.rglob("*.rs"):
        rel = path.relative_to(SRC)
        top = rel.parts[0].removesuffix(".rs")
        if top not in ALLOWED or path.name == "tests.rs" or path.name.endswith("_tests.rs"):
            continue  # test modules (compiled only under #[cfg(test)]) may use anything
        for target in imports(path):
            first = target.split("::")[0]
            if first != top and first not in ALLOWED[top] and first != "VERSION":
                bad.append(f"{rel} uses crate::{target}")
    assert not bad, bad


def test_controllers_and_recoveries_do_not_import_the_sender():
    for sub in ("cc", "recovery"):
        for path in (SRC / "tcp" / sub).glob("*.rs"):
            assert not any(t.startswith("tcp::sender") for t in imports(path)), path
