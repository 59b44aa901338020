/*
 * threefish-gen verify harness for Skein renders (--primitive skein): checks one emitted Skein
 * against a vector file made by the reference model (gen/skein.py).
 *
 * Build with the variant's source and header:
 *   cc -DTF_HEADER='"sk.h"' -DTF_PREFIX=sk_ -DTF_BYTES=64 skein_harness.c sk.c -o harness
 * Run:
 *   ./harness vectors.txt
 *
 * Vector file lines (hex byte strings; '-' = empty):
 *   H <outlen> <key> <pers> <message> <digest>       hash / MAC / personalization
 *   T <outlen> <Yl> <Yf> <Ym> <message> <digest>      tree hashing
 *   M <outlen> <n> <message 1> <digest 1> ...         hash_many batch (mixed lengths)
 *   B <outlen> <nbits> <key> <pers> <pubkey> <keyid> <nonce> <message> <digest>
 *                                                     the first nbits bits of message (a partial
 *                                                     last byte: its top bits), any UBI arguments
 *   E                                                 bad arguments give nonzero results
 *
 * Every H and T record runs one-shot (hash / mac where they apply) and streamed in several
 * chunkings (1, 3, B-1, B, B+1, 2B+3 bytes, a pseudo-random one, and all at once), with the message and the
 * digest at misalignments 0..7, guard bytes around the digest that must stay untouched, and the
 * message unchanged afterwards.  B records run hash_bits / mac_bits where their arguments allow,
 * and init_params (init_ex too where only a key and personalization are given) with the
 * message's whole bytes in the same chunkings, through update or update_bits, then the partial
 * byte through update_bits (the whole message in one update_bits call in the last chunking);
 * after a partial byte, update_bits must return nonzero and update must change nothing.  It prints "harness: N passed, M failed"; exit 1 on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include TF_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define F(name) CAT(TF_PREFIX, name)

#define B TF_BYTES
#define GUARD 16

static unsigned long passed, failed, line_no;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed <= 20)
        printf("FAIL line %lu: %s\n", line_no, what);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A hex token (or '-') into a fresh buffer; its length in *len. */
static unsigned char *unhex(const char *tok, size_t *len)
{
    size_t n = strcmp(tok, "-") == 0 ? 0 : strlen(tok) / 2, i;
    unsigned char *out = malloc(n + 1);
    if (!out) { printf("out of memory\n"); exit(2); }
    for (i = 0; i < n; i++)
        out[i] = (unsigned char)(hexval(tok[2 * i]) << 4 | hexval(tok[2 * i + 1]));
    *len = n;
    return out;
}

static char *read_line(FILE *f)
{
    size_t cap = 256, n = 0;
    int c;
    char *s = malloc(cap);
    if (!s) exit(2);
    while ((c = fgetc(f)) != EOF && c != '\n') {
        if (n + 1 >= cap) {
            cap *= 2;
            s = realloc(s, cap);
            if (!s) exit(2);
        }
        s[n++] = (char)c;
    }
    if (c == EOF && n == 0) { free(s); return NULL; }
    s[n] = 0;
    return s;
}

/* The chunk sizes of chunking k (the last: pseudo-random, 0..2B+5, from a seed). */
#define CHUNKINGS 8
static size_t chunk(int k, unsigned long long *seed)
{
    static const size_t fixed[CHUNKINGS - 2] = { 1, 3, B - 1, B, B + 1, 2 * B + 3 };
    if (k == CHUNKINGS - 1) return (size_t)-1;        /* the whole message in one update */
    if (k < CHUNKINGS - 2) return fixed[k];
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (size_t)((*seed >> 33) % (2 * B + 6));
}

/* Runs an initialised context over msg in chunking k and compares with want (outlen bytes),
 * with the message at offset off and the digest at offset off between guard bytes. */
static void stream(F(ctx) *ctx, const unsigned char *msg, size_t len, const unsigned char *want,
                   size_t outlen, int k, unsigned off)
{
    unsigned char *in = malloc(len + 8), *out = malloc(outlen + 2 * GUARD + 8);
    size_t pos = 0, i;
    unsigned long long seed = line_no * 131ULL + (unsigned long long)k;
    int guards = 1;
    if (!in || !out) exit(2);
    memcpy(in + off, msg, len);
    memset(out, 0xA5, outlen + 2 * GUARD + 8);
    while (pos < len) {
        size_t c = chunk(k, &seed);
        if (c > len - pos) c = len - pos;
        F(update)(ctx, in + off + pos, c);
        pos += c;
    }
    if (k == CHUNKINGS - 2)
        F(update)(ctx, in + off + len, 0);      /* an empty update anywhere is harmless */
    F(final)(ctx, out + GUARD + off);
    for (i = 0; i < GUARD + off; i++) guards &= out[i] == 0xA5;
    for (i = GUARD + off + outlen; i < outlen + 2 * GUARD + 8; i++) guards &= out[i] == 0xA5;
    check(memcmp(out + GUARD + off, want, outlen) == 0, "streamed digest");
    check(guards, "guard bytes around the digest");
    check(len == 0 || memcmp(in + off, msg, len) == 0, "message unchanged");
    free(in);
    free(out);
}

