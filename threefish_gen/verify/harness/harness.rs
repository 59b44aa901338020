// threefish-gen verify harness for the Rust target: checks one rendered crate against a vector file.
//
// The checker (verify/rust.py) writes this file as src/main.rs of a harness crate that depends on
// the rendered crate (as `tfcrate`), after a generated first part that names the type:
//   use tfcrate::{Threefish512 as Tf, BLOCK_BYTES as B};
//   use tfcrate::simd_path;         // a crate with SIMD paths; a scalar crate: fn simd_path() = "scalar"
//   const WIPE: bool = true;        // the crate was rendered with the wipe (--no-wipe: false)
// Run: harness VECTORS   (TFGEN_EXPECT_PATH=NAME: simd_path() must name that path)
//
// Vector file lines (hex byte strings, words little-endian), as verify/harness/harness.c reads:
//   V <key> <tweak> <plaintext> <ciphertext>                      one block
//   B <n> <key> <tweaks n*16> <plaintext n*B> <ciphertext n*B>    a batch for *_blocks_with_tweaks
//
// For every record, at every misalignment 0..7 of the key, tweak(s) and block(s) (byte offsets in
// larger buffers; the API takes byte arrays, so any address is allowed):
//   - encrypt gives the ciphertext and decrypt the plaintext back, in place (the API's only form),
//   - guard bytes around the block(s) stay untouched, the key and tweak(s) stay unchanged,
//   - the *_blocks_with_tweaks forms give the same per block, n = 0..33 (n = 0 touches nothing),
//   - a one-block record through *_blocks_with_tweaks with n = 1 as well.
// Once: *_blocks_with_tweaks panics when blocks and tweaks differ in length; the key schedule is
// zero after drop (WIPE) or still holds the key (--no-wipe: shows the check can fail).
// It prints "harness: N passed, M failed" and exits 1 on any failure, 2 when nothing was read.

const GUARD: usize = 32;

struct Counts {
    passed: u64,
    failed: u64,
    line: usize,
}

impl Counts {
    fn check(&mut self, ok: bool, what: &str, off: usize) {
        if ok {
            self.passed += 1;
            return;
        }
        self.failed += 1;
        if self.failed <= 20 {
            eprintln!("FAIL line {}: {} (misalignment {})", self.line, what, off);
        }
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len() / 2).map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()).collect()
}

/// A buffer of `len` bytes at offset GUARD + off in a larger one filled with `fill`.
struct Guarded {
    buf: Vec<u8>,
    start: usize,
    len: usize,
    fill: u8,
}

impl Guarded {
    fn new(data: &[u8], off: usize, fill: u8) -> Guarded {
        let mut buf = vec![fill; data.len() + 2 * GUARD + 8];
        let start = GUARD + off;
        buf[start..start + data.len()].copy_from_slice(data);
        Guarded { buf, start, len: data.len(), fill }
    }
    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
    fn guards_ok(&self) -> bool {
        let end = self.start + self.len;
        self.buf.iter().enumerate().all(|(i, &b)| (i >= self.start && i < end) || b == self.fill)
    }
}

fn key_of(g: &Guarded) -> &[u8; B] {
    g.data().try_into().unwrap()
}

fn one_block(c: &mut Counts, enc: bool, key: &[u8], tweak: &[u8], src: &[u8], want: &[u8]) {
    let name = if enc { "encrypt_block_with_tweak" } else { "decrypt_block_with_tweak" };
    for off in 0..8 {
        let gk = Guarded::new(key, off, 0xA5);
        let gt = Guarded::new(tweak, (off + 3) & 7, 0xA5);
        let mut gb = Guarded::new(src, (off + 1) & 7, 0x5A);
        let cipher = Tf::new(key_of(&gk));
        let t: &[u8; 16] = gt.data().try_into().unwrap();
        let block: &mut [u8; B] = gb.data_mut().try_into().unwrap();
        if enc {
            cipher.encrypt_block_with_tweak(block, t);
        } else {
            cipher.decrypt_block_with_tweak(block, t);
        }
        c.check(gb.data() == want, &format!("{}: result", name), off);
        c.check(gb.guards_ok(), &format!("{}: guard bytes around the block", name), off);
        c.check(gk.data() == key && gt.data() == tweak && gk.guards_ok() && gt.guards_ok(),
                &format!("{}: key and tweak unchanged", name), off);
        // the same record through the blocks form, n = 1
        let mut g1 = Guarded::new(src, (off + 5) & 7, 0x5A);
        let (blocks, _) = g1.data_mut().as_chunks_mut::<B>();
        let (tweaks, _) = gt.data().as_chunks::<16>();
        if enc {
            cipher.encrypt_blocks_with_tweaks(blocks, tweaks);
        } else {
            cipher.decrypt_blocks_with_tweaks(blocks, tweaks);
        }
        c.check(g1.data() == want && g1.guards_ok(), &format!("{}: as one block of *_blocks_with_tweaks", name), off);
    }
}

