"""Hash-consed terms over 64-bit words: the values the prover compares.

Every term is made once per proof: two terms of one proof are structurally equal exactly when
they are the same object, so comparing a program's output word with the description's is ``is``.
The hash-cons table lives in a :class:`Scope`, one per proof (``with scope(): ...``, opened by
gen/prove/__init__.py:prove_text), made current through a context variable: proofs in two
threads (verify's ThreadPoolExecutor) or one after the other never share a table, and there is
no module-level mutable state.  The per-term caches (the byte views below,
gen/prove/expect.py's description programs) are owned by the scope too (``cache(name)``).
Each term records its scope; a term is made only from terms of the current scope (checked when
a term is first made: a table hit has the very arguments of a checked term), so terms of two
proofs are never mixed, and making a term outside a scope is an error.
Normal forms, chosen so that the generator's emitted programs and the description meet:

* ``lin``: sum of coefficient * term + constant (mod 2^64): add, sub, negation, shift left by a
  constant and multiplication by a constant all land here; operands sorted by term id, so the
  order of commutative adds does not matter.
* ``xor``: a set of terms (pairs cancel) and a constant.
* ``rotl``: rotate left by 1..63; ``(x << r) | (x >> (64 - r))`` (with ``|``, ``^`` or ``+``)
  and rotate right become ``rotl``, nested rotates fold.
* ``shr``, ``and`` (constant mask), ``or``: what is left over (pointer arithmetic, counters);
  ``ge``, ``lt``: loop and block tests (1 or 0).
* ``bytes``: a word rebuilt from 8 (word, byte) sources (the byte views below, what byte and
  dword shuffles read: ``pshufd``, ``pslldq``, ``_mm_shuffle_epi8``, a big-endian load) that is
  neither a constant nor one word rotated by a multiple of 8 (:func:`word` folds those back).

Terms overload Python's operators, so the description's own interpreter (``gen.dsl.interpret``)
runs on them unchanged and yields the description's term of every output word.
"""
from __future__ import annotations

import contextvars
from operator import attrgetter
from contextlib import contextmanager

MASK = (1 << 64) - 1
_ID = attrgetter("id")


def _pair_id(p: tuple) -> int:
    return p[0].id


class ScopeError(RuntimeError):
    """A term made outside a proof's scope, or from the terms of another scope (a prover bug)."""


class Scope:
    """One proof's terms: the hash-cons table ((op, args) -> term; a term's id is its index in it,
    so ids are dense and ordered by creation) and the caches keyed by its terms."""
    __slots__ = ("table", "caches", "memo", "fused")

    def __init__(self):
        self.table: dict = {}
        self.caches: dict = {}
        # results of add / mul / xor by their operands: the normal forms are pure functions of
        # hash-consed operands, so a repeated operation (the prover's runs repeat most of them)
        # returns the term it made before instead of re-normalising (same terms, same ids)
        self.memo: dict = {}
        # the sums (lin terms) that hold a shr or and term (see _plain)
        self.fused: set = set()

    def cache(self, name: str) -> dict:
        """The scope's cache called name (made empty on first use)."""
        c = self.caches.get(name)
        if c is None:
            c = self.caches[name] = {}
        return c


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("threefish_gen.prove.scope", default=None)


@contextmanager
def scope():
    """Make a fresh Scope current for the block (per thread / task: a context variable); on exit
    the previous one (if any) is current again and the fresh one's table and caches are dropped."""
    s = Scope()
    token = _CURRENT.set(s)
    try:
        yield s
    finally:
        _CURRENT.reset(token)
        s.table.clear()         # its terms are garbage now (no cycle through the table to collect)
        s.caches.clear()
        s.memo.clear()
        s.fused.clear()


def current() -> Scope:
    """The current proof's scope (ScopeError outside one)."""
    s = _CURRENT.get()
    if s is None:
        raise ScopeError("a term made outside a proof scope (gen/prove/terms.scope())")
    return s


def cache(name: str) -> dict:
    """The current scope's cache called name."""
    return current().cache(name)


