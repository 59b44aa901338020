// threefish-gen verify harness for the Rust Skein crate (--target rust --primitive skein).
//
// The checker (verify/rust.py) writes this file as src/main.rs of a harness crate that depends on
// the rendered crate (as `tfcrate`), after a generated first part that names the types:
//   use tfcrate::{Skein512 as Sk, Skein512Tree as SkTree, Params, Error as SkError, STATE_BYTES as B};
//   const WIPE: bool = true;        // the crate was rendered with the wipe (--no-wipe: false)
// and before a generated last part: the digest-trait checks (fn digest_h, digest_e) when the row
// builds the crate with its `digest` feature, else empty ones.
// Run: harness VECTORS   (the Skein vector file of verify/skein_c_abi.py; see skein_harness.c)
//
//   H <outlen> <key> <pers> <message> <digest>       hash / MAC / personalization
//   T <outlen> <Yl> <Yf> <Ym> <message> <digest>      tree hashing
//   M <outlen> <n> <message 1> <digest 1> ...         hash_many batch (mixed lengths)
//   B <outlen> <nbits> <key> <pers> <pubkey> <keyid> <nonce> <message> <digest>
//   E                                                 bad arguments are refused
//
// H and T records run one-shot (hash / mac / hash_params / Tree::hash where they apply) and
// streamed in eight chunkings (1, 3, B-1, B, B+1, 2B+3 bytes, a pseudo-random one, all at once),
// with the message and the digest at misalignments 0..7, guard bytes around the digest, the
// message unchanged afterwards, and finalize_into_reset giving the same digest twice.  B records
// run hash_bits / mac_bits where their arguments allow, and with_params (new_keyed where only a
// key is given) with the whole bytes through update or update_bits in the same chunkings, then the
// partial byte through update_bits; after a partial byte update_bits returns MessageEnded and
// update panics, changing nothing.  E: the refusals, and that drop wipes the states (or, --no-wipe,
// does not).  It prints "harness: N passed, M failed" and exits 1 on any failure, 2 when nothing
// was read.

const GUARD: usize = 32;
const CHUNKINGS: usize = 8;

struct Counts {
    passed: u64,
    failed: u64,
    line: usize,
}

impl Counts {
    fn check(&mut self, ok: bool, what: &str) {
        if ok {
            self.passed += 1;
            return;
        }
        self.failed += 1;
        if self.failed <= 20 {
            eprintln!("FAIL line {}: {}", self.line, what);
        }
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s == "-" {
        return Some(Vec::new());
    }
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len() / 2).map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()).collect()
}

/// The chunk sizes of chunking k (6: pseudo-random 0..2B+5 from a seed; 7: all at once).
fn chunk(k: usize, seed: &mut u64) -> usize {
    let fixed = [1, 3, B - 1, B, B + 1, 2 * B + 3];
    if k == CHUNKINGS - 1 {
        return usize::MAX;
    }
    if k < CHUNKINGS - 2 {
        return fixed[k];
    }
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*seed >> 33) % (2 * B as u64 + 6)) as usize
}

/// The two incremental types through one interface.
trait Inc {
    fn up(&mut self, d: &[u8]);
    fn bits(&mut self, d: &[u8], n: usize) -> Result<(), SkError>;
    fn fin(self, out: &mut [u8]);
    fn fin_reset(&mut self, out: &mut [u8]);
}

// the plain and the tree state have the same incremental methods: one impl for both
macro_rules! impl_inc {
    ($($t:ty),*) => {$(
        impl Inc for $t {
            fn up(&mut self, d: &[u8]) {
                self.update(d)
            }
            fn bits(&mut self, d: &[u8], n: usize) -> Result<(), SkError> {
                self.update_bits(d, n)
            }
            fn fin(self, out: &mut [u8]) {
                self.finalize_into(out)
            }
            fn fin_reset(&mut self, out: &mut [u8]) {
                self.finalize_into_reset(out)
            }
        }
    )*};
}
impl_inc!(Sk, SkTree);

/// The digest of `f` written into a guarded buffer at offset `off`: (digest ok, guards ok).
fn guarded(want: &[u8], off: usize, f: impl FnOnce(&mut [u8])) -> (bool, bool) {
    let mut out = vec![0xA5u8; want.len() + 2 * GUARD + 8];
    f(&mut out[GUARD + off..GUARD + off + want.len()]);
    let guards = out[..GUARD + off].iter().chain(&out[GUARD + off + want.len()..]).all(|&b| b == 0xA5);
    (&out[GUARD + off..GUARD + off + want.len()] == want, guards)
}

fn panics(f: impl FnOnce()) -> bool {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err()
}