fn many_blocks(c: &mut Counts, enc: bool, n: usize, key: &[u8], tweaks: &[u8], src: &[u8], want: &[u8]) {
    let name = if enc { "encrypt_blocks_with_tweaks" } else { "decrypt_blocks_with_tweaks" };
    for off in 0..8 {
        let gk = Guarded::new(key, off, 0xA5);
        let gt = Guarded::new(tweaks, (off + 3) & 7, 0xA5);
        let mut gb = Guarded::new(src, (off + 1) & 7, 0x5A);
        let cipher = Tf::new(key_of(&gk));
        let (ts, rest) = gt.data().as_chunks::<16>();
        assert!(rest.is_empty() && ts.len() == n);
        let (blocks, rest) = gb.data_mut().as_chunks_mut::<B>();
        assert!(rest.is_empty() && blocks.len() == n);
        if enc {
            cipher.encrypt_blocks_with_tweaks(blocks, ts);
        } else {
            cipher.decrypt_blocks_with_tweaks(blocks, ts);
        }
        c.check(gb.data() == want, &format!("{} n={}: result", name, n), off);
        c.check(gb.guards_ok(), &format!("{} n={}: guard bytes around the blocks", name, n), off);
        c.check(gk.data() == key && gt.data() == tweaks && gk.guards_ok() && gt.guards_ok(),
                &format!("{} n={}: key and tweaks unchanged", name, n), off);
    }
}

/// The blocks forms refuse slices of different lengths (a panic, never a silent partial run).
fn length_mismatch(c: &mut Counts) {
    let cipher = Tf::new(&[7u8; B]);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for enc in [true, false] {
        let mut blocks = [[0u8; B]; 2];
        let tweaks = [[0u8; 16]; 1];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if enc {
                cipher.encrypt_blocks_with_tweaks(&mut blocks, &tweaks);
            } else {
                cipher.decrypt_blocks_with_tweaks(&mut blocks, &tweaks);
            }
        }));
        c.check(r.is_err() && blocks == [[0u8; B]; 2], "2 blocks with 1 tweak: panics, touches nothing", 0);
    }
    std::panic::set_hook(hook);
}

/// Drop wipes the key schedule (WIPE), or leaves it (--no-wipe: the check sees the difference).
fn wipe_on_drop(c: &mut Counts) {
    let mut slot = std::mem::MaybeUninit::<Tf>::uninit();
    slot.write(Tf::new(&[0x3Cu8; B]));
    let size = std::mem::size_of::<Tf>();
    // SAFETY: slot holds a value (written above); after drop_in_place its bytes are only read as
    // u8 (the struct is arrays of u64: no padding, every byte was initialised).
    let before: Vec<u8> = unsafe { std::slice::from_raw_parts(slot.as_ptr() as *const u8, size) }.to_vec();
    unsafe { slot.assume_init_drop() };
    let after: Vec<u8> = unsafe { std::slice::from_raw_parts(slot.as_ptr() as *const u8, size) }.to_vec();
    c.check(before.iter().any(|&b| b != 0), "the key schedule holds the key before drop", 0);
    if WIPE {
        c.check(after.iter().all(|&b| b == 0), "drop wipes the key schedule", 0);
    } else {
        c.check(after == before, "--no-wipe: drop leaves the key schedule", 0);
    }
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
    let mut c = Counts { passed: 0, failed: 0, line: 0 };
    let (mut records, mut batches) = (0u64, 0u64);
    for (i, line) in text.lines().enumerate() {
        c.line = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first() {
            Some(&"V") => {
                let v: Option<Vec<Vec<u8>>> = f[1..].iter().map(|s| unhex(s)).collect();
                match v {
                    Some(v) if v.len() == 4 && v[0].len() == B && v[1].len() == 16 && v[2].len() == B
                        && v[3].len() == B => {
                        one_block(&mut c, true, &v[0], &v[1], &v[2], &v[3]);
                        one_block(&mut c, false, &v[0], &v[1], &v[3], &v[2]);
                        records += 1;
                    }
                    _ => {
                        eprintln!("malformed vector line {}", c.line);
                        std::process::exit(2);
                    }
                }
            }
            Some(&"B") => {
                let n: usize = match f.get(1).and_then(|s| s.parse().ok()) {
                    Some(n) => n,
                    None => {
                        eprintln!("malformed batch line {}", c.line);
                        std::process::exit(2);
                    }
                };
                let v: Option<Vec<Vec<u8>>> = f[2..].iter().map(|s| unhex(s)).collect();
                let empty = Vec::new();
                match v {
                    Some(v) if !v.is_empty() && v[0].len() == B && (n == 0 && v.len() == 1
                        || v.len() == 4 && v[1].len() == 16 * n && v[2].len() == B * n && v[3].len() == B * n) => {
                        let (t, p, x) = if n == 0 { (&empty, &empty, &empty) } else { (&v[1], &v[2], &v[3]) };
                        many_blocks(&mut c, true, n, &v[0], t, p, x);
                        many_blocks(&mut c, false, n, &v[0], t, x, p);
                        batches += 1;
                    }
                    _ => {
                        eprintln!("malformed batch line {}", c.line);
                        std::process::exit(2);
                    }
                }
            }
            Some(s) if s.starts_with('#') => {}
            None => {}
            Some(_) => {
                eprintln!("unknown line {}", c.line);
                std::process::exit(2);
            }
        }
    }
    c.line = 0;
    length_mismatch(&mut c);
    wipe_on_drop(&mut c);
    // the path *_blocks_with_tweaks took (a SIMD crate: the checker names the one it must be)
    if let Ok(want) = std::env::var("TFGEN_EXPECT_PATH") {
        c.check(simd_path() == want, &format!("simd_path() is {:?}, expected {:?}", simd_path(), want), 0);
    }
    println!("harness: {} vectors, {} block batches, *_blocks path {}", records, batches, simd_path());
    println!("harness: {} passed, {} failed", c.passed, c.failed);
    std::process::exit(if c.failed > 0 { 1 } else if records == 0 { 2 } else { 0 });
}
