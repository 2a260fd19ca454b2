"""No wait in the package without a bound, or a reason it needs none.

A thread's ``join()``, an event's or a condition's ``wait()``, a queue's ``get()``, a process's ``wait()`` or
``communicate()`` without a timeout waits for ever for something that may never come; each such call in
``zkconsumer/`` says at the call why it needs no timeout, in a comment beginning ``# no timeout`` (on the call's lines
or directly above them). The results of kazoo's requests are bounded in one place, the handler of every client
(:class:`zkconsumer.zk.client.BoundedHandler`, tested in tests/zk/test_client.py, which says why kazoo's own callback
threads are left to wait for the connection): so a ``.get()`` without arguments needs no comment in a module that
makes no queue (a dict's ``get`` takes a key), and every ``KazooClient`` of the package is given that handler."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "zkconsumer"
MARKER = "# no timeout"
#: modules that import one of these may make queues: their argument-less ``get()`` is no kazoo result
QUEUE_MODULES = {"queue", "multiprocessing", "asyncio"}
SUBPROCESS_WAITS = {"run", "call", "check_call", "check_output"}


def _has_timeout(call: ast.Call) -> bool:
    return any(keyword.arg == "timeout" for keyword in call.keywords)


def _unbounded(call: ast.Call, makes_queues: bool) -> bool:
    """Whether ``call`` waits with no timeout, as far as its text tells."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    name, args = func.attr, call.args
    if _has_timeout(call):
        return any(k.arg == "timeout" and isinstance(k.value, ast.Constant) and k.value.value is None
                   for k in call.keywords)
    if name in ("join", "wait") and not args and not call.keywords:
        return not (isinstance(func.value, ast.Constant) and isinstance(func.value.value, str))
    if name == "communicate":
        return True
    if name == "wait_for" and len(args) == 1:  # a condition's; asyncio.wait_for takes its timeout second
        return True
    if name == "get":
        blocking = not args or (isinstance(args[0], ast.Constant) and args[0].value is True and len(args) == 1)
        blocking = blocking and not any(k.arg == "block" for k in call.keywords)
        return blocking and makes_queues
    return (name in SUBPROCESS_WAITS and isinstance(func.value, ast.Name) and func.value.id == "subprocess")


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.partition(".")[0])
    return names


def _explained(lines: list[str], call: ast.Call) -> bool:
    """A ``# no timeout`` comment on the call's lines or in the comment lines directly above it."""
    end = call.end_lineno or call.lineno
    if any(MARKER in line for line in lines[call.lineno - 1:end]):
        return True
    number = call.lineno - 2
    while number >= 0 and lines[number].lstrip().startswith("#"):
        if lines[number].lstrip().startswith(MARKER):
            return True
        number -= 1
    return False


def unexplained_waits() -> Iterator[str]:
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines()
        makes_queues = bool(_imports(tree) & QUEUE_MODULES)
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not _unbounded(node, makes_queues):
                continue
            if _explained(lines, node):
                continue
            yield f"zkconsumer/{relative}:{node.lineno}: {ast.unparse(node)}"


def test_every_wait_without_a_timeout_says_why():
    assert list(unexplained_waits()) == []


def test_every_kazoo_client_of_the_package_bounds_its_requests():
    unbounded = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "KazooClient"
                    and not any(keyword.arg == "handler" for keyword in node.keywords)):
                unbounded.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert unbounded == []


def test_the_audit_finds_what_it_looks_for():
    """The rules above, on examples: what they must flag, and what they must not."""
    def flagged(code: str, makes_queues: bool = True) -> bool:
        call = ast.parse(code).body[0].value  # type: ignore[attr-defined]
        return _unbounded(call, makes_queues)

    for code in ("thread.join()", "stop.wait()", "process.wait()", "process.communicate()", "cond.wait_for(ready)",
                 "lines.get()", "lines.get(True)", "chunks.get(timeout=None)", "subprocess.run(argv)"):
        assert flagged(code), code
    for code in ("thread.join(5)", "stop.wait(0.2)", "process.wait(timeout=1)", "process.communicate(timeout=5)",
                 "cond.wait_for(ready, 1.0)", "lines.get(timeout=1)", "lines.get(block=False)", "d.get(key)",
                 "', '.join(names)", "subprocess.run(argv, timeout=5)", "asyncio.wait_for(coro, 5)"):
        assert not flagged(code), code
    assert not flagged("result.get()", makes_queues=False)  # a kazoo result, bounded by the client's handler
    lines = ["# no timeout: a reason", "x.join()"]
    assert _explained(lines, ast.parse("\n".join(lines)).body[0].value)  # type: ignore[attr-defined]