/// Runs an incremental state over msg in chunking k at offset off and compares with want.
fn stream<S: Inc>(c: &mut Counts, mut st: S, msg: &[u8], want: &[u8], k: usize, off: usize, what: &str) {
    let mut buf = vec![0u8; msg.len() + 8];
    buf[off..off + msg.len()].copy_from_slice(msg);
    let mut seed = c.line as u64 * 131 + k as u64;
    let mut pos = 0;
    while pos < msg.len() {
        let n = chunk(k, &mut seed).min(msg.len() - pos);
        st.up(&buf[off + pos..off + pos + n]);
        pos += n;
    }
    if k == CHUNKINGS - 2 {
        st.up(&buf[off + msg.len()..off + msg.len()]);       // an empty update anywhere is harmless
    }
    let (ok, guards) = guarded(want, off, |o| st.fin(o));
    c.check(ok, &format!("{}: streamed digest (chunking {}, offset {})", what, k, off));
    c.check(guards, &format!("{}: guard bytes around the digest", what));
    c.check(&buf[off..off + msg.len()] == msg, &format!("{}: message unchanged", what));
}

/// finalize_into_reset gives the same digest twice (the state starts over under its arguments).
fn twice<S: Inc>(c: &mut Counts, mut st: S, msg: &[u8], want: &[u8], what: &str) {
    let mut ok = true;
    for _ in 0..2 {
        st.up(msg);
        let mut out = vec![0u8; want.len()];
        st.fin_reset(&mut out);
        ok &= out == want;
    }
    c.check(ok, &format!("{}: finalize_into_reset, twice", what));
}

fn record_h(c: &mut Counts, f: &[Vec<u8>], outlen: usize) {
    let (key, pers, msg, dig) = (&f[0], &f[1], &f[2], &f[3]);
    c.check(dig.len() == outlen, "digest length matches outlen");
    let p = Params { key, pers, ..Params::default() };
    for off in [0, 3, 6] {
        if key.is_empty() && pers.is_empty() {
            let (ok, g) = guarded(dig, off, |o| Sk::hash(msg, o));
            c.check(ok && g, "hash one-shot");
        }
        if pers.is_empty() {
            let (ok, g) = guarded(dig, off, |o| Sk::mac(key, msg, o));
            c.check(ok && g, "mac one-shot");
        }
        let (ok, g) = guarded(dig, off, |o| Sk::hash_params(&p, msg, o));
        c.check(ok && g, "hash_params one-shot");
    }
    for k in 0..CHUNKINGS {
        let mut off = 0;
        while off < 8 {
            let st = if pers.is_empty() && (k + off) % 2 == 1 { Sk::new_keyed(key, outlen) } else { Sk::with_params(&p, outlen) };
            stream(c, st, msg, dig, k, off, "H");
            off += if k == CHUNKINGS - 2 { 1 } else { 3 };
        }
    }
    if key.is_empty() && pers.is_empty() {
        stream(c, Sk::new(outlen), msg, dig, 0, 0, "H new");
    }
    twice(c, Sk::with_params(&p, outlen), msg, dig, "H");
    digest_h(c, outlen, key, pers, msg, dig);
}

fn record_t(c: &mut Counts, outlen: usize, tree: [u32; 3], msg: &[u8], dig: &[u8]) {
    let [leaf, fan, height] = tree;
    c.check(dig.len() == outlen, "digest length matches outlen");
    let (ok, g) = guarded(dig, 1, |o| c.check(SkTree::hash(msg, o, leaf, fan, height).is_ok(), "Tree::hash result"));
    c.check(ok && g, "Tree::hash one-shot");
    for k in 0..CHUNKINGS {
        for off in [0, 5] {
            match SkTree::new(outlen, leaf, fan, height) {
                Ok(st) => stream(c, st, msg, dig, k, off, "T"),
                Err(e) => c.check(false, &format!("Tree::new: {}", e)),
            }
        }
    }
    if let Ok(st) = SkTree::new(outlen, leaf, fan, height) {
        twice(c, st, msg, dig, "T");
    }
}

fn stream_bits(c: &mut Counts, mut st: Sk, msg: &[u8], nbits: usize, want: &[u8], k: usize, off: usize) {
    let (len, whole, r) = (msg.len(), nbits / 8, nbits % 8);
    let mut buf = vec![0u8; len + 8];
    buf[off..off + len].copy_from_slice(msg);
    let mut seed = c.line as u64 * 131 + k as u64;
    let mut ok = true;
    if k == CHUNKINGS - 1 {
        ok &= st.update_bits(&buf[off..off + len], nbits).is_ok();
    } else {
        let mut pos = 0;
        while pos < whole {
            let n = chunk(k, &mut seed).min(whole - pos);
            if k % 2 == 1 {
                st.update(&buf[off + pos..off + pos + n]);
            } else {
                ok &= st.update_bits(&buf[off + pos..off + pos + n], 8 * n).is_ok();
            }
            pos += n;
        }
        ok &= st.update_bits(&buf[off + whole..off + len], r).is_ok();
    }
    if r != 0 {                       // the message has ended: nothing more goes in
        for n in [8, 1, 0] {
            ok &= st.update_bits(&buf[off..off + len], n) == Err(SkError::MessageEnded);
        }
        if k == 0 {
            ok &= panics(|| st.update(&buf[off..off + len]));
        }
    }
    c.check(ok, "update_bits results");
    let (good, guards) = guarded(want, off, |o| st.finalize_into(o));
    c.check(good, &format!("streamed digest, bits (chunking {}, offset {})", k, off));
    c.check(guards, "guard bytes around the digest");
    c.check(&buf[off..off + len] == msg, "message unchanged");
}

