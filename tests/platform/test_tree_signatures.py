"""One signature over a tree of batches: each batch still checked on its own, the tree's root
verified once, and nothing but the tree's own leaves, at their own places, accepted."""

from __future__ import annotations

import pytest

from cardtable.platform.log_signing import (
    MAX_TREE_LEAVES,
    BatchSigner,
    BatchVerifier,
    LogIntegrityError,
)

SIGNER = BatchSigner.generate()


def _payloads(count: int, tag: str = "") -> list[bytes]:
    return [f"{tag}batch {index} of table {index % 7}".encode() for index in range(count)]


def _verifier() -> BatchVerifier:
    return BatchVerifier([SIGNER.public_key])


def _parts(header: str) -> list[str]:
    return header.split(" ")


def test_batches_signed_together_share_one_signature_and_one_verification() -> None:
    payloads = _payloads(5)
    headers = SIGNER.sign_many(payloads)
    assert len({_parts(header)[2] for header in headers}) == 1
    assert [_parts(header)[3] for header in headers] == [f"{i}/5" for i in range(5)]
    verifier = _verifier()
    for payload, header in zip(payloads, headers, strict=True):
        assert verifier.verify(payload, header) == SIGNER.key_id
    assert verifier.verifications == 1
    # Each batch checks on its own: a verifier that sees only the last one verifies it.
    alone = _verifier()
    assert alone.verify(payloads[-1], headers[-1]) == SIGNER.key_id
    assert alone.verifications == 1


def test_a_batch_alone_gets_the_plain_signature() -> None:
    [header] = SIGNER.sign_many([b"alone"])
    assert header == SIGNER.sign(b"alone")
    assert _parts(header)[0] == "ed25519"


def test_more_batches_than_a_tree_holds_get_a_signature_per_tree() -> None:
    payloads = _payloads(2 * MAX_TREE_LEAVES + 3)
    headers = SIGNER.sign_many(payloads)
    assert len({_parts(header)[2] for header in headers}) == 3
    assert _parts(headers[-1])[3] == "2/3"
    verifier = _verifier()
    assert all(verifier.verify(p, h) for p, h in zip(payloads, headers, strict=True))
    assert verifier.verifications == 3


def test_a_tree_signature_covers_only_its_own_leaves_at_their_own_places() -> None:
    payloads = _payloads(6)
    headers = SIGNER.sign_many(payloads)
    other_headers = SIGNER.sign_many(_payloads(6, tag="other "))
    verifier = _verifier()
    assert verifier.verify(payloads[0], headers[0])  # the root is now remembered
    refused = [
        (b"an altered batch", headers[1]),
        (payloads[1], headers[2]),  # another leaf's place and proof
        (payloads[1], other_headers[1]),  # another tree
        (payloads[1], headers[1].replace(" 1/6 ", " 2/6 ")),
        (payloads[1], headers[1].replace(" 1/6 ", " 1/7 ")),
        (payloads[1], headers[1].replace(" 1/6 ", " 1/5 ")),
        (payloads[1], headers[1].rsplit(" ", 1)[0] + " " + _parts(headers[2])[4]),
        (payloads[1], headers[1][:-8] + "AAAAAAA="),  # a mangled proof
    ]
    for payload, header in refused:
        with pytest.raises(LogIntegrityError, match="does not match"):
            verifier.verify(payload, header)


def test_a_remembered_root_does_not_excuse_a_forged_signature() -> None:
    payloads = _payloads(4)
    headers = SIGNER.sign_many(payloads)
    forged = BatchSigner.generate().sign_many(payloads)
    verifier = _verifier()
    verifier.verify(payloads[0], headers[0])
    parts = _parts(headers[1])
    parts[2] = _parts(forged[1])[2]  # the same root, another key's signature, our key id
    with pytest.raises(LogIntegrityError, match="does not match"):
        verifier.verify(payloads[1], " ".join(parts))
    with pytest.raises(LogIntegrityError, match="unknown key"):
        verifier.verify(payloads[1], forged[1])


def test_a_tree_signature_read_as_a_plain_one_matches_nothing() -> None:
    payloads = _payloads(3)
    header = SIGNER.sign_many(payloads)[0]
    _algorithm, key_id, signature, *_ = _parts(header)
    with pytest.raises(LogIntegrityError, match="does not match"):
        _verifier().verify(payloads[0], f"ed25519 {key_id} {signature}")


@pytest.mark.parametrize(
    "place", ["x/4", "0/1", "4/4", "-1/4", "0/100000", f"0/{MAX_TREE_LEAVES + 1}", "0-4"]
)
def test_impossible_places_are_refused(place: str) -> None:
    payloads = _payloads(4)
    header = SIGNER.sign_many(payloads)[0]
    parts = _parts(header)
    parts[3] = place
    with pytest.raises(LogIntegrityError):
        _verifier().verify(payloads[0], " ".join(parts))


def test_a_tree_header_with_parts_missing_is_malformed() -> None:
    header = SIGNER.sign_many(_payloads(2))[0]
    with pytest.raises(LogIntegrityError, match="malformed"):
        _verifier().verify(b"batch 0 of table 0", header.rsplit(" ", 1)[0])