def _foreign(s: Scope, args: tuple) -> bool:
    """Whether args hold a term of another scope (args: terms, ints, names, tuples of terms and
    of (term, coefficient) pairs)."""
    for a in args:
        ta = type(a)
        if ta is Term:
            if a.scope is not s:
                return True
        elif ta is tuple:
            for b in a:             # a lin's pairs or a xor's terms: unrolled (hot: every new term)
                tb = type(b)
                if tb is Term:
                    if b.scope is not s:
                        return True
                elif tb is tuple:
                    for c in b:     # a (term, coefficient) pair
                        tc = type(c)
                        if (tc is Term and c.scope is not s) or (tc is tuple and _foreign(s, c)):
                            return True
    return False


class Term:
    __slots__ = ("op", "args", "id", "scope", "__weakref__")

    def __new__(cls, op: str, args: tuple):
        s = _CURRENT.get()
        if s is None:
            raise ScopeError(f"a term ({op}) made outside a proof scope (gen/prove/terms.scope())")
        key = (op, args)
        t = s.table.get(key)
        if t is None:
            if _foreign(s, args):
                raise ScopeError(f"a term ({op}) made from the terms of another proof's scope")
            t = object.__new__(cls)
            t.op, t.args, t.id, t.scope = op, args, len(s.table), s
            s.table[key] = t
        return t

    # Python operators (dsl.interpret runs on these)
    def __add__(self, o): return add(self, lift(o))
    __radd__ = __add__
    def __sub__(self, o): return sub(self, lift(o))
    def __rsub__(self, o): return sub(lift(o), self)
    def __xor__(self, o): return xor(self, lift(o))
    __rxor__ = __xor__
    def __or__(self, o): return or_(self, lift(o))
    __ror__ = __or__
    def __and__(self, o):
        return and_(self, o) if isinstance(o, int) else _opaque("and2", self, o)
    __rand__ = __and__
    def __lshift__(self, n: int): return shl(self, n)
    def __rshift__(self, n: int): return shr(self, n)

    def __repr__(self) -> str:
        return show(self)


def const(v: int) -> Term:
    return Term("const", (v & MASK,))


def var(name: str) -> Term:
    return Term("var", (name,))


def lift(x) -> Term:
    return x if isinstance(x, Term) else const(int(x))


def value(t: Term) -> int | None:
    """The constant a term stands for, or None."""
    return t.args[0] if t.op == "const" else None


def _opaque(op, *args) -> Term:
    return Term(op, tuple(args))


# --------------------------------------------------------------------------- linear sums

def _lin_parts(t: Term) -> tuple[dict, int]:
    if t.op == "lin":
        return dict(t.args[0]), t.args[1]
    if t.op == "const":
        return {}, t.args[0]
    return {t: 1}, 0


def _pairs(t: Term) -> tuple[tuple, int]:
    """A term as a linear sum: its (term, coefficient) pairs, sorted by term id with nonzero
    coefficients (a lin's own), and its constant."""
    if t.op == "lin":
        return t.args
    if t.op == "const":
        return (), t.args[0]
    return ((t, 1),), 0


_FUSED = ("shr", "and")     # the terms _fuse_rotates works on


def _plain(s: Scope, t: Term) -> bool:
    """Whether the sum of t holds no shr or and term (a lin that does is in the scope's ``fused``
    set): a sum of plain terms needs no _fuse_rotates, which only rewrites shr and and terms."""
    op = t.op
    return t not in s.fused if op == "lin" else op not in _FUSED


def _lin(coefs: dict, c: int) -> Term:
    coefs = {t: k & MASK for t, k in coefs.items() if k & MASK}
    _fuse_rotates(coefs)
    pairs = sorted(coefs.items(), key=_pair_id)
    return _lin_sorted(pairs, c, any(u.op in _FUSED for u, _ in pairs))