static void record_h(char **tok, int ntok)
{
    size_t outlen, klen, plen, mlen, dlen;
    unsigned char *key, *pers, *msg, *dig, *out;
    F(ctx) ctx;
    int k;
    unsigned off;
    if (ntok != 6) { check(0, "malformed H line"); return; }
    outlen = strtoul(tok[1], NULL, 10);
    key = unhex(tok[2], &klen);
    pers = unhex(tok[3], &plen);
    msg = unhex(tok[4], &mlen);
    dig = unhex(tok[5], &dlen);
    out = malloc(outlen + 8);
    if (!out) exit(2);
    check(dlen == outlen, "digest length matches outlen");
    if (klen == 0 && plen == 0) {
        check(F(hash)(msg, mlen, out, outlen) == 0 && memcmp(out, dig, outlen) == 0, "hash one-shot");
        check(F(init)(&ctx, outlen) == 0, "init");
        stream(&ctx, msg, mlen, dig, outlen, 0, 0);
    }
    if (plen == 0) {
        check(F(mac)(klen ? key : NULL, klen, msg, mlen, out, outlen) == 0 && memcmp(out, dig, outlen) == 0,
              "mac one-shot");
    }
    for (k = 0; k < CHUNKINGS; k++)
        for (off = 0; off < 8; off += (k == CHUNKINGS - 2 ? 1 : 3)) {
            check(F(init_ex)(&ctx, outlen, klen ? key : NULL, klen, plen ? pers : NULL, plen) == 0, "init_ex");
            stream(&ctx, msg, mlen, dig, outlen, k, off);
        }
    free(key); free(pers); free(msg); free(dig); free(out);
}

/* Bit-granular message and UBI arguments: B records. */
static void stream_bits(F(ctx) *ctx, const unsigned char *msg, size_t nbits, const unsigned char *want,
                        size_t outlen, int k, unsigned off)
{
    size_t len = (nbits + 7) / 8, whole = nbits / 8, pos = 0, i;
    unsigned char *in = malloc(len + 8), *out = malloc(outlen + 2 * GUARD + 8);
    unsigned long long seed = line_no * 131ULL + (unsigned long long)k;
    int guards = 1, ok = 1;
    if (!in || !out) exit(2);
    memcpy(in + off, msg, len);
    memset(out, 0xA5, outlen + 2 * GUARD + 8);
    if (k == CHUNKINGS - 1) {
        ok &= F(update_bits)(ctx, in + off, nbits) == 0;
    } else {
        while (pos < whole) {
            size_t c = chunk(k, &seed);
            if (c > whole - pos) c = whole - pos;
            if (k % 2)
                F(update)(ctx, in + off + pos, c);
            else
                ok &= F(update_bits)(ctx, in + off + pos, 8 * c) == 0;
            pos += c;
        }
        ok &= F(update_bits)(ctx, in + off + whole, nbits % 8) == 0;
    }
    if (nbits % 8) {                  /* the message has ended: nothing more goes in */
        ok &= F(update_bits)(ctx, in + off, 8) != 0;
        ok &= F(update_bits)(ctx, in + off, 1) != 0;
        ok &= F(update_bits)(ctx, in + off, 0) != 0;
        F(update)(ctx, in + off, len);
    }
    check(ok, "update_bits results");
    F(final)(ctx, out + GUARD + off);
    for (i = 0; i < GUARD + off; i++) guards &= out[i] == 0xA5;
    for (i = GUARD + off + outlen; i < outlen + 2 * GUARD + 8; i++) guards &= out[i] == 0xA5;
    check(memcmp(out + GUARD + off, want, outlen) == 0, "streamed digest (bits)");
    check(guards, "guard bytes around the digest");
    check(len == 0 || memcmp(in + off, msg, len) == 0, "message unchanged");
    free(in);
    free(out);
}