fn record_b(c: &mut Counts, f: &[Vec<u8>], outlen: usize, nbits: usize) {
    let (msg, dig) = (&f[5], &f[6]);
    let p = Params { key: &f[0], pers: &f[1], pubkey: &f[2], keyid: &f[3], nonce: &f[4] };
    let others = !(f[2].is_empty() && f[3].is_empty() && f[4].is_empty());
    c.check(dig.len() == outlen && msg.len() == (nbits + 7) / 8, "digest and message lengths");
    if !others && f[0].is_empty() && f[1].is_empty() {
        let (ok, g) = guarded(dig, 3, |o| Sk::hash_bits(msg, nbits, o));
        c.check(ok && g, "hash_bits one-shot");
    }
    if !others && f[1].is_empty() {
        let (ok, g) = guarded(dig, 5, |o| Sk::mac_bits(&f[0], msg, nbits, o));
        c.check(ok && g, "mac_bits one-shot");
    }
    if nbits % 8 == 0 {
        let (ok, g) = guarded(dig, 1, |o| Sk::hash_params(&p, msg, o));
        c.check(ok && g, "hash_params one-shot");
    }
    for k in 0..CHUNKINGS {
        for off in [0, 3, 6] {
            let st = if !others && f[1].is_empty() && (k + off) % 2 == 1 {
                Sk::new_keyed(&f[0], outlen)
            } else {
                Sk::with_params(&p, outlen)
            };
            stream_bits(c, st, msg, nbits, dig, k, off);
        }
    }
}

fn record_m(c: &mut Counts, outlen: usize, items: &[Vec<u8>]) {
    let n = items.len() / 2;
    let msgs: Vec<&[u8]> = (0..n).map(|i| items[2 * i].as_slice()).collect();
    let want: Vec<u8> = (0..n).flat_map(|i| items[2 * i + 1].iter().copied()).collect();
    c.check(want.len() == n * outlen, "digest lengths match outlen");
    let (ok, g) = guarded(&want, 1, |o| Sk::hash_many(&msgs, o, outlen));
    c.check(ok, &format!("hash_many of {}", n));
    c.check(g, "hash_many guard bytes");
}

/// The bytes of a value, dropped in place: (before, after).
fn drop_bytes<T>(value: T) -> (Vec<u8>, Vec<u8>) {
    let mut slot = std::mem::MaybeUninit::<T>::uninit();
    slot.write(value);
    let size = std::mem::size_of::<T>();
    // SAFETY: slot holds a value (written above); after drop_in_place its bytes are only read as
    // u8 (the crate's states are words and byte arrays: no padding, every byte was initialised).
    let before: Vec<u8> = unsafe { std::slice::from_raw_parts(slot.as_ptr() as *const u8, size) }.to_vec();
    unsafe { slot.assume_init_drop() };
    let after: Vec<u8> = unsafe { std::slice::from_raw_parts(slot.as_ptr() as *const u8, size) }.to_vec();
    (before, after)
}

fn wipe_on_drop(c: &mut Counts) {
    let mut keyed = Sk::new_keyed(&[0x3Cu8; 40], 32);
    keyed.update(&[0x11u8; 3 * B + 5]);
    let mut tree = SkTree::new(32, 1, 1, 8).unwrap();
    tree.update(&[0x22u8; 40 * B + 3]);
    for (what, (before, after)) in [("Skein", drop_bytes(keyed)), ("Tree", drop_bytes(tree))] {
        c.check(before.iter().any(|&b| b != 0), &format!("{}: the state holds values before drop", what));
        if WIPE {
            c.check(after.iter().all(|&b| b == 0), &format!("{}: drop wipes the state", what));
        } else {
            c.check(after == before, &format!("{}: --no-wipe: drop leaves the state", what));
        }
    }
}

