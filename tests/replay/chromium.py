"""A headless chromium driven over the Chrome DevTools Protocol, for the replay viewer's tests.

The browser is Debian's ``chromium`` (``make browser`` installs it). The protocol runs over
``--remote-debugging-pipe``: the browser reads commands on its file descriptor 3 and writes
replies and events on 4, each message JSON ended by a NUL byte. That needs no driver binary
and no websocket library, only the standard library.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

#: Where the browser is looked for: $CHROMIUM, else Debian's command names.
BROWSER_NAMES = ("chromium", "chromium-browser")
COMMAND_TIMEOUT = 30.0

#: The keys a test presses, as the DevTools protocol names them (code and key code).
KEYS = {
    "ArrowRight": 39,
    "ArrowLeft": 37,
    "Home": 36,
    "End": 35,
    "PageDown": 34,
    "PageUp": 33,
}


def find_chromium() -> str | None:
    configured = os.environ.get("CHROMIUM")
    if configured:
        return shutil.which(configured)
    return next((path for name in BROWSER_NAMES if (path := shutil.which(name))), None)


def _above_four(descriptor: int) -> int:
    moved = fcntl.fcntl(descriptor, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(descriptor)
    return moved


class BrowserError(Exception):
    """The browser refused a command, or went quiet."""


class Chromium:
    """One headless browser; :meth:`open` a page in it, :meth:`close` it at the end."""

    def __init__(self, binary: str, profile: Path, log: Path) -> None:
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # bash gives the browser the pipes as descriptors 3 and 4. Its redirections run
        # left to right, so the browser's ends are first moved above 4, out of their way.
        to_browser_read = _above_four(to_browser_read)
        from_browser_write = _above_four(from_browser_write)
        script = f'exec "$@" 3<&{to_browser_read} 4>&{from_browser_write}'
        self._log = log.open("wb")
        flags = [
            "--headless", "--remote-debugging-pipe", f"--user-data-dir={profile}",
            "--no-sandbox",  # root in a container has no user namespaces to sandbox with
            "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
            "--mute-audio", "--force-device-scale-factor=1", "about:blank",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            ["bash", "-c", script, "bash", binary, *flags],
            pass_fds=(to_browser_read, from_browser_write),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # -- the protocol -----------------------------------------------------------------------
    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Run one command and return its result; events that arrive meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while True:
            reply = self._receive(deadline)
            if reply.get("id") != self._next_id:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise BrowserError(f"{method}: {reply['error']}")
            result: dict[str, Any] = reply.get("result", {})
            return result

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise BrowserError(f"no answer from the browser in {COMMAND_TIMEOUT:g} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed its end (see its log)")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def open(self, url: str, width: int = 1400, height: int = 980) -> Page:
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        page.send("Runtime.enable")
        page.send("Network.enable")
        page.send("Page.enable")
        page.send("Page.bringToFront")  # key events go to the focused page
        page.send(
            "Emulation.setDeviceMetricsOverride",
            width=width, height=height, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        page.send("Page.navigate", url=url)
        page.wait_for("document.body && document.body.dataset.ready === 'true'")
        return page

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):  # it may be gone already
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._log.close()


class Page:
    """One tab: evaluate JavaScript, press keys, take screenshots."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, self.session, **params)

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = COMMAND_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"Boolean({expression})"):
            if time.monotonic() > deadline:
                raise BrowserError(f"still not true after {timeout:g} s: {expression}")
            time.sleep(0.05)

    def press(self, key: str) -> None:
        """A real key press: the page sees keydown and keyup, as from a keyboard."""
        code = KEYS[key]
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind, key=key, code=key, windowsVirtualKeyCode=code,
                nativeVirtualKeyCode=code,
            )  # fmt: skip

    def screenshot(self, path: Path) -> Path:
        shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def events(self, method: str) -> list[dict[str, Any]]:
        """The events of ``method`` this page has sent so far."""
        return [
            event
            for event in self.browser.events
            if event.get("method") == method and event.get("sessionId") == self.session
        ]