static void record_b(char **tok, int ntok)
{
    size_t outlen, nbits, mlen, dlen, lens[5];
    unsigned char *arg[5], *msg, *dig, *out;
    F(ctx) ctx;
    F(params) p;
    int k, i, others = 0;
    unsigned off;
    if (ntok != 10) { check(0, "malformed B line"); return; }
    outlen = strtoul(tok[1], NULL, 10);
    nbits = strtoul(tok[2], NULL, 10);
    for (i = 0; i < 5; i++)
        arg[i] = unhex(tok[3 + i], &lens[i]);
    msg = unhex(tok[8], &mlen);
    dig = unhex(tok[9], &dlen);
    out = malloc(outlen + 8);
    if (!out) exit(2);
    check(dlen == outlen && mlen == (nbits + 7) / 8, "digest and message lengths");
    for (i = 2; i < 5; i++)
        others |= lens[i] != 0;
    if (lens[0] == 0 && lens[1] == 0 && !others)
        check(F(hash_bits)(msg, nbits, out, outlen) == 0 && memcmp(out, dig, outlen) == 0, "hash_bits one-shot");
    if (lens[1] == 0 && !others)
        check(F(mac_bits)(lens[0] ? arg[0] : NULL, lens[0], msg, nbits, out, outlen) == 0
              && memcmp(out, dig, outlen) == 0, "mac_bits one-shot");
    memset(&p, 0, sizeof p);
    p.key = lens[0] ? arg[0] : NULL, p.key_len = lens[0];
    p.pers = lens[1] ? arg[1] : NULL, p.pers_len = lens[1];
    p.pubkey = lens[2] ? arg[2] : NULL, p.pubkey_len = lens[2];
    p.keyid = lens[3] ? arg[3] : NULL, p.keyid_len = lens[3];
    p.nonce = lens[4] ? arg[4] : NULL, p.nonce_len = lens[4];
    for (k = 0; k < CHUNKINGS; k++)
        for (off = 0; off < 8; off += 3) {
            if (!others && (k + off) % 2) {
                check(F(init_ex)(&ctx, outlen, p.key, p.key_len, p.pers, p.pers_len) == 0, "init_ex");
            } else {
                check(F(init_params)(&ctx, outlen, (k == 0 && !others && !lens[0] && !lens[1]) ? NULL : &p) == 0,
                      "init_params");
            }
            stream_bits(&ctx, msg, nbits, dig, outlen, k, off);
        }
    for (i = 0; i < 5; i++)
        free(arg[i]);
    free(msg); free(dig); free(out);
}

static void record_t(char **tok, int ntok)
{
    size_t outlen, mlen, dlen;
    unsigned leaf, fan, height, off;
    unsigned char *msg, *dig;
    F(ctx) ctx;
    int k;
    if (ntok != 7) { check(0, "malformed T line"); return; }
    outlen = strtoul(tok[1], NULL, 10);
    leaf = (unsigned)strtoul(tok[2], NULL, 10);
    fan = (unsigned)strtoul(tok[3], NULL, 10);
    height = (unsigned)strtoul(tok[4], NULL, 10);
    msg = unhex(tok[5], &mlen);
    dig = unhex(tok[6], &dlen);
    check(dlen == outlen, "digest length matches outlen");
    for (k = 0; k < CHUNKINGS; k++)
        for (off = 0; off < 8; off += 5) {
            check(F(init_tree)(&ctx, outlen, leaf, fan, height) == 0, "init_tree");
            stream(&ctx, msg, mlen, dig, outlen, k, off);
        }
    free(msg);
    free(dig);
}

static void record_m(char **tok, int ntok)
{
    size_t outlen = strtoul(tok[1], NULL, 10), n = strtoul(tok[2], NULL, 10), i, dlen;
    const unsigned char **msgs;
    unsigned char **bufs, *outs, *want;
    size_t *lens;
    int guards = 1;
    if ((size_t)ntok != 3 + 2 * n) { check(0, "malformed M line"); return; }
    msgs = malloc((n + 1) * sizeof *msgs);
    bufs = malloc((n + 1) * sizeof *bufs);
    lens = malloc((n + 1) * sizeof *lens);
    outs = malloc(n * outlen + 2 * GUARD + 1);
    want = malloc(n * outlen + 1);
    if (!msgs || !bufs || !lens || !outs || !want) exit(2);
    for (i = 0; i < n; i++) {
        size_t len;
        unsigned char *m = unhex(tok[3 + 2 * i], &len), *d = unhex(tok[4 + 2 * i], &dlen);
        bufs[i] = malloc(len + 8);                 /* each message at its own misalignment */
        if (!bufs[i]) exit(2);
        memcpy(bufs[i] + i % 8, m, len);
        msgs[i] = bufs[i] + i % 8;
        lens[i] = len;
        check(dlen == outlen, "digest length matches outlen");
        memcpy(want + i * outlen, d, outlen);
        free(m);
        free(d);
    }
    memset(outs, 0xA5, n * outlen + 2 * GUARD + 1);
    check(F(hash_many)(msgs, lens, n, outs + GUARD + 1, outlen) == 0, "hash_many result");
    check(n == 0 || memcmp(outs + GUARD + 1, want, n * outlen) == 0, "hash_many digests");
    for (i = 0; i < GUARD + 1; i++) guards &= outs[i] == 0xA5;
    for (i = GUARD + 1 + n * outlen; i < n * outlen + 2 * GUARD + 1; i++) guards &= outs[i] == 0xA5;
    check(guards, "hash_many guard bytes");
    for (i = 0; i < n; i++) free(bufs[i]);
    free(msgs); free(bufs); free(lens); free(outs); free(want);
}

