"""Merkle trees as RFC 9162 defines them: every leaf's proof leads to the root, and nothing else
does (another leaf, place or sibling)."""

from __future__ import annotations

import hashlib

import pytest

from cardtable.platform.merkle import leaf_hash, node_hash, root_from_proof, tree


def _defined_root(leaves: list[bytes]) -> bytes:
    """MTH of RFC 9162 2.1.1, written from its definition."""
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    split = 1
    while split * 2 < len(leaves):
        split *= 2
    return hashlib.sha256(
        b"\x01" + _defined_root(leaves[:split]) + _defined_root(leaves[split:])
    ).digest()


def _leaves(count: int) -> list[bytes]:
    return [f"batch {index}".encode() for index in range(count)]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 100])
def test_the_root_is_rfc_9162s_and_every_leafs_proof_leads_to_it(size: int) -> None:
    leaves = _leaves(size)
    root, proofs = tree(leaves)
    assert root == _defined_root(leaves)
    assert len(proofs) == size
    for index, leaf in enumerate(leaves):
        assert len(proofs[index]) <= max(1, (size - 1).bit_length())
        assert root_from_proof(leaf_hash(leaf), index, size, proofs[index]) == root


@pytest.mark.parametrize("size", [2, 3, 5, 8, 13])
def test_a_proof_leads_nowhere_for_another_leaf_place_or_sibling(size: int) -> None:
    """(The leftmost leaves of trees of different sizes can share a path: the tree's size is
    bound by the signed message instead, tests/platform/test_tree_signatures.py.)"""
    leaves = _leaves(size)
    root, proofs = tree(leaves)
    for index, leaf in enumerate(leaves):
        proof = proofs[index]
        assert root_from_proof(leaf_hash(b"forged"), index, size, proof) != root
        for other in range(size):
            if other != index:
                assert root_from_proof(leaf_hash(leaf), other, size, proof) != root
        for at in range(len(proof)):
            mangled = list(proof)
            mangled[at] = bytes(32)
            assert root_from_proof(leaf_hash(leaf), index, size, mangled) != root
        assert root_from_proof(leaf_hash(leaf), index, size, proof[:-1]) != root
        assert root_from_proof(leaf_hash(leaf), index, size, [*proof, bytes(32)]) is None


def test_impossible_places_and_short_hashes_lead_nowhere() -> None:
    _root, proofs = tree(_leaves(4))
    leaf = leaf_hash(b"batch 1")
    assert root_from_proof(leaf, -1, 4, proofs[1]) is None
    assert root_from_proof(leaf, 4, 4, proofs[1]) is None
    assert root_from_proof(leaf, 1, 4, [sibling[:31] for sibling in proofs[1]]) is None
    with pytest.raises(ValueError):
        tree([])


def test_an_interior_node_cannot_pass_for_a_leaf() -> None:
    """The second-preimage guard: leaves and nodes are hashed under different prefixes, so the
    two-leaf tree over a and b differs from a one-leaf tree holding their two hashes."""
    a, b = b"a", b"b"
    two_leaves = tree([a, b])[0]
    assert two_leaves == node_hash(leaf_hash(a), leaf_hash(b))
    assert tree([leaf_hash(a) + leaf_hash(b)])[0] != two_leaves