def _lin_sorted(pairs, c: int, fused: bool = False) -> Term:
    """The sum of pairs already sorted by term id, with nonzero coefficients (mod 2^64), whose
    rotate fusions are done (_lin: ``fused`` where a shr or and term is among them; add and mul
    merge sums of plain terms, which have none): a constant, a single term, or the lin."""
    c &= MASK
    if not pairs:
        return const(c)
    if c == 0 and len(pairs) == 1 and pairs[0][1] == 1:
        return pairs[0][0]
    t = _made("lin", (tuple(pairs), c))
    if fused:
        t.scope.fused.add(t)
    return t


def _fuse_rotates(coefs: dict) -> None:
    """x * 2^r + (x >> (64 - r))  ->  rotl(x, r); and(x, m) + and(x, ~m) -> x."""
    ops = {t.op for t in coefs}
    if "shr" not in ops and "and" not in ops:
        return
    for t in [t for t in coefs if t.op == "shr"]:
        x, s = t.args
        if coefs.get(t) == 1 and coefs.get(x) == (1 << (64 - s)) & MASK:
            del coefs[t], coefs[x]
            r = rotl(x, 64 - s)
            coefs[r] = (coefs.get(r, 0) + 1) & MASK
    for t in [t for t in coefs if t.op == "shr"]:   # (x >> s) * 2^s*k -> (x & -2^s) * k
        x, s = t.args
        k = coefs.get(t)
        if k is not None and k % (1 << s) == 0:
            del coefs[t]
            a = and_(x, (MASK << s) & MASK)
            coefs[a] = (coefs.get(a, 0) + (k >> s)) & MASK
    for t in [t for t in coefs if t.op == "and"]:
        if t not in coefs:
            continue
        x, m = t.args
        other = Term("and", (x, ~m & MASK))
        if coefs.get(t) == 1 and coefs.get(other) == 1:
            del coefs[t], coefs[other]
            coefs[x] = (coefs.get(x, 0) + 1) & MASK


def _memo(op: str, a, b, make) -> Term:
    """``make(a, b)``, once per scope for these operands (the current Scope's memo: a foreign
    operand is never a key there).  The operands' scope is checked here, once, before ``make``:
    the sums and xors it makes (:func:`_made`) hold only the operands, their parts (checked when
    they were made) and terms made since in this scope, so they need not be checked part by part
    (Term's check walks every pair: most of a long proof's time went there)."""
    s = _CURRENT.get() or current()     # current(): the ScopeError outside a scope
    memo = s.memo
    key = (op, a, b)
    t = memo.get(key)
    if t is None:
        if a.scope is not s or (type(b) is Term and b.scope is not s):
            raise ScopeError(f"a term ({op}) made from the terms of another proof's scope")
        t = memo[key] = make(a, b)
    return t


def _made(op: str, args: tuple) -> Term:
    """Term(op, args) for the sums and xors of add/mul/xor, whose operands _memo checked.  One
    table look-up (setdefault with a fresh object): the key of a long sum hashes all its pairs."""
    s = _CURRENT.get()
    table = s.table
    new = object.__new__(Term)
    t = table.setdefault((op, args), new)
    if t is new:
        t.op, t.args, t.id, t.scope = op, args, len(table) - 1, s
    return t


def add(a: Term, b: Term) -> Term:
    return _memo("+", a, b, _add)


def _add(a: Term, b: Term) -> Term:
    s = a.scope
    if _plain(s, a) and _plain(s, b):
        pa, ka = _pairs(a)
        pb, kb = _pairs(b)
        if len(pa) < len(pb):
            pa, pb = pb, pa
        return _lin_sorted(_merge(pa, pb), ka + kb)
    ca, ka = _lin_parts(a)
    cb, kb = _lin_parts(b)
    for t, k in cb.items():
        ca[t] = ca.get(t, 0) + k
    return _lin(ca, ka + kb)


