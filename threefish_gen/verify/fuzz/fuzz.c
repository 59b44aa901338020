/* Differential fuzzing (issue 11, verify/fuzz.py): scalar C, the SIMD C dispatcher and the
   NASM x64 object of one size, compared on libFuzzer's inputs.  Input layout: n (mod 41), a
   flags byte (bit 0: in place; bits 1-3: misalignment of the buffers), then key, tweaks and
   data (missing bytes are zero).  Any difference, or a decrypt that does not invert, traps. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include FZ_C_HEADER
#include FZ_SIMD_HEADER
#include FZ_NASM_HEADER

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define NB FZ_BYTES
#define MAXN 40

typedef void (*blocks_fn)(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);
typedef void (*one_fn)(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *);
static const blocks_fn enc[3] = { CAT(FZ_C, encrypt_blocks), CAT(FZ_SIMD, encrypt_blocks), CAT(FZ_NASM, encrypt_blocks) };
static const blocks_fn dec[3] = { CAT(FZ_C, decrypt_blocks), CAT(FZ_SIMD, decrypt_blocks), CAT(FZ_NASM, decrypt_blocks) };
static const one_fn enc1[3] = { CAT(FZ_C, encrypt), CAT(FZ_SIMD, encrypt), CAT(FZ_NASM, encrypt) };

static uint8_t key_buf[NB + 8], tw_buf[16 * MAXN + 8], in_buf[NB * MAXN + 8], out_buf[3][NB * MAXN + 8],
    back[NB * MAXN + 8], one[NB];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n, off, i, have, need;
    int inplace, f;
    uint8_t *key, *tw, *in;
    if (size < 2)
        return 0;
    n = data[0] % (MAXN + 1);
    inplace = data[1] & 1;
    off = (data[1] >> 1) & 7;
    data += 2;
    size -= 2;
    key = key_buf + off;
    tw = tw_buf + off;
    in = in_buf + off;
    memset(key_buf, 0, sizeof key_buf);
    memset(tw_buf, 0, sizeof tw_buf);
    memset(in_buf, 0, sizeof in_buf);
    have = size;
    need = NB;
    memcpy(key, data, have < need ? have : need);
    data += have < need ? have : need;
    have -= have < need ? have : need;
    need = 16 * n;
    memcpy(tw, data, have < need ? have : need);
    data += have < need ? have : need;
    have -= have < need ? have : need;
    need = NB * n;
    memcpy(in, data, have < need ? have : need);
    for (f = 0; f < 3; f++) {
        uint8_t *out = out_buf[f] + off;
        if (inplace) {
            memcpy(out, in, NB * n);
            enc[f](key, tw, out, out, n);
        } else {
            enc[f](key, tw, in, out, n);
        }
    }
    for (f = 1; f < 3; f++)
        if (memcmp(out_buf[0] + off, out_buf[f] + off, NB * n) != 0)
            __builtin_trap();                     /* encrypt_blocks differs between targets */
    for (f = 0; f < 3; f++) {
        dec[f](key, tw, out_buf[f] + off, back + off, n);
        if (memcmp(back + off, in, NB * n) != 0)
            __builtin_trap();                     /* decrypt_blocks does not invert */
        for (i = 0; i < n; i++) {
            enc1[f](key, tw + 16 * i, in + NB * i, one);
            if (memcmp(one, out_buf[0] + off + NB * i, NB) != 0)
                __builtin_trap();                 /* single block differs from block i */
        }
    }
    return 0;
}
