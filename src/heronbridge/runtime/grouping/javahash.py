"""Java ``hashCode()`` of multilang JSON values, and Storm 2.8.8 fields/partial-key routing.

A Python component's tuple reaches Storm as ``json.dumps`` text, which Storm's multilang
``JsonSerializer`` parses with its shaded json-smart 2.6.0 in permissive mode:

* integers: ``Integer`` if they fit in 32 bits, else ``Long``, else ``BigInteger``;
* float literals: ``Double``, except ``BigDecimal`` when the literal is longer than
  18 characters (``0.30000000000000004``); ``NaN`` becomes ``Float.NaN`` and
  ``Infinity``/``-Infinity`` become *strings*;
* objects: ``JSONObject`` (a ``HashMap``); arrays: ``JSONArray`` (an ``ArrayList``).

Routing follows ``GrouperFactory.FieldsGrouper`` (``TupleUtils.chooseTaskIndex``) and
``PartialKeyGrouping`` with its default assignment creator and target selector.
Test vectors: ``tools/java_oracle``.
"""

from math import copysign
from struct import Struct

__all__ = ["PartialKeyChooser", "deep_hash_code", "fields_index", "java_hash", "java_string"]

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF
_INT_MIN = -(1 << 31)
_INT_MAX = (1 << 31) - 1
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_FLOAT_NAN_HASH = 0x7FC00000  # Float.floatToIntBits(Float.NaN)
_TRUE_HASH = 1231
_FALSE_HASH = 1237
_INF = float("inf")
# json-smart (USE_HI_PRECISION_FLOAT) keeps a float literal as Double only up to this length.
_MAX_DOUBLE_LITERAL = 18
_DOUBLE = Struct("<d")
_QWORD = Struct("<Q")


def _s32(h):
    """The signed 32-bit int with the low 32 bits of ``h``."""
    return ((h & _M32) ^ 0x80000000) - 0x80000000


def _not_json(value):
    return TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# ---------------------------------------------------------------------------- strings

_STR_MEMO: dict[str, int] = {}
_STR_MEMO_MAX = 1 << 16
_STR_MEMO_MAX_LEN = 256
_memo_get = _STR_MEMO.get


def _utf16_units(s):
    """UTF-16 code units of ``s``, as Java holds the parsed string."""
    data = s.encode("utf-16-be", "surrogatepass")
    return Struct(f">{len(data) >> 1}H").unpack(data)


def _str_hash_raw(s):
    h = 0
    for c in s.encode("latin-1") if s.isascii() else _utf16_units(s):
        h = (31 * h + c) & _M32
    return (h ^ 0x80000000) - 0x80000000


def _str_hash_miss(s):
    h = _str_hash_raw(s)
    if len(s) <= _STR_MEMO_MAX_LEN:
        if len(_STR_MEMO) >= _STR_MEMO_MAX:
            _STR_MEMO.clear()
        _STR_MEMO[s] = h
    return h


def _str_hash(s):
    h = _memo_get(s)
    return _str_hash_miss(s) if h is None else h


# ---------------------------------------------------------------------------- numbers


def _bigint_hash(v):
    """``BigInteger.hashCode``: over the big-endian 32-bit words of |v|, times the sign."""
    mag = -v if v < 0 else v
    nwords = (mag.bit_length() + 31) >> 5
    h = 0
    for word in Struct(f">{nwords}I").unpack(mag.to_bytes(4 * nwords, "big")):
        h = (31 * h + word) & _M32
    return _s32(-h if v < 0 else h)


def _int_hash(v):
    if _INT_MIN <= v <= _INT_MAX:
        return v
    if _LONG_MIN <= v <= _LONG_MAX:
        u = v & _M64
        return _s32(u ^ (u >> 32))
    return _bigint_hash(v)


def _parse_decimal(literal):
    """(unscaled, scale) of ``new BigDecimal(literal)``."""
    mant, _, exp = literal.partition("e")
    whole, _, frac = mant.partition(".")
    return int(whole + frac), len(frac) - (int(exp) if exp else 0)


