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
        newest = self._buckets[0]
        for i in range(0, len(pairs), 2):
            root, value = pairs[i], pairs[i + 1]
            if value:
                newest[root] = value
            else:
                completed.append(root)

    def ack(self, pairs: list[int], completed: list[int]) -> None:
        """Apply (root, value) acks; append roots whose tree just completed."""
        buckets = self._buckets
        newest = buckets[0]
        for i in range(0, len(pairs), 2):
            root = pairs[i]
            value = newest.get(root)
            bucket = newest
            if value is None:
                for bucket in buckets:
                    value = bucket.get(root)
                    if value is not None:
                        break
                else:
                    continue  # already failed or expired
            value ^= pairs[i + 1]
            if value:
                bucket[root] = value
            else:
                del bucket[root]
                completed.append(root)

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
