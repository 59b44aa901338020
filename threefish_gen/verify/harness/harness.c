/*
 * threefish-gen verify harness: checks one emitted variant against a vector file.
 *
 * Build with the variant's source and header:
 *   cc -DTF_HEADER='"tf.h"' -DTF_PREFIX=tf_ -DTF_BYTES=64 harness.c tf.c -o harness
 * Run:
 *   ./harness vectors.txt
 *
 * Vector file lines (hex byte strings, words little-endian):
 *   V <key> <tweak> <plaintext> <ciphertext>            one block
 *   B <n> <key> <tweaks n*16> <plaintext n*B> <ciphertext n*B>   encrypt_blocks batch
 *
 * For every record it checks, with the SUPERCOP harness semantics:
 *   - encrypt gives the ciphertext and decrypt gives the plaintext back,
 *   - for key/tweak/input/output buffers at every misalignment 0..7,
 *   - with guard bytes before and after the output that must stay untouched,
 *   - with the inputs unchanged after the call,
 *   - in place (in == out), at every misalignment,
 *   - encrypt_blocks / decrypt_blocks with a distinct tweak per block, same checks.
 * It prints "harness: N passed, M failed" and exits 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include TF_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define ENC CAT(TF_PREFIX, encrypt)
#define DEC CAT(TF_PREFIX, decrypt)
#define ENC_BLOCKS CAT(TF_PREFIX, encrypt_blocks)
#define DEC_BLOCKS CAT(TF_PREFIX, decrypt_blocks)

#define B TF_BYTES
#define GUARD 32
#define MAXN 64

static unsigned long passed, failed;
static unsigned long line_no;

static void check(int ok, const char *what, unsigned off)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed <= 20)
        fprintf(stderr, "FAIL line %lu: %s (misalignment %u)\n", line_no, what, off);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parse exactly len bytes of hex from *p (skipping leading blanks); 0 on error. */
static int parse_hex(char **p, unsigned char *dst, size_t len)
{
    char *s = *p;
    size_t i;
    while (*s == ' ') s++;
    for (i = 0; i < len; i++) {
        int hi = hexval((unsigned char)s[2 * i]), lo;
        if (hi < 0) return 0;
        lo = hexval((unsigned char)s[2 * i + 1]);
        if (lo < 0) return 0;
        dst[i] = (unsigned char)(hi * 16 + lo);
    }
    s += 2 * len;
    if (*s != ' ' && *s != '\n' && *s != '\0') return 0;
    *p = s;
    return 1;
}

/* A buffer with guard zones on both sides; data starts at base + GUARD + off. */
typedef struct {
    unsigned char *base;
    size_t len;
} guarded;

static unsigned char *gbuf(guarded *g, size_t len, unsigned off, unsigned char fill)
{
    g->len = len + 2 * GUARD + 8;
    g->base = (unsigned char *)malloc(g->len);
    if (!g->base) {
        perror("malloc");
        exit(2);
    }
    memset(g->base, fill, g->len);
    return g->base + GUARD + off;
}

/* True when every byte outside [data, data+len) still holds the fill pattern. */
static int guards_ok(const guarded *g, const unsigned char *data, size_t len, unsigned char fill)
{
    size_t i, start = (size_t)(data - g->base);
    for (i = 0; i < g->len; i++)
        if ((i < start || i >= start + len) && g->base[i] != fill)
            return 0;
    return 1;
}

typedef void (*block_fn)(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *);
typedef void (*blocks_fn)(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);

static void one_block(block_fn f, const char *name, const unsigned char *key,
                      const unsigned char *tweak, const unsigned char *src, const unsigned char *want)
{
    unsigned off;
    char what[96];
    for (off = 0; off < 8; off++) {
        guarded gk, gt, gi, go;
        unsigned char *k = gbuf(&gk, B, off, 0xA5);
        unsigned char *t = gbuf(&gt, 16, (off + 3) & 7, 0xA5);
        unsigned char *in = gbuf(&gi, B, (off + 5) & 7, 0xA5);
        unsigned char *out = gbuf(&go, B, (off + 1) & 7, 0x5A);
        memcpy(k, key, B);
        memcpy(t, tweak, 16);
        memcpy(in, src, B);
        f(k, t, in, out);
        snprintf(what, sizeof what, "%s: result", name);
        check(memcmp(out, want, B) == 0, what, off);
        snprintf(what, sizeof what, "%s: guard bytes around the output", name);
        check(guards_ok(&go, out, B, 0x5A), what, off);
        snprintf(what, sizeof what, "%s: inputs unchanged", name);
        check(memcmp(k, key, B) == 0 && memcmp(t, tweak, 16) == 0 && memcmp(in, src, B) == 0 &&
                  guards_ok(&gk, k, B, 0xA5) && guards_ok(&gt, t, 16, 0xA5) && guards_ok(&gi, in, B, 0xA5),
              what, off);
        /* in place */
        memcpy(out, src, B);
        f(k, t, out, out);
        snprintf(what, sizeof what, "%s: in place", name);
        check(memcmp(out, want, B) == 0 && guards_ok(&go, out, B, 0x5A), what, off);
        free(gk.base);
        free(gt.base);
        free(gi.base);
        free(go.base);
    }
}