fn record_e(c: &mut Counts) {
    let m = [0u8; 2];
    c.check(Sk::try_with_params(&Params::default(), 0).err() == Some(SkError::OutputLength), "output length 0: OutputLength");
    if usize::BITS >= 64 {
        c.check(Sk::try_with_params(&Params::default(), usize::MAX / 8 + 1).err() == Some(SkError::OutputLength),
                "output length of 2^61 bytes: OutputLength");
    }
    c.check(panics(|| drop(Sk::new(0))), "new(0) panics");
    c.check(panics(|| Sk::hash(&m, &mut [])), "hash with an empty output panics");
    c.check(panics(|| Sk::mac(&m, &m, &mut [])), "mac with an empty output panics");
    c.check(panics(|| Sk::hash_bits(&m, 3, &mut [])), "hash_bits with an empty output panics");
    c.check(panics(|| Sk::hash_bits(&m, 17, &mut [0u8; 4])), "hash_bits with nbits past the data panics");
    c.check(panics(|| Sk::hash_many(&[&m[..]], &mut [0u8; 4], 0)), "hash_many with output length 0 panics");
    c.check(panics(|| Sk::hash_many(&[&m[..], &m[..]], &mut [0u8; 4], 4)), "hash_many with short outs panics");
    c.check(panics(|| Sk::new(4).finalize_into(&mut [0u8; 5])), "finalize_into with another length panics");
    for (t, what) in [([0u32, 1, 2], "leaf 0"), ([1, 0, 2], "fan 0"), ([1, 1, 1], "height 1"), ([1, 1, 256], "height 256"),
                      ([256, 1, 2], "leaf 256")] {
        c.check(SkTree::new(32, t[0], t[1], t[2]).err() == Some(SkError::TreeParameters), &format!("tree with {}", what));
    }
    c.check(SkTree::new(0, 1, 1, 2).err() == Some(SkError::OutputLength), "tree with output length 0");
    // tree hashing takes whole bytes: a partial byte is refused and changes nothing
    let z = [0u8; 2];
    let mut t = SkTree::new(4, 1, 1, 2).unwrap();
    let mut ok = t.update_bits(&z, 8).is_ok();
    ok &= t.update_bits(&z, 7) == Err(SkError::PartialByteInTree);
    ok &= t.update_bits(&z[1..], 8).is_ok();
    let mut got = [0u8; 4];
    t.finalize_into(&mut got);
    let mut want = [0u8; 4];
    ok &= SkTree::hash(&z, &mut want, 1, 1, 2).is_ok();
    c.check(ok && got == want, "update_bits on a tree: whole bytes, a partial byte refused, nothing changed");
    // the states never show their values
    let dbg = format!("{:?} {:?} {:?}", Sk::new_keyed(&[0xEEu8; 9], 7), SkTree::new(7, 1, 1, 2).unwrap(),
                      Params { key: &[0xEE; 9], ..Params::default() });
    c.check(!dbg.contains("238") && !dbg.contains('[') && dbg.contains("output_len: 7"), "Debug shows no key or state");
    wipe_on_drop(c);
    digest_e(c);
}

fn fail_parse(line: usize) -> ! {
    eprintln!("malformed vector line {}", line);
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: {} VECTORS", args[0]);
        std::process::exit(2);
    }
    let text = match std::fs::read_to_string(&args[1]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {}", args[1], e);
            std::process::exit(2);
        }
    };
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));         // the expected panics stay quiet
    let mut c = Counts { passed: 0, failed: 0, line: 0 };
    let mut records = 0u64;
    for (i, line) in text.lines().enumerate() {
        c.line = i + 1;
        let t: Vec<&str> = line.split_whitespace().collect();
        let num = |k: usize| -> usize { t.get(k).and_then(|s| s.parse().ok()).unwrap_or_else(|| fail_parse(i + 1)) };
        let hexes = |from: usize| -> Vec<Vec<u8>> {
            t[from.min(t.len())..].iter().map(|s| unhex(s).unwrap_or_else(|| fail_parse(i + 1))).collect()
        };
        match t.first() {
            Some(&"H") if t.len() == 6 => record_h(&mut c, &hexes(2), num(1)),
            Some(&"T") if t.len() == 7 => {
                let f = hexes(5);
                record_t(&mut c, num(1), [num(2) as u32, num(3) as u32, num(4) as u32], &f[0], &f[1]);
            }
            Some(&"M") if t.len() >= 3 && t.len() == 3 + 2 * num(2) => record_m(&mut c, num(1), &hexes(3)),
            Some(&"B") if t.len() == 10 => record_b(&mut c, &hexes(3), num(1), num(2)),
            Some(&"E") => record_e(&mut c),
            Some(s) if s.starts_with('#') => continue,
            None => continue,
            Some(_) => fail_parse(i + 1),
        }
        records += 1;
    }
    std::panic::set_hook(hook);
    println!("harness: {} records", records);
    println!("harness: {} passed, {} failed", c.passed, c.failed);
    std::process::exit(if c.failed > 0 { 1 } else if records == 0 { 2 } else { 0 });
}
