"""The supervisor console: a local control channel through which a supervisor, identified by id and
PIN, takes the steps that need more than the panel's buttons (chip-count resolution, maintenance,
configuration changes, meter corrections, tests, and the panel's own steps by name).

Responsible for one UNIX stream socket (``[console] socket``, mode 0660): a reader thread reads
every connection at once (each must deliver one JSON request line, at most `MAX_REQUEST_BYTES`,
within `CONNECTION_TIMEOUT_S` of its accept; at most `MAX_CLIENTS` open, one more closes the
oldest still sending), so an idle or slow client delays nobody; a worker thread takes the complete
lines in order, checks their shape, authenticates the supervisor against the configuration's
scrypt PIN hashes, turns the request into the round's `Event` (with the supervisor's id) and posts
it to the owner with `Owner.post_tracked`; it answers one JSON line once the owner has committed
that event: ``{"ok": true, "seq", "state", "effects"}``, or ``{"ok": false, "error"}`` (a request
the machine refused keeps its ``seq``, ``state`` and ``effects``: the refusal is journaled).

A refused PIN (wrong PIN, unknown supervisor, an id locked after `LOCKOUT_AFTER` wrong PINs) is
itself journaled as a ``console_refused`` entry (supervisor id, request, reason; never the PIN)
posted to the owner; the round machine accepts it in every state as an informational event and
changes nothing. Every wrong PIN of a configured supervisor is journaled, so the counters
(`controller.supervisor.lockout`) are rebuilt from the journal at start (``history``): a restart
clears no lock. Of the other refusals at most `JOURNALED_REFUSALS_PER_MINUTE` a
minute are journaled; the others are counted (``refusals``) and the next journaled refusal
carries how many were not (``unjournaled``), so a flood of guesses cannot fill the journal.

Must never: touch the round machine or the journal (it only calls ``post``/``post_tracked`` and
reads the published snapshot), decide what an event means (the machine does), log, echo or
journal a PIN, or let bad input end its thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import selectors
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from controller.config import DEFAULT_CONSOLE_SOCKET
from controller.supervisor.gate import PinCheck, PinGate, valid_supervisor_id
from controller.supervisor.lockout import (
    LOCKOUT_S,
    WINDOW_S,
    HistoryEntry,
    LockoutBook,
    wall_ms,
)
from controller.supervisor.requests import (
    REQUESTS,
    RequestError,
    build_event,
    count_args,
    no_constant,
    short,
)
from fsm.round.effects import Rejected
from fsm.round.events import (
    JSON,
    Event,
)

log = logging.getLogger(__name__)

DEFAULT_SOCKET = DEFAULT_CONSOLE_SOCKET
SOCKET_MODE = 0o660
#: The longest request line accepted, newline included.
MAX_REQUEST_BYTES = 4096
#: A connection must deliver its whole request line within this time from its accept (seconds).
CONNECTION_TIMEOUT_S = 1.0
#: Connections open at once; one more closes the oldest still sending its request.
MAX_CLIENTS = 16
#: How long the worker waits for a client to take its reply (seconds).
REPLY_SEND_S = 1.0
#: How long the console waits for the owner to commit a posted event (seconds).
COMMIT_TIMEOUT_S = 10.0
REQUEST_KEYS = ("request", "args", "supervisor", "pin")


@dataclass(frozen=True)
class Request:
    """One parsed request line. The PIN is kept out of ``repr``."""

    name: str
    args: tuple[str, ...] = ()
    supervisor: str | None = None
    pin: str | None = field(default=None, repr=False)


# ------------------------------------------------------------------------------------- parsing
def parse_line(line: bytes) -> Request:
    """The request of one line (bytes, without the newline). `RequestError` names the problem;
    no message ever repeats the PIN."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"request: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise RequestError("request: empty line; send one JSON object per line")
    try:
        data = json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise RequestError("request: nested too deeply") from None
    except ValueError as exc:
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise RequestError(f"request: not JSON ({message})") from None
    if not isinstance(data, dict):
        raise RequestError(f"request: must be a JSON object, got {type(data).__name__}")
    for key in data:
        if key not in REQUEST_KEYS:
            raise RequestError(f"{short(key)}: unknown key (allowed: {', '.join(REQUEST_KEYS)})")
    name = data.get("request")
    if not isinstance(name, str) or name not in REQUESTS:
        raise RequestError(f"request: must be one of {', '.join(REQUESTS)}, got {short(name)}")
    raw_args = data.get("args", [])
    if not isinstance(raw_args, list):
        raise RequestError(f"args: must be a list of strings, got {type(raw_args).__name__}")
    for i, arg in enumerate(raw_args):
        if not isinstance(arg, str):
            raise RequestError(f"args[{i}]: must be a string, got {type(arg).__name__}")
    supervisor = data.get("supervisor")
    if supervisor is not None and (not valid_supervisor_id(supervisor)):
        raise RequestError(
            "supervisor: must be a supervisor id (1-32 lowercase letters, digits, '_' or '-')"
        )
    pin = data.get("pin")
    if pin is not None and not isinstance(pin, str):
        raise RequestError(f"pin: must be a string, got {type(pin).__name__}")
    if name != "status":
        if supervisor is None:
            raise RequestError(f"supervisor: required for {name}")
        if pin is None:
            raise RequestError(f"pin: required for {name}")
    return Request(name, tuple(raw_args), supervisor, pin)