static void record_e(void)
{
    F(ctx) ctx;
    unsigned char m[1] = { 0 }, out[4];
    const unsigned char *msgs[1];
    size_t lens[1] = { 1 };
    msgs[0] = m;
    check(F(init)(&ctx, 0) != 0, "init with outlen 0 fails");
    check(F(init_ex)(&ctx, 0, m, 1, NULL, 0) != 0, "init_ex with outlen 0 fails");
    check(F(init_tree)(&ctx, 0, 1, 1, 2) != 0, "init_tree with outlen 0 fails");
    check(F(init_tree)(&ctx, 32, 0, 1, 2) != 0, "init_tree with leaf 0 fails");
    check(F(init_tree)(&ctx, 32, 1, 0, 2) != 0, "init_tree with fan 0 fails");
    check(F(init_tree)(&ctx, 32, 1, 1, 1) != 0, "init_tree with height 1 fails");
    check(F(init_tree)(&ctx, 32, 1, 1, 256) != 0, "init_tree with height 256 fails");
    check(F(hash)(m, 1, out, 0) != 0, "hash with outlen 0 fails");
    check(F(mac)(m, 1, m, 1, out, 0) != 0, "mac with outlen 0 fails");
    check(F(hash_many)(msgs, lens, 1, out, 0) != 0, "hash_many with outlen 0 fails");
    check(F(hash_bits)(m, 3, out, 0) != 0, "hash_bits with outlen 0 fails");
    check(F(mac_bits)(m, 1, m, 3, out, 0) != 0, "mac_bits with outlen 0 fails");
    check(F(init_params)(&ctx, 0, NULL) != 0, "init_params with outlen 0 fails");
    {                                 /* tree hashing takes whole bytes: a partial byte is refused */
        unsigned char z[2] = { 0, 0 }, want[4], got[4];
        int ok = F(init_tree)(&ctx, 4, 1, 1, 2) == 0;
        ok &= F(update_bits)(&ctx, z, 8) == 0;
        ok &= F(update_bits)(&ctx, z, 7) != 0;
        ok &= F(update_bits)(&ctx, z + 1, 8) == 0;
        F(final)(&ctx, got);
        ok &= F(init_tree)(&ctx, 4, 1, 1, 2) == 0;
        F(update)(&ctx, z, 2);
        F(final)(&ctx, want);
        check(ok && memcmp(got, want, 4) == 0, "update_bits on a tree context: whole bytes, a partial byte refused, nothing changed");
    }
    if (sizeof(size_t) >= 8)
        check(F(init)(&ctx, (size_t)-1) != 0, "init with an outlen of 2^64-1 bytes fails");
}

int main(int argc, char **argv)
{
    FILE *f;
    char *line;
    if (argc != 2) {
        printf("usage: %s vectors.txt\n", argv[0]);
        return 2;
    }
    f = fopen(argv[1], "r");
    if (!f) {
        printf("cannot open %s\n", argv[1]);
        return 2;
    }
    while ((line = read_line(f)) != NULL) {
        char **tok;
        int ntok = 0, cap = 8;
        char *p = line;
        line_no++;
        tok = malloc(cap * sizeof *tok);
        if (!tok) exit(2);
        while (*p) {
            while (*p == ' ') *p++ = 0;
            if (!*p) break;
            if (ntok == cap) {
                cap *= 2;
                tok = realloc(tok, cap * sizeof *tok);
                if (!tok) exit(2);
            }
            tok[ntok++] = p;
            while (*p && *p != ' ') p++;
        }
        if (ntok && tok[0][0] != '#') {
            switch (tok[0][0]) {
            case 'H': record_h(tok, ntok); break;
            case 'T': record_t(tok, ntok); break;
            case 'M': record_m(tok, ntok); break;
            case 'B': record_b(tok, ntok); break;
            case 'E': record_e(); break;
            default: check(0, "unknown record kind");
            }
        }
        free(tok);
        free(line);
    }
    fclose(f);
    printf("harness: %lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