def _merge(pa: tuple, pb: tuple) -> list:
    """The pairs of the sum of two sums' pairs (each sorted by term id, coefficients nonzero mod
    2^64), sorted alike: pb's pairs placed into a copy of pa by binary search.  In a Threefish
    round a word's sum grows by one addend (tens of pairs): a copy, not a sort of the whole."""
    out = list(pa)
    i = 0
    for t, k in pb:                 # pb ascends: each search starts where the last one ended
        tid, hi = t.id, len(out)
        while i < hi:               # the first pair of out whose term id is >= tid (bisect_left
            mid = (i + hi) // 2     # on ids; its key= needs Python 3.10, the package runs on 3.9)
            if out[mid][0].id < tid:
                i = mid + 1
            else:
                hi = mid
        if i < len(out) and out[i][0] is t:
            k = (out[i][1] + k) & MASK
            if k:
                out[i] = (t, k)
            else:
                del out[i]
        else:
            out.insert(i, (t, k))
    return out


def mul(a: Term, k: int) -> Term:
    return _memo("*", a, k, _mul)


def _mul(a: Term, k: int) -> Term:
    if _plain(a.scope, a):       # the same terms: still sorted, only the zero products drop out
        pa, c = _pairs(a)
        return _lin_sorted([(t, v * k & MASK) for t, v in pa if v * k & MASK], c * k)
    ca, c = _lin_parts(a)
    return _lin({t: v * k for t, v in ca.items()}, c * k)


def neg(a: Term) -> Term:
    return mul(a, -1)


def sub(a: Term, b: Term) -> Term:
    return add(a, neg(b))


def shl(a: Term, n: int) -> Term:
    n &= 63
    if a.op == "shr" and a.args[1] == n:   # (x >> n) << n == x & -(2^n)
        return and_(a.args[0], (MASK << n) & MASK)
    return mul(a, 1 << n)


# --------------------------------------------------------------------------- xor, rotates, bits

def _xor_parts(t: Term) -> tuple[set, int]:
    if t.op == "xor":
        return set(t.args[0]), t.args[1]
    if t.op == "const":
        return set(), t.args[0]
    return {t}, 0


def xor(a: Term, b: Term) -> Term:
    return _memo("^", a, b, _xor)


def _xor(a: Term, b: Term) -> Term:
    sa, ka = _xor_parts(a)
    sb, kb = _xor_parts(b)
    s = sa ^ sb
    c = ka ^ kb
    if len(s) == 2 and c == 0:
        r = _rotate_pair(*s)
        if r is not None:
            return r
    if not s:
        return const(c)
    if len(s) == 1 and c == 0:
        return next(iter(s))
    return _made("xor", (tuple(sorted(s, key=_ID)), c))


def _rotate_pair(a: Term, b: Term) -> Term | None:
    """(x * 2^r) with (x >> (64 - r)) in either order, or None."""
    for lo, hi in ((a, b), (b, a)):
        if hi.op == "shr":
            x, s = hi.args
            if lo is mul(x, 1 << (64 - s)):
                return rotl(x, 64 - s)
    return None


def or_(a: Term, b: Term) -> Term:
    if a is b:
        return a
    r = _rotate_pair(a, b)
    if r is not None:
        return r
    va, vb = value(a), value(b)
    if va is not None and vb is not None:
        return const(va | vb)
    if va == 0:
        return b
    if vb == 0:
        return a
    return Term("or", tuple(sorted((a, b), key=_ID)))


def _by_count(op: str, x: Term, n: int, fold) -> Term:
    """x rotated or shifted (``op``) by a count taken mod 64: x itself for 0, a constant x folded
    (``fold(v, n)``), else the term."""
    n &= 63
    if n == 0:
        return x
    v = value(x)
    if v is not None:
        return const(fold(v, n))
    return Term(op, (x, n))


def _rotl_int(v: int, r: int) -> int:
    return (v << r) | (v >> (64 - r))


def _shr_int(v: int, n: int) -> int:
    return v >> n


def rotl(x: Term, r: int) -> Term:
    if x.op == "rotl" and r & 63:           # nested rotates fold
        return rotl(x.args[0], x.args[1] + r)
    return _by_count("rotl", x, r, _rotl_int)


def rotr(x: Term, r: int) -> Term:
    return rotl(x, 64 - (r & 63))