class ConsoleOwner(Protocol):
    """What the console needs of the owner (``controller.service.owner.Owner``)."""

    @property
    def public(self) -> Any: ...

    def post_tracked(self, event: Event) -> Any: ...


def _thaw(value: Any) -> JSON:
    """A published (read-only) value as plain JSON."""
    if isinstance(value, Mapping):
        return {str(k): _thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


@dataclass
class _Client:
    """One connection being read: its bytes so far and its deadline (the console's clock)."""

    sock: socket.socket
    deadline: float
    opened: float
    buf: bytearray = field(default_factory=bytearray)


class ConsoleServer:
    """The console's socket, its reader thread and its worker thread. `start` binds (replacing a
    stale socket, never another kind of file), replays the wrong-PIN counters from ``history``
    and serves; `stop` closes and removes the socket.

    The reader thread (``console``) accepts and reads every connection at once (a selector): a
    connection has ``timeout_s`` from its accept to deliver its request line, and at most
    ``max_clients`` are open (a new one beyond closes the oldest still reading, with a reply
    that says so), so an idle or slow client delays nobody. Complete request lines go, in order,
    to the worker thread (``console-worker``), which authenticates, posts and replies.
    """

    def __init__(
        self,
        owner: ConsoleOwner,
        supervisors: Mapping[str, PinCheck],
        path: str | Path = DEFAULT_SOCKET,
        *,
        timeout_s: float = CONNECTION_TIMEOUT_S,
        commit_timeout_s: float = COMMIT_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
        on_request: Callable[[str, Sequence[str]], None] | None = None,
        max_clients: int = MAX_CLIENTS,
        history: Callable[[int], Iterable[HistoryEntry]] | None = None,
        now_ms: Callable[[], int] = wall_ms,
        book: LockoutBook | None = None,
    ) -> None:
        self.path = Path(path)
        self._owner = owner
        self._timeout_s = timeout_s
        self._commit_timeout_s = commit_timeout_s
        self._clock = clock
        self._on_request = on_request
        self._max_clients = max(1, max_clients)
        self._history = history
        self._now_ms = now_ms
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._worker: threading.Thread | None = None
        self._work: queue.Queue[tuple[socket.socket, bytes, str | None] | None] = queue.Queue()
        self._clients: dict[int, _Client] = {}
        self._stopping = threading.Event()
        # the table's one book shared with the page's sign-in (`lockout.shared_book`, already
        # rebuilt from the journal), or this console's own (rebuilt from ``history`` at start)
        self._shared_book = book is not None
        self._book = book if book is not None else LockoutBook()
        #: the PIN gate every channel of this table shares (controller.supervisor.gate)
        self.gate = PinGate(
            owner, supervisors, self._book, clock=clock, commit_timeout_s=commit_timeout_s
        )
        #: Requests answered since the start (any outcome).
        self.answered = 0
        #: Connections closed unanswered because ``max_clients`` were open.
        self.evicted = 0
        #: Journal entries the wrong-PIN counters were rebuilt from at start.
        self.replayed = self._book.replayed if self._shared_book else 0

    @property
    def refusals(self) -> int:
        """Every refused authentication since the start (journaled or not)."""
        return self.gate.refusals

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Bind the socket (mode 0660) and start the console threads. OSError when the path
        cannot be used (its directory is missing, or another kind of file is there)."""
        path = self.path
        if len(os.fsencode(path)) >= 104:
            raise OSError(f"console socket path too long for a UNIX socket: {path}")
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISSOCK(mode):
                raise OSError(f"console socket: {path} exists and is not a socket")
            path.unlink()  # a stale socket of a previous run
        if self._shared_book:  # rebuilt from the journal by its first holder
            self.replayed = self._book.replayed
        elif self._history is not None:  # the limits survive a restart: rebuilt from the journal
            now_ms = self._now_ms()
            entries = self._history(now_ms - int(WINDOW_S * 1000) - int(LOCKOUT_S * 1000))
            self.replayed = self._book.replay(entries, self._clock(), now_ms)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(path))
            os.chmod(path, SOCKET_MODE)
            sock.listen(64)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._worker = threading.Thread(target=self._work_loop, name="console-worker", daemon=True)
        self._worker.start()
        self._thread = threading.Thread(target=self._serve, name="console", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        self._stopping.set()
        self._work.put(None)
        for thread in (self._thread, self._worker):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        for client in list(self._clients.values()):
            client.sock.close()
        self._clients.clear()
        try:
            if stat.S_ISSOCK(self.path.lstat().st_mode):
                self.path.unlink()
        except OSError:
            pass

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ the reader thread
    def _serve(self) -> None:
        sock = self._sock
        assert sock is not None
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_READ, None)
            while not self._stopping.is_set():
                try:
                    self._serve_once(selector, sock)
                except Exception:  # never let one connection end the console
                    log.exception("console: serving failed")
                    time.sleep(0.05)
            for client in list(self._clients.values()):
                self._drop(selector, client, None)

    def _serve_once(self, selector: selectors.BaseSelector, sock: socket.socket) -> None:
        now = time.monotonic()
        soonest = min((c.deadline for c in self._clients.values()), default=now + 0.25)
        for key, _ in selector.select(max(0.0, min(0.25, soonest - now))):
            if key.data is None:
                self._accept(selector, sock)
            else:
                self._read(selector, key.data)
        now = time.monotonic()
        for client in [c for c in self._clients.values() if c.deadline <= now]:
            why = f"timeout: no complete request line within {self._timeout_s:g} s"
            self._drop(selector, client, why)

    def _accept(self, selector: selectors.BaseSelector, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                if not self._stopping.is_set():
                    log.exception("console: accept failed")
                return
            if len(self._clients) >= self._max_clients:  # the oldest still reading makes room
                oldest = min(self._clients.values(), key=lambda c: c.opened)
                self.evicted += 1
                self._drop(
                    selector,
                    oldest,
                    f"busy: {self._max_clients} connections open; the oldest one still "
                    "sending its request is closed",
                )
            conn.setblocking(False)
            now = time.monotonic()
            client = _Client(conn, now + self._timeout_s, now)
            self._clients[conn.fileno()] = client
            selector.register(conn, selectors.EVENT_READ, client)

    def _read(self, selector: selectors.BaseSelector, client: _Client) -> None:
        try:
            chunk = client.sock.recv(MAX_REQUEST_BYTES + 1 - len(client.buf))
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._drop(selector, client, f"connection error: {exc.strerror or exc}")
            return
        if not chunk:  # EOF: the text so far is the request (a client without a newline)
            self._hand_over(selector, client, bytes(client.buf))
            return
        client.buf += chunk
        end = client.buf.find(b"\n")
        if end >= 0:
            self._hand_over(selector, client, bytes(client.buf[:end]).rstrip(b"\r"))
        elif len(client.buf) > MAX_REQUEST_BYTES:
            self._drop(
                selector, client, f"request too long: at most {MAX_REQUEST_BYTES} bytes per line"
            )

    def _hand_over(self, selector: selectors.BaseSelector, client: _Client, line: bytes) -> None:
        self._forget(selector, client)
        self._work.put((client.sock, line, None))

    def _drop(self, selector: selectors.BaseSelector, client: _Client, why: str | None) -> None:
        """Close a connection that is still reading; with ``why``, answered by the worker."""
        self._forget(selector, client)
        if why is None:
            client.sock.close()
        else:
            self._work.put((client.sock, b"", why))

    def _forget(self, selector: selectors.BaseSelector, client: _Client) -> None:
        self._clients.pop(client.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(client.sock)

    # ------------------------------------------------------------------ the worker thread
    def _work_loop(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                break
            conn, line, problem = item
            try:
                if self._stopping.is_set():
                    continue
                reply: dict[str, JSON]
                reply = {"ok": False, "error": problem} if problem else self.answer(line)
                self.answered += 1
                conn.setblocking(True)
                conn.settimeout(REPLY_SEND_S)
                conn.sendall(json.dumps(reply, separators=(",", ":")).encode("utf-8") + b"\n")
            except OSError:
                log.info("console: the client left before the reply")
            except Exception:  # never let one request end the console
                log.exception("console: request failed")
            finally:
                conn.close()

    def answer(self, line: bytes) -> dict[str, JSON]:
        """The reply to one request line (called on the worker thread)."""
        try:
            request = parse_line(line)
            if request.name == "status":
                return self._status()
            assert request.supervisor is not None and request.pin is not None
            if request.name == "verify-software":
                return self._verify_software(request)
            event = build_event(request.name, request.args, request.supervisor)
        except RequestError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # a parser bug: still an answer, never a dead thread
            log.exception("console: request could not be parsed")
            return {"ok": False, "error": f"internal error: {type(exc).__name__}"}
        try:
            refused = self.gate.authenticate(request.supervisor, request.pin, request.name)
            if refused is not None:
                return {"ok": False, "error": refused}
            if self._on_request is not None:
                self._on_request(request.name, request.args)
            return self._post(event)
        except Exception as exc:
            log.exception("console: request failed")
            return {"ok": False, "error": f"internal error: {type(exc).__name__}: {exc}"[:300]}

    def _verify_software(self, request: Request) -> dict[str, JSON]:
        """The on-demand software digest for the supervisor's seed, journaled with who asked
        (`controller.lab.software`); a malformed seed is refused before the PIN is checked."""
        from controller.lab.software import VerifyError, parse_seed
        from controller.lab.software import request as verification

        assert request.supervisor is not None and request.pin is not None
        try:
            count_args(request.name, request.args, 1, 1)
            parse_seed("hmac-sha1", request.args[0])
        except (RequestError, VerifyError) as exc:
            return {"ok": False, "error": str(exc)}
        refused = self.gate.authenticate(request.supervisor, request.pin, request.name)
        if refused is not None:
            return {"ok": False, "error": refused}
        record, answer = verification("hmac-sha1", request.args[0], request.supervisor, "console")
        posted = self._post(record.envelope())
        if not posted.get("ok"):
            return posted
        return {**posted, **{k: _thaw(v) for k, v in answer.items()}}

    # ------------------------------------------------------------------ authentication
    # ------------------------------------------------------------------ posting and status
    def _post(self, event: Event) -> dict[str, JSON]:
        receipt = self._owner.post_tracked(event)
        if not receipt.wait(self._commit_timeout_s):
            return {
                "ok": False,
                "error": f"the table has not committed {event.type} within "
                f"{self._commit_timeout_s:g} s; it is queued and may still be carried out: "
                "check status",
            }
        if receipt.seq is None:
            return {"ok": False, "error": f"{event.type} not committed: {receipt.error}"}
        effects: list[JSON] = [e.to_json() for e in receipt.effects]
        public = receipt.public
        state = public.state if public is not None else self._owner.public.state
        reply: dict[str, JSON] = {
            "ok": True,
            "seq": receipt.seq,
            "state": state,
            "effects": effects,
        }
        for effect in receipt.effects:
            if isinstance(effect, Rejected) and effect.event == event.type:
                reply["ok"] = False
                reply["error"] = f"refused by the table: {effect.reason}"
                reply["cause"] = effect.cause
                break
        return reply

    def _status(self) -> dict[str, JSON]:
        snap = self._owner.public
        view: Mapping[str, Any] = snap.view
        rnd = view.get("round") or {}
        meters = {
            name: {
                k: _thaw(m.get(k))
                for k in ("display_cents", "reserve_cents", "overflow_cents", "hits")
                if k in m
            }
            for name, m in snap.meters.items()
        }
        return {
            "ok": True,
            "seq": snap.seq,
            "state": snap.state,
            "effects": [],
            "status": {
                "round_id": snap.round_id,
                "rounds_completed": snap.rounds_completed,
                "display": _thaw(view.get("display")),
                "lights": _thaw(view.get("lights")),
                "fault": _thaw(view.get("fault")),
                "pending_hits": _thaw(rnd.get("pending") if isinstance(rnd, Mapping) else None),
                "meters": _thaw(meters),
                "storage_fault": snap.storage_fault,
                "config_pending": list(getattr(snap, "config_pending", ())),
                "last_event": snap.last_event,
                "console_refusals": self.refusals,
                "head": self._head(),
                "unapproved_bench": bool(getattr(snap, "unapproved_bench", False)),
            },
        }

    def _head(self) -> str | None:
        """The journal's head as ``SEQ:HASH``, for a supervisor to sign (the paper witness;
        ``tablectl journal verify --expect-head`` checks it later); read-only, one row."""
        path = getattr(self._owner, "journal_path", None)
        if path is None:
            return None
        from controller.journal.audit import connect_read_only

        try:
            conn = connect_read_only(path)
        except Exception:
            return None
        try:
            row = conn.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        except Exception:
            return None
        finally:
            conn.close()
        return None if row is None else f"{row[0]}:{row[1]}"


def request_line(name: str, args: Sequence[str], supervisor: str | None, pin: str | None) -> bytes:
    """The JSON line a client sends (``tablectl console``)."""
    data: dict[str, JSON] = {"request": name, "args": list(args)}
    if supervisor is not None:
        data["supervisor"] = supervisor
    if pin is not None:
        data["pin"] = pin
    return json.dumps(data, separators=(",", ":")).encode("utf-8") + b"\n"


def send_request(path: str | Path, line: bytes, timeout_s: float) -> dict[str, Any]:
    """Send one request line to the console at ``path`` and return the parsed reply.
    OSError when the socket cannot be reached; ValueError for a reply that is not JSON."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(path))
        sock.sendall(line)
        buf = bytearray()
        while b"\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
    text = bytes(buf).split(b"\n", 1)[0].decode("utf-8", errors="replace")
    reply = json.loads(text)
    if not isinstance(reply, dict):
        raise ValueError(f"reply is not a JSON object: {text[:80]!r}")
    return reply
