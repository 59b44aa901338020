// Encrypts one block with Threefish-512 and hashes a message with Skein-512-512 through the
// rendered crates; prints both in hex (tests/test_examples.py compares them with the published
// known answers of ../shared/kat: the "pattern" Threefish-512 vector and Skein-512-512 of 128
// incrementing bytes).
use skein512_v13_rust_fly_full::Skein512;
use tf512_v13_rust_fly_full::Threefish512;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn main() {
    let key: [u8; 64] = core::array::from_fn(|i| 0x10 + i as u8);    // 10 11 12 ..
    let tweak: [u8; 16] = core::array::from_fn(|i| i as u8);         // 00 01 .. 0f
    let mut block: [u8; 64] = core::array::from_fn(|i| 0xff - i as u8); // ff fe fd ..
    let plain = block;
    let cipher = Threefish512::new(&key);
    cipher.encrypt_block_with_tweak(&mut block, &tweak);
    println!("threefish512 {}", hex(&block));
    cipher.decrypt_block_with_tweak(&mut block, &tweak);
    assert_eq!(block, plain);

    let msg: Vec<u8> = (0..128).map(|i| 0xff - i as u8).collect();
    let mut digest = [0u8; 64];
    let mut h = Skein512::new(64);
    h.update(&msg[..50]);
    h.update(&msg[50..]);
    h.finalize_into(&mut digest);
    println!("skein512-512 {}", hex(&digest));
    let mut once = [0u8; 64];
    Skein512::hash(&msg, &mut once);
    assert_eq!(once, digest);
}
