"""At-least-once tracking for a stream manager's local spouts: XOR per root.

A root's value starts as the XOR of the edges its spout emitted; every ack XORs in
`edge ^ (edges of the tuples emitted anchored to it)`. Each edge enters twice, so the
value is zero exactly when every tuple of the tree has been acked, whatever the order
the acks arrive in.

Roots live in rotating buckets: a root not completed after the message timeout falls
out of the oldest bucket and is reported as expired, the way Heron's RotatingMap and
Storm's pending map age tuples out.
"""

from __future__ import annotations

from collections import deque


class XorTracker:
    def __init__(self, buckets: int = 3) -> None:
        self._buckets: deque[dict[int, int]] = deque({} for _ in range(buckets))

    def __len__(self) -> int:
        return sum(len(b) for b in self._buckets)

    def init(self, pairs: list[int], completed: list[int]) -> None:
        """Register (root, xor) pairs; a zero xor (no subscriber) completes at once."""
        roots, xors = pairs[0::2], pairs[1::2]
        self._buckets[0].update(zip(roots, xors, strict=True))
        if 0 in xors:
            for root, value in zip(roots, xors, strict=True):
                if not value:
                    del self._buckets[0][root]
                    completed.append(root)

    def ack(self, pairs: list[int], completed: list[int]) -> None:
        """Apply (root, value) acks; append roots whose tree just completed."""
        newest = self._buckets[0]
        get = newest.get
        for root, value in zip(pairs[0::2], pairs[1::2], strict=True):
            old = get(root)
            bucket = newest
            if old is None:  # an older bucket's, or gone (failed or expired)
                holder = self._holder(root)
                if holder is None:
                    continue
                bucket, old = holder, holder[root]
            left = old ^ value
            if left:
                bucket[root] = left
            else:
                del bucket[root]
                completed.append(root)

    def _holder(self, root: int) -> dict[int, int] | None:
        return next((b for b in self._buckets if root in b), None)

    def fail(self, roots: list[int], failed: list[int]) -> None:
        for root in roots:
            for bucket in self._buckets:
                if bucket.pop(root, None) is not None:
                    failed.append(root)
                    break

    def rotate(self) -> list[int]:
        """Age every root by one bucket; return the roots that timed out."""
        expired = self._buckets.pop()
        self._buckets.appendleft({})
        return list(expired)

    def forget_task(self, task: int, shift: int) -> None:
        """Drop the roots of a spout task that went away (nobody is left to tell)."""
        for bucket in self._buckets:
            for root in [r for r in bucket if r >> shift == task]:
                del bucket[root]
