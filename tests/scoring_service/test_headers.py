"""The quick header parser gives exactly what nats-py's own parser gives, for any header block."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from nats.aio.client import Client

from cardtable.scoring_service.headers import parse_header_lines

# Pieces that exercise every rule: whitespace of every kind around and inside names and values,
# missing colons, empty names and values, bytes that are not ASCII or not UTF-8 at all.
PIECES = st.sampled_from(
    [
        b"Nats-Msg-Id", b"Cardtable-Schema", b"traceparent", b"a", b"", b" ", b"\t", b"\x0b",
        b"\x0c", b"\x1c", b"\x1f", b"\x85", b"\xa0", b"\xc3\xa9", b"\xff", b":", b"::", b"1",
        b"00-abc-01", b"Bad Name", b"\n", b"\r",
    ]
)  # fmt: skip
LINES = st.lists(PIECES, max_size=6).map(b"".join)
BLOCKS = st.lists(LINES, max_size=8).map(b"\r\n".join)


@settings(max_examples=10 * settings.default.max_examples)  # cheap examples: ten times more
@given(BLOCKS)
def test_same_headers_as_nats_py(raw: bytes) -> None:
    assert parse_header_lines(raw) == Client._parse_header_lines(raw)


def test_the_table_services_headers() -> None:
    raw = (
        b"Nats-Msg-Id: t1:c1\r\nNats-Expected-Last-Subject-Sequence: 41\r\n"
        b"Cardtable-Schema: 1\r\ntraceparent: 00-4bf92f3577b34da6-00f067aa0ba902b7-01\r\n\r\n"
    )
    assert parse_header_lines(raw) == {
        "Nats-Msg-Id": "t1:c1",
        "Nats-Expected-Last-Subject-Sequence": "41",
        "Cardtable-Schema": "1",
        "traceparent": "00-4bf92f3577b34da6-00f067aa0ba902b7-01",
    }
