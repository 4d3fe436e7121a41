"""Merkle trees over byte strings as RFC 9162 (Certificate Transparency 2.0) defines them.

The table service signs the root of a tree over the batches it appends together, so one
Ed25519 signature covers many batches; each batch carries the hashes that lead from it to the
root (its inclusion proof), so it can still be checked on its own (platform/log_signing.py).

Leaves and interior nodes are hashed with different prefixes (0x00, 0x01), so a node can never
pass for a leaf. A proof lists the sibling hashes from the leaf up.

    >>> root, proofs = tree([b"a", b"b", b"c"])
    >>> root_from_proof(leaf_hash(b"b"), 1, 3, proofs[1]) == root
    True
    >>> root_from_proof(leaf_hash(b"x"), 1, 3, proofs[1]) == root
    False
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

HASH_SIZE = 32
_LEAF = b"\x00"
_NODE = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """The hash of a leaf holding ``data``."""
    return hashlib.sha256(_LEAF + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an interior node over its two children's hashes."""
    return hashlib.sha256(_NODE + left + right).digest()


def tree(leaves: Sequence[bytes]) -> tuple[bytes, list[list[bytes]]]:
    """The root over ``leaves`` (at least one) and each leaf's inclusion proof, in order."""
    if not leaves:
        raise ValueError("a Merkle tree needs at least one leaf")
    return _subtree([leaf_hash(leaf) for leaf in leaves])


def _subtree(hashes: list[bytes]) -> tuple[bytes, list[list[bytes]]]:
    count = len(hashes)
    if count == 1:
        return hashes[0], [[]]
    # RFC 9162 2.1.1: split at the largest power of two below the size.
    split = 1 << ((count - 1).bit_length() - 1)
    left_root, left_proofs = _subtree(hashes[:split])
    right_root, right_proofs = _subtree(hashes[split:])
    proofs = [[*proof, right_root] for proof in left_proofs]
    proofs += [[*proof, left_root] for proof in right_proofs]
    return node_hash(left_root, right_root), proofs


def root_from_proof(leaf: bytes, index: int, size: int, proof: Sequence[bytes]) -> bytes | None:
    """The root that ``proof`` leads to from the leaf hash ``leaf`` at ``index`` of a tree of
    ``size`` leaves (RFC 9162 2.1.3.2); None when the proof cannot belong to such a tree."""
    if not 0 <= index < size:
        return None
    position, last = index, size - 1
    node = leaf
    for sibling in proof:
        if last == 0 or len(sibling) != HASH_SIZE:
            return None
        if position & 1 or position == last:
            node = node_hash(sibling, node)
            while not position & 1 and position:
                position >>= 1
                last >>= 1
        else:
            node = node_hash(node, sibling)
        position >>= 1
        last >>= 1
    return node if last == 0 else None
