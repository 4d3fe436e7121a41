"""Reading message headers without nats-py's per-character scan, for long reads of the log.

nats-py (2.16) parses each message's header block in Python and checks every character of
every header name for whitespace with a generator: for the table service's four headers that
was about half of a rebuild's time. :func:`parse_header_lines` gives the same dictionary for
every input, checking names with ``str.split`` instead. :func:`quick_header_parsing` puts it on
a connection while a long read runs and takes it off afterwards, so nothing else changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from nats.js import JetStreamContext

CRLF = b"\r\n"
#: What ``bytes.strip()`` strips (``str.strip()`` would also strip \x1c-\x1f).
BYTES_WHITESPACE = " \t\n\r\x0b\x0c"


def _has_whitespace(key: str) -> bool:
    """Whether ``key`` holds a character ``str.isspace`` calls whitespace."""
    return bool(key) and key.split() != [key]


def parse_header_lines(raw: bytes) -> dict[str, str]:
    """``Name: Value`` lines as a dict, exactly as nats-py's ``_parse_header_lines`` reads them.

    >>> parse_header_lines(b"Cardtable-Schema: 1\\r\\nBad Name: x\\r\\nNats-Msg-Id:a:b\\r\\n")
    {'Cardtable-Schema': '1', 'Nats-Msg-Id': 'a:b'}
    """
    if raw.isascii():  # the usual case: decode once, the same result line by line
        parsed: dict[str, str] = {}
        for text in raw.decode("ascii").split("\r\n"):
            name, separator, value = text.partition(":")
            key = name.strip(BYTES_WHITESPACE)
            if separator and not _has_whitespace(key):
                parsed[key] = value.strip(BYTES_WHITESPACE)
        return parsed
    return _parse_any_header_lines(raw)


def _parse_any_header_lines(raw: bytes) -> dict[str, str]:
    """Header lines that may hold other bytes than ASCII, one line at a time."""
    parsed: dict[str, str] = {}
    for line in raw.split(CRLF):
        name, separator, value = line.partition(b":")
        if not separator:
            continue
        try:
            key = name.strip().decode("ascii")
        except UnicodeDecodeError:
            continue  # nats-py skips a name that is not ASCII
        if _has_whitespace(key):
            continue  # whitespace inside a name: nats-py drops the header
        parsed[key] = value.strip().decode("utf-8", "replace")
    return parsed


@contextlib.contextmanager
def quick_header_parsing(jetstream: JetStreamContext) -> Iterator[None]:
    """Parse headers with :func:`parse_header_lines` on ``jetstream``'s connection meanwhile.

    It replaces a private static method of nats-py's client on this one instance; if a later
    nats-py has no such method, nothing is replaced and reading is only slower.
    """
    client = getattr(jetstream, "_nc", None)
    if client is None or not hasattr(type(client), "_parse_header_lines"):
        yield
        return
    client._parse_header_lines = parse_header_lines
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError):
            del client._parse_header_lines