def _float_hash(v):
    literal = repr(v)  # what json.dumps writes for finite floats
    last = literal[-1]
    if last == "n":
        return _FLOAT_NAN_HASH
    if last == "f":
        return _str_hash("Infinity" if v > 0 else "-Infinity")
    if len(literal) > _MAX_DOUBLE_LITERAL:
        unscaled, scale = _parse_decimal(literal)
        return _s32(31 * _bigint_hash(unscaled) + scale)
    u = _QWORD.unpack(_DOUBLE.pack(v))[0]
    return _s32(u ^ (u >> 32))


# ---------------------------------------------------------------------------- containers


def _json_key(k):
    """The object key ``json.dumps`` writes for a dict key."""
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        literal = float.__repr__(k)
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(literal, literal)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    msg = f"keys must be str, int, float, bool or None, not {type(k).__name__}"
    raise TypeError(msg)


def _json_items(d):
    """The entries json-smart's HashMap ends up with: a repeated key keeps the last value."""
    for k in d:
        if type(k) is not str:
            return {_json_key(k): v for k, v in d.items()}
    return d


def _list_hash(seq):
    h = 1
    for e in seq:
        h = (31 * h + java_hash(e)) & _M32
    return _s32(h)


def _map_hash(d):
    h = 0
    for k, v in _json_items(d).items():
        h += _str_hash(k) ^ java_hash(v)
    return _s32(h)


def _other_hash(value):
    # json.dumps' own type tests, so subclasses hash as what they serialize to.
    if value is None:
        return 0
    if value is True:
        return _TRUE_HASH
    if value is False:
        return _FALSE_HASH
    if isinstance(value, str):
        return _str_hash(str.__str__(value))
    if isinstance(value, int):
        return _int_hash(int.__int__(value))
    if isinstance(value, float):
        return _float_hash(float.__float__(value))
    if isinstance(value, (list, tuple)):
        return _list_hash(value)
    if isinstance(value, dict):
        return _map_hash(value)
    raise _not_json(value)


def java_hash(value):
    """Signed 32-bit ``hashCode()`` of the Java object json-smart makes of ``json.dumps(value)``.

    ``None`` hashes to 0, as ``Arrays.deepHashCode`` and ``List.hashCode`` treat null.
    """
    t = type(value)
    if t is str:
        h = _memo_get(value)
        return _str_hash_miss(value) if h is None else h
    if t is int:
        if -2147483648 <= value <= 2147483647:
            return value
        return _int_hash(value)
    if t is float:
        return _float_hash(value)
    return _other_hash(value)


def deep_hash_code(values):
    """``Arrays.deepHashCode`` of the selected values."""
    h = 1
    for v in values:
        h = (31 * h + java_hash(v)) & _M32
    return (h ^ 0x80000000) - 0x80000000


def fields_index(values, n):
    """Index, among ``n`` ascending target tasks, that fields grouping picks for these values."""
    if len(values) == 1:
        h = (31 + java_hash(values[0])) & _M32
    else:
        h = 1
        for v in values:
            h = (31 * h + java_hash(v)) & _M32
    return ((h ^ 0x80000000) - 0x80000000) % n  # Python's % is Math.floorMod for n > 0


# ---------------------------------------------------------------------------- toString()

_MIN_NORMAL = 2.2250738585072014e-308


def _double_digits(v):
    """Significant digits and decimal exponent of Java 19+ ``Double.toString(v)``, ``v > 0``.

    repr gives the shortest decimal that rounds to ``v`` (the closest such), as Java does,
    but when one digit suffices Java takes the closest decimal of one *or two* digits; only
    subnormals are coarse enough for that to differ.
    """
    mant, _, exp = repr(v).partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    stripped = digits.rstrip("0")
    e10 = (int(exp) if exp else 0) - len(frac) + len(digits) - 1
    digits = stripped
    if len(digits) == 1 and v < _MIN_NORMAL:
        from fractions import Fraction

        exact = Fraction(v)
        best = None
        for k in (e10 - 2, e10 - 1):
            for c in range(10, 100):
                if float(f"{c}e{k}") == v:
                    dist = abs(c * Fraction(10) ** k - exact)
                    if best is None or dist < best[0] or (dist == best[0] and c % 2 == 0):
                        best = (dist, c, k)
        if best is not None:
            _, c, k = best
            digits, e10 = str(c).rstrip("0"), k + 1
    return digits, e10