def shr(x: Term, n: int) -> Term:
    return _by_count("shr", x, n, _shr_int)


def and_(x: Term, m: int) -> Term:
    m &= MASK
    if m == MASK:
        return x
    v = value(x)
    if v is not None:
        return const(v & m)
    if m == 0:
        return const(0)
    return Term("and", (x, m))


def ge(x: Term, k: int) -> Term:
    """1 when x >= k (unsigned), else 0: a loop or block test on a counter (``n >= 3``)."""
    k &= MASK
    v = value(x)
    if v is not None:
        return const(int(v >= k))
    if k == 0:
        return const(1)
    return Term("ge", (x, k))


def lt(a: Term, b: Term) -> Term:
    """1 when a < b (unsigned), else 0: a loop test of a counter against a bound (``b < n``)."""
    va, vb = value(a), value(b)
    if va is not None and vb is not None:
        return const(int(va < vb))
    if a is b or vb == 0:
        return const(0)
    return Term("lt", (a, b))


# --------------------------------------------------------------------------- inspection

# ---------------------------------------------------------------------------- byte views

def bytes_of(t: Term, memo: dict | None = None) -> tuple:
    """The 8 (word, byte) sources of a 64-bit term, byte 0 least significant (memoised in the
    proof's scope)."""
    if memo is None:
        memo = t.scope.cache("bytes")
    r = memo.get(t)
    if r is not None:
        return r
    if t.op == "bytes":
        a = t.args
        r = tuple((a[2 * k], a[2 * k + 1]) for k in range(8))
    elif t.op == "rotl" and t.args[1] % 8 == 0:
        inner = bytes_of(t.args[0], memo)
        s = t.args[1] // 8
        r = tuple(inner[(k - s) % 8] for k in range(8))
    else:
        r = tuple((t, k) for k in range(8))
    memo[t] = r
    return r


def word(pairs) -> Term:
    """The 64-bit term of 8 (word, byte) sources: a constant, a word rotated by a multiple of 8
    (the word itself when in order), else a ``bytes`` term."""
    if all(value(t) is not None for t, _ in pairs):
        v = 0
        for k, (t, j) in enumerate(pairs):
            v |= ((value(t) >> (8 * j)) & 0xff) << (8 * k)
        return const(v)
    t0, j0 = pairs[0]
    if all(t is t0 for t, _ in pairs):
        s = (0 - j0) % 8
        if all((j - k + s) % 8 == 0 for k, (_, j) in enumerate(pairs)):
            return rotl(t0, 8 * s)
    flat = []
    for t, j in pairs:
        flat += [t, j]
    return Term("bytes", tuple(flat))


def bswap(t: Term) -> Term:
    """The word with its 8 bytes in reverse order (a big-endian load or store of a word)."""
    return word(tuple(reversed(bytes_of(t))))


def subterms(t: Term) -> set:
    """Every term reachable from t (t included)."""
    seen: set = set()
    stack = [t]
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        stack.extend(children(u))
    return seen


def children(t: Term) -> list:
    if t.op == "lin":
        return [u for u, _ in t.args[0]]
    if t.op == "xor":
        return list(t.args[0])
    if t.op == "bytes":     # a constant byte is data, as the constants of lin and xor are
        return [a for a in t.args if isinstance(a, Term) and a.op != "const"]
    return [a for a in t.args if isinstance(a, Term)]


def show(t: Term, depth: int = 3) -> str:
    """A short printable form (depth-limited: terms are DAGs of thousands of nodes)."""
    if t.op == "const":
        return hex(t.args[0])
    if t.op == "var":
        return t.args[0]
    if depth == 0:
        return "..."
    d = depth - 1
    if t.op == "lin":
        parts = [show(u, d) if k == 1 else f"{k if k < 1 << 63 else k - (1 << 64)}*{show(u, d)}"
                 for u, k in t.args[0]]
        if t.args[1]:
            parts.append(hex(t.args[1]))
        return "(" + " + ".join(parts) + ")"
    if t.op == "xor":
        parts = [show(u, d) for u in t.args[0]] + ([hex(t.args[1])] if t.args[1] else [])
        return "(" + " ^ ".join(parts) + ")"
    if t.op == "rotl":
        return f"rotl({show(t.args[0], d)}, {t.args[1]})"
    args = ", ".join(show(a, d) if isinstance(a, Term) else hex(a) for a in t.args)
    return f"{t.op}({args})"