static void many_blocks(blocks_fn f, const char *name, size_t n, const unsigned char *key,
                        const unsigned char *tweaks, const unsigned char *src, const unsigned char *want)
{
    unsigned off;
    char what[96];
    for (off = 0; off < 8; off++) {
        guarded gk, gt, gi, go;
        size_t len = n * B;
        unsigned char *k = gbuf(&gk, B, off, 0xA5);
        unsigned char *t = gbuf(&gt, 16 * n, (off + 3) & 7, 0xA5);
        unsigned char *in = gbuf(&gi, len, (off + 5) & 7, 0xA5);
        unsigned char *out = gbuf(&go, len, (off + 1) & 7, 0x5A);
        memcpy(k, key, B);
        if (n) {
            memcpy(t, tweaks, 16 * n);
            memcpy(in, src, len);
        }
        f(k, t, in, out, n);
        snprintf(what, sizeof what, "%s n=%lu: result", name, (unsigned long)n);
        check(n == 0 || memcmp(out, want, len) == 0, what, off);
        snprintf(what, sizeof what, "%s n=%lu: guard bytes around the output", name, (unsigned long)n);
        check(guards_ok(&go, out, len, 0x5A), what, off);
        snprintf(what, sizeof what, "%s n=%lu: inputs unchanged", name, (unsigned long)n);
        check(memcmp(k, key, B) == 0 && (n == 0 || (memcmp(t, tweaks, 16 * n) == 0 &&
                                                    memcmp(in, src, len) == 0)) &&
                  guards_ok(&gt, t, 16 * n, 0xA5) && guards_ok(&gi, in, len, 0xA5),
              what, off);
        if (n) {
            memcpy(out, src, len);
            f(k, t, out, out, n);
            snprintf(what, sizeof what, "%s n=%lu: in place", name, (unsigned long)n);
            check(memcmp(out, want, len) == 0 && guards_ok(&go, out, len, 0x5A), what, off);
        }
        free(gk.base);
        free(gt.base);
        free(gi.base);
        free(go.base);
    }
}

int main(int argc, char **argv)
{
    static char line[2 * (B + 16 * MAXN + 2 * B * MAXN) + 256];
    static unsigned char key[B], tweaks[16 * MAXN], pt[B * MAXN], ct[B * MAXN];
    unsigned long records = 0, batches = 0;
    FILE *fp;
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    fp = fopen(argv[1], "r");
    if (!fp) {
        perror(argv[1]);
        return 2;
    }
    while (fgets(line, sizeof line, fp)) {
        char *p = line + 1;
        line_no++;
        if (line[0] == 'V') {
            if (!parse_hex(&p, key, B) || !parse_hex(&p, tweaks, 16) || !parse_hex(&p, pt, B) ||
                !parse_hex(&p, ct, B)) {
                fprintf(stderr, "malformed vector line %lu\n", line_no);
                return 2;
            }
            one_block(ENC, "encrypt", key, tweaks, pt, ct);
            one_block(DEC, "decrypt", key, tweaks, ct, pt);
            records++;
        } else if (line[0] == 'B') {
            char *end;
            unsigned long n = strtoul(p, &end, 10);
            p = end;
            if (n > MAXN || !parse_hex(&p, key, B) || (n && (!parse_hex(&p, tweaks, 16 * n) ||
                                                           !parse_hex(&p, pt, B * n) ||
                                                           !parse_hex(&p, ct, B * n)))) {
                fprintf(stderr, "malformed batch line %lu\n", line_no);
                return 2;
            }
            many_blocks(ENC_BLOCKS, "encrypt_blocks", n, key, tweaks, pt, ct);
            many_blocks(DEC_BLOCKS, "decrypt_blocks", n, key, tweaks, ct, pt);
            batches++;
        } else if (line[0] != '#' && line[0] != '\n') {
            fprintf(stderr, "unknown line %lu\n", line_no);
            return 2;
        }
    }
    fclose(fp);
    printf("harness: %lu vectors, %lu block batches\n", records, batches);
    printf("harness: %lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : (records == 0 ? 2 : 0);
}