def _double_string(v):
    """``Double.toString`` (Java 19+ specification) of a finite double."""
    if v == 0:
        return "-0.0" if copysign(1.0, v) < 0 else "0.0"
    sign = "-" if v < 0 else ""
    digits, e10 = _double_digits(abs(v))
    if -3 <= e10 < 7:
        if e10 >= 0:
            whole = digits[: e10 + 1].ljust(e10 + 1, "0")
            frac = digits[e10 + 1 :] or "0"
        else:
            whole, frac = "0", "0" * (-e10 - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e10}"


def _bigdecimal_string(literal):
    """``new BigDecimal(literal).toString()``."""
    unscaled, scale = _parse_decimal(literal)
    sign = "-" if unscaled < 0 else ""
    u = str(abs(unscaled))
    adjusted = -scale + len(u) - 1
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            return sign + u
        if len(u) > scale:
            return f"{sign}{u[:-scale]}.{u[-scale:]}"
        return f"{sign}0.{'0' * (scale - len(u))}{u}"
    body = u[0] + ("." + u[1:] if len(u) > 1 else "")
    if adjusted == 0:
        return sign + body
    return f"{sign}{body}E{'+' if adjusted > 0 else ''}{adjusted}"


def _float_string(v):
    """``toString()`` of what json-smart parses from ``json.dumps(v)``."""
    literal = repr(v)
    if literal == "nan":
        return "NaN"  # Float.NaN
    if literal[-1] == "f":
        return "Infinity" if v > 0 else "-Infinity"  # parsed as a String
    if len(literal) > _MAX_DOUBLE_LITERAL:
        return _bigdecimal_string(literal)
    return _double_string(v)


def _web_escape_table():
    # json-smart's JSONStyle.NO_COMPRESS escaper (Escape4Web), per UTF-16 unit.
    table = {
        ord('"'): '\\"',
        ord("\\"): "\\\\",
        ord("\b"): "\\b",
        ord("\f"): "\\f",
        ord("\n"): "\\n",
        ord("\r"): "\\r",
        ord("\t"): "\\t",
        ord("/"): "\\/",
    }
    for lo, hi in ((0x00, 0x1F), (0x7F, 0x9F), (0x2000, 0x20FF)):
        for c in range(lo, hi + 1):
            table.setdefault(c, f"\\u{c:04X}")
    return table


_WEB_ESCAPE = _web_escape_table()


def _quote(s):
    return '"' + s.translate(_WEB_ESCAPE) + '"'


def _hashmap_order(keys):
    """Iteration order of a default ``HashMap`` after putting the distinct ``keys`` in order.

    Treeified bins are not modelled: they need 9 keys in one bin of a 64+ slot table, and
    there Java iterates the tree root first.
    """
    spread = [h ^ ((h & _M32) >> 16) for h in map(_str_hash, keys)]
    cap, threshold = 16, 12
    bins = {}

    def resize(size):
        nonlocal cap, threshold, bins
        cap, threshold = cap * 2, threshold * 2
        bins = {}
        for g in spread[:size]:
            bins[g & (cap - 1)] = bins.get(g & (cap - 1), 0) + 1

    for size, h in enumerate(spread, 1):
        idx = h & (cap - 1)
        bins[idx] = bins.get(idx, 0) + 1
        # HashMap.putVal: a 9th node in a bin resizes a small table instead of treeifying.
        if bins[idx] >= 9 and cap < 64:
            resize(size)
        if size > threshold:
            resize(size)
    return sorted(range(len(keys)), key=lambda i: (spread[i] & (cap - 1), i))