def evaluate(t: Term, env: dict, memo: dict | None = None) -> int:
    """The concrete value of t with variables from env (name -> int); KeyError if one is missing."""
    memo = {} if memo is None else memo
    if t in memo:
        return memo[t]
    op, a = t.op, t.args
    if op == "const":
        v = a[0]
    elif op == "var":
        v = env[a[0]]
    elif op == "lin":
        v = sum(k * evaluate(u, env, memo) for u, k in a[0]) + a[1]
    elif op == "xor":
        v = a[1]
        for u in a[0]:
            v ^= evaluate(u, env, memo)
    elif op == "rotl":
        x = evaluate(a[0], env, memo)
        v = (x << a[1]) | (x >> (64 - a[1]))
    elif op == "shr":
        v = evaluate(a[0], env, memo) >> a[1]
    elif op == "and":
        v = evaluate(a[0], env, memo) & a[1]
    elif op == "or":
        v = evaluate(a[0], env, memo) | evaluate(a[1], env, memo)
    elif op == "ge":
        v = int(evaluate(a[0], env, memo) >= a[1])
    elif op == "lt":
        v = int(evaluate(a[0], env, memo) < evaluate(a[1], env, memo))
    elif op == "bytes":
        v = sum(((evaluate(a[2 * k], env, memo) >> (8 * a[2 * k + 1])) & 0xff) << (8 * k) for k in range(8))
    else:
        raise KeyError(op)
    memo[t] = v & MASK
    return memo[t]


def subst(t: Term, mapping: dict, memo: dict | None = None) -> Term:
    """t with the terms in mapping replaced (rebuilt through the normalising constructors).  A
    term none of whose subterms changed is t itself: it was made by the same constructors, so
    rebuilding it would make it again (after a loop the prover substitutes the counter and the
    pointers in its whole state: most of the state's terms, the cipher words, hold neither, and
    rebuilding their long sums one add at a time was most of a nasm-x64 AVX-512 proof's time)."""
    memo = {} if memo is None else memo
    if t in mapping:
        return mapping[t]
    if t in memo:
        return memo[t]
    op, a = t.op, t.args
    if op in ("const", "var"):
        r = t
    elif op == "lin":
        parts = [(subst(u, mapping, memo), k) for u, k in a[0]]
        if all(s is u for (s, _), (u, _) in zip(parts, a[0])):
            r = t
        else:
            r = const(a[1])
            for s, k in parts:
                r = add(r, mul(s, k))
    elif op == "xor":
        parts = [subst(u, mapping, memo) for u in a[0]]
        if all(s is u for s, u in zip(parts, a[0])):
            r = t
        else:
            r = const(a[1])
            for s in parts:
                r = xor(r, s)
    elif op == "rotl":
        r = rotl(subst(a[0], mapping, memo), a[1])
    elif op == "shr":
        r = shr(subst(a[0], mapping, memo), a[1])
    elif op == "and":
        r = and_(subst(a[0], mapping, memo), a[1])
    elif op == "or":
        r = or_(subst(a[0], mapping, memo), subst(a[1], mapping, memo))
    elif op == "ge":
        r = ge(subst(a[0], mapping, memo), a[1])
    elif op == "lt":
        r = lt(subst(a[0], mapping, memo), subst(a[1], mapping, memo))
    elif op == "bytes":
        r = word(tuple((subst(a[2 * k], mapping, memo), a[2 * k + 1]) for k in range(8)))
    else:
        r = Term(op, tuple(subst(u, mapping, memo) if isinstance(u, Term) else u for u in a))
    memo[t] = r
    return r


def variables(t: Term) -> set:
    return {u.args[0] for u in subterms(t) if u.op == "var"}