def _json_smart_string(value):
    """json-smart's ``toJSONString`` of a parsed value nested in a container."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _quote(str.__str__(value))
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        v = float.__float__(value)
        return _quote(_float_string(v)) if v in (_INF, -_INF) else _float_string(v)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(map(_json_smart_string, value)) + "]"
    if isinstance(value, dict):
        items = list(_json_items(value).items())
        order = _hashmap_order([k for k, _ in items])
        return (
            "{"
            + ",".join(_quote(items[i][0]) + ":" + _json_smart_string(items[i][1]) for i in order)
            + "}"
        )
    raise _not_json(value)


def java_string(value):
    """``toString()`` of the Java object json-smart makes of ``json.dumps(value)``.

    Doubles print per the Java 19+ ``Double.toString`` specification (Java 17 prints a few
    doubles, such as 1e23, with a different digit string). Storm would throw a
    NullPointerException for null; this raises TypeError.
    """
    if isinstance(value, str):
        return str.__str__(value)
    if value is None:
        msg = "null has no toString(): Storm's PartialKeyGrouping would throw"
        raise TypeError(msg)
    if isinstance(value, float):
        return _float_string(float.__float__(value))
    return _json_smart_string(value)


def _java_utf8(s):
    """``String.getBytes()`` under a UTF-8 default charset: lone surrogates become '?'."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        joined = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return joined.encode("utf-8", "replace")


# ---------------------------------------------------------------------------- partial key grouping

_LCG_MULT = 0x5DEECE66D
_LCG_ADD = 0xB
_M48 = (1 << 48) - 1


class _JavaRandom:
    """``java.util.Random``: its 48-bit LCG and ``nextInt(bound)``."""

    __slots__ = ("_seed",)

    def __init__(self, seed):
        self._seed = (seed ^ _LCG_MULT) & _M48

    def _next31(self):
        self._seed = (self._seed * _LCG_MULT + _LCG_ADD) & _M48
        return self._seed >> 17

    def next_int(self, bound):
        r = self._next31()
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        # Java redraws while u - r + m overflows int (the tail that would bias the modulo).
        while u - r + m > _INT_MAX:
            u = self._next31()
            r = u % bound
        return r


def _bytes_hash(data):
    """``Arrays.hashCode(byte[])``; Java bytes are signed."""
    h = 1
    for b in data:
        h = (31 * h + (b - 256 if b > 127 else b)) & _M32
    return (h ^ 0x80000000) - 0x80000000


class PartialKeyChooser:
    """One grouper instance of Storm's default ``PartialKeyGrouping`` over ``num_tasks`` targets.

    With ``fields`` true (grouping declared with fields), ``choose`` takes the selected field
    values; otherwise it takes the tuple's first value, whose ``toString()`` bytes are the key.
    Indices are into the ascending target task list. Storm builds one grouper per emitting
    executor, so use one chooser per emitter (per stream and target component).
    """

    __slots__ = ("_counts", "_fields", "_n", "_pairs")

    _PAIRS_MAX = 1 << 14

    def __init__(self, num_tasks, fields=True):
        if num_tasks < 1:
            msg = "num_tasks must be at least 1"
            raise ValueError(msg)
        self._n = num_tasks
        self._fields = fields
        self._counts = [0] * num_tasks
        self._pairs = {}

    @property
    def counts(self):
        """Tuples sent to each target index so far."""
        return list(self._counts)

    def candidates(self, key):
        """The two target indices ``RandomTwoTaskAssignmentCreator`` assigns to ``key``."""
        if self._fields:
            memo_key = tuple(map(java_hash, key))
        else:
            memo_key = java_string(key)
        pair = self._pairs.get(memo_key)
        if pair is None:
            if self._fields:
                # One big-endian int per field: o.hashCode(), or deepHashCode for a List,
                # which equals List.hashCode for JSON values; 0 for null.
                data = Struct(f">{len(memo_key)}i").pack(*memo_key)
            else:
                data = _java_utf8(memo_key)
            rnd = _JavaRandom(_bytes_hash(data))
            n = self._n
            first = rnd.next_int(n)
            second = rnd.next_int(n)
            if second == first:
                second = (second + 1) % n
            pair = (first, second)
            if len(self._pairs) >= self._PAIRS_MAX:
                self._pairs.clear()
            self._pairs[memo_key] = pair
        return pair

    def choose(self, key):
        """Send to the candidate with fewer tuples so far (the first on a tie), and count it."""
        first, second = self.candidates(key)
        counts = self._counts
        chosen = second if counts[second] < counts[first] else first
        counts[chosen] += 1
        return chosen
