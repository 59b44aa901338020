/*
 * skein_bench.c -- Skein-512-512 of the generated C (scalar Phash, SIMD hash_many) beside
 * Botan 2's Skein-512 and the generated scalar Threefish-512 chained, in cycles/byte.
 *
 * Build (tools/bench/skein_rows.py does it):
 *   gcc -std=c11 -O2 -DSK_HEADER='"sk.h"' -DSK_PREFIX=sk_ -DSKM_HEADER='"skm.h"' -DSKM_PREFIX=skm_
 *       -DTF_HEADER='"tf.h"' -DTF_PREFIX=tf_ [-DHAVE_BOTAN] [-DHAVE_RUST_SKEIN] -c harness/skein_bench.c
 *   g++ skein_bench.o sk.o skm.o tf.o [peers_botan_skein.o -lbotan-2]
 *       [libtfgen_bench_rust.a <its native libs>] -o skein_bench
 * HAVE_RUST_SKEIN: the rendered Rust Skein-512 crate through the shim of tools/bench/rust_rows.py
 * (bench_rust_skein512_hash = Skein512::hash), alternated sample by sample with the scalar C hash
 * row of the same message size (row_pair: 21 samples each, 9 with --quick), so their ratio is paired.
 * Run: skein_bench [--quick | --check-only]   (--check-only: the CHECK lines, no timing)
 * Output lines (tab separated): CLOCK ghz | ROW name bytes cpb min | SAMPLE name bytes k cpb (every
 * sample, for the spread tools/bench/skein_rows.py shows) | CHECK ok|FAIL what | INFO text
 *
 * Method as harness/bench.c: the core clock is estimated around every sample from a chain of
 * dependent adds (cycles.h), a sample whose two estimates disagree by more than 2% retaken (4 times at most); a sample repeats the operation for ~3 ms (0.5 ms with --quick);
 * the figure is the median of the samples (7; 3 with --quick), min the least.  The rows are timed
 * one after the other (not alternated like harness/bench.c's): their ratios are of medians --
 * except the Rust and the C scalar hash, alternated (row_pair; SAMPLE k of both is round k).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycles.h"
#include SK_HEADER
#include SKM_HEADER
#include TF_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define SK(n) CAT(SK_PREFIX, n)
#define SKM(n) CAT(SKM_PREFIX, n)
#define TF(n) CAT(TF_PREFIX, n)

#ifdef HAVE_BOTAN
int bench_botan_skein512_init(char *msg, size_t msg_len);
const char *bench_botan_skein512_version(void);
void bench_botan_skein512(const uint8_t *msg, size_t len, uint8_t *out);
#endif

#define MAXLEN 65536
#define MANY 8
static uint8_t msgbuf[MANY][MAXLEN], outbuf[MANY * 64], chain[64];
static volatile uint8_t sink;
#ifdef HAVE_RUST_SKEIN
void bench_rust_skein512_hash(const uint8_t *msg, size_t len, uint8_t *out, size_t out_len);
#endif
static double sample_ns = 3e6;
static int nsamples = 7;
static int npaired = 21;            /* samples of each of two alternated rows (row_pair) */
#define MAXSAMPLES 32

typedef void (*op_fn)(size_t len);

#ifdef HAVE_BOTAN
static int have_botan;
#endif
static void op_sk(size_t len) { SK(hash)(msgbuf[0], len, outbuf, 64); }
#ifdef HAVE_BOTAN
static void op_botan(size_t len) { bench_botan_skein512(msgbuf[0], len, outbuf); }
#endif
static void op_many(size_t len)
{
    const uint8_t *m[MANY];
    size_t l[MANY];
    int i;
    for (i = 0; i < MANY; i++) {
        m[i] = msgbuf[i];
        l[i] = len;
    }
    SKM(hash_many)(m, l, MANY, outbuf, 64);
}
static uint8_t bigbuf[1 << 20];
static void op_tree(size_t len)
{
    SKM(ctx) ctx;
    SKM(init_tree)(&ctx, 64, 4, 8, 255);        /* leaves of 64 << 4 = 1 KiB, fan-out 256 */
    SKM(update)(&ctx, bigbuf, len);
    SKM(final)(&ctx, outbuf);
}
static void op_sk_big(size_t len) { SK(hash)(bigbuf, len, outbuf, 64); }
#ifdef HAVE_RUST_SKEIN
static void op_rust(size_t len) { bench_rust_skein512_hash(msgbuf[0], len, outbuf, 64); }
static void op_rust_big(size_t len) { bench_rust_skein512_hash(bigbuf, len, outbuf, 64); }
#endif
#ifdef HAVE_BOTAN
static void op_botan_big(size_t len) { bench_botan_skein512(bigbuf, len, outbuf); }
#endif
static void op_tf_chained(size_t len)
{
    static const uint8_t key[64], tweak[16];
    size_t i;
    for (i = 0; i < len; i += 64)
        TF(encrypt)(key, tweak, chain, chain);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A sample whose clock probes before and after disagree by more than this is retaken, at most
 * MAX_RETAKES times (harness/bench.c's CLOCK_TOLERANCE: a probe preempted by other work reads a
 * wrong clock, and its sample a wrong cycles/byte). */
#define CLOCK_TOLERANCE 0.02
#define MAX_RETAKES 4

/* One sample: cycles/byte of op(len) repeated for sample_ns, `bytes` bytes per call; *ghz: the clock. */
static double sample(op_fn op, size_t len, size_t bytes, double *ghz_out)
{
    int tries;
    for (tries = 0;; tries++) {
        double g0 = bench_ghz_once(200000), g1, ghz;
        uint64_t t0 = bench_now_ns(), t1;
        unsigned long calls = 0;
        do {
            op(len);
            calls++;
            t1 = bench_now_ns();
        } while ((double)(t1 - t0) < sample_ns);
        g1 = bench_ghz_once(200000);
        ghz = (g0 + g1) / 2;
        if (ghz > 0 && (g0 > g1 ? g0 - g1 : g1 - g0) > CLOCK_TOLERANCE * ghz && tries < MAX_RETAKES)
            continue;
        *ghz_out = ghz;
        return (double)(t1 - t0) / ((double)calls * (double)bytes) * (ghz > 0 ? ghz : 1.0);
    }
}

static void report(const char *name, size_t len, double *cpb, int n, double ghz_sum)
{
    sink = outbuf[0] ^ chain[0];
    qsort(cpb, (size_t)n, sizeof cpb[0], cmp);
    printf("ROW\t%s\t%zu\t%.3f\t%.3f\t%.3f\n", name, len, cpb[n / 2], cpb[0], ghz_sum / n);
}

/* cycles/byte of op(len) processing `bytes` bytes per call. */
static void row(const char *name, op_fn op, size_t len, size_t bytes)
{
    double cpb[MAXSAMPLES], ghz_sum = 0, ghz;
    int s;
    for (s = 0; s < 2; s++)
        op(len);                                 /* warm-up */
    for (s = 0; s < nsamples; s++) {
        cpb[s] = sample(op, len, bytes, &ghz);
        ghz_sum += ghz;
        printf("SAMPLE\t%s\t%zu\t%d\t%.4f\n", name, len, s, cpb[s]);
    }
    report(name, len, cpb, nsamples, ghz_sum);
}

#ifdef HAVE_RUST_SKEIN
/* Two rows alternated sample by sample (harness/bench.c's method): round k times sample k of a,
 * then of b, so the two samples of a round saw the same load and their ratio
 * (tools/bench/paired.py) cancels it.  npaired samples each. */
static void row_pair(const char *name_a, op_fn a, const char *name_b, op_fn b, size_t len, size_t bytes)
{
    double ca[MAXSAMPLES], cb[MAXSAMPLES], ga = 0, gb = 0, ghz;
    int s;
    for (s = 0; s < 2; s++) {
        a(len);                                  /* warm-up */
        b(len);
    }
    for (s = 0; s < npaired; s++) {
        ca[s] = sample(a, len, bytes, &ghz);
        ga += ghz;
        cb[s] = sample(b, len, bytes, &ghz);
        gb += ghz;
        printf("SAMPLE\t%s\t%zu\t%d\t%.4f\n", name_a, len, s, ca[s]);
        printf("SAMPLE\t%s\t%zu\t%d\t%.4f\n", name_b, len, s, cb[s]);
    }
    report(name_a, len, ca, npaired, ga);
    report(name_b, len, cb, npaired, gb);
}
#endif

int main(int argc, char **argv)
{
    static const size_t lens[] = { 64, 1024, 65536 };
    char name[128];
    size_t i, j;
    uint8_t want[64];
    int check_only = argc > 1 && strcmp(argv[1], "--check-only") == 0;
    if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
        sample_ns = 5e5;
        nsamples = 3;
        npaired = 9;
    }
    for (i = 0; i < MANY; i++)
        for (j = 0; j < MAXLEN; j++)
            msgbuf[i][j] = (uint8_t)(j * 7 + i);
    printf("CLOCK\t%.4f\n", bench_ghz_once(2000000));
#ifdef HAVE_BOTAN
    {
        char msg[200];
        have_botan = bench_botan_skein512_init(msg, sizeof msg) == 0;
        if (have_botan)
            printf("INFO\tBotan %s\n", bench_botan_skein512_version());
        else
            printf("INFO\tBotan Skein-512 unavailable: %s\n", msg);
    }
#endif
    /* agreement of what is timed: hash_many (SIMD) and Botan against the scalar hash */
    for (i = 0; i < 3; i++) {
        op_many(lens[i]);
        for (j = 0; j < MANY; j++) {
            SK(hash)(msgbuf[j], lens[i], want, 64);
            if (memcmp(want, outbuf + 64 * j, 64) != 0)
                printf("CHECK\tFAIL\thash_many message %zu of %zu bytes\n", j, lens[i]);
        }
#ifdef HAVE_BOTAN
        if (!have_botan)
            continue;
        op_botan(lens[i]);
        SK(hash)(msgbuf[0], lens[i], want, 64);
        if (memcmp(want, outbuf, 64) != 0)
            printf("CHECK\tFAIL\tBotan differs on %zu bytes\n", lens[i]);
#endif
    }
#ifdef HAVE_RUST_SKEIN
    for (i = 0; i < 3; i++) {        /* the Rust crate's digest == the C render's */
        op_rust(lens[i]);
        SK(hash)(msgbuf[0], lens[i], want, 64);
        printf("CHECK\t%s\tRust Skein-512-512 %s the C render on %zu bytes\n",
               memcmp(want, outbuf, 64) ? "FAIL" : "ok", memcmp(want, outbuf, 64) ? "differs from" : "equals",
               lens[i]);
    }
#endif
    printf("CHECK\tdone\n");
    if (check_only)
        return 0;
    for (i = 0; i < 3; i++) {
#ifdef HAVE_RUST_SKEIN
        row_pair("skein-512-512 c scalar (hash)", op_sk, "skein-512-512 rust scalar (hash)", op_rust, lens[i],
                 lens[i]);
#else
        row("skein-512-512 c scalar (hash)", op_sk, lens[i], lens[i]);
#endif
#ifdef HAVE_BOTAN
        if (have_botan)
            row("skein-512-512 Botan", op_botan, lens[i], lens[i]);
#endif
        setenv("THREEFISH_GEN_ISA", "scalar", 1);
        snprintf(name, sizeof name, "skein-512-512 c hash_many %dx scalar", MANY);
        row(name, op_many, lens[i], MANY * lens[i]);
        setenv("THREEFISH_GEN_ISA", "avx2", 1);
        snprintf(name, sizeof name, "skein-512-512 c-simd hash_many %dx avx2 (if the CPU has it)", MANY);
        row(name, op_many, lens[i], MANY * lens[i]);
        unsetenv("THREEFISH_GEN_ISA");
        snprintf(name, sizeof name, "skein-512-512 c-simd hash_many %dx best path", MANY);
        row(name, op_many, lens[i], MANY * lens[i]);
    }
    row("threefish-512 c chained (encrypt, input = previous output)", op_tf_chained, 65536, 65536);
    for (j = 0; j < sizeof bigbuf; j++)
        bigbuf[j] = (uint8_t)(j * 13);
#ifdef HAVE_RUST_SKEIN
    row_pair("skein-512-512 c scalar (hash)", op_sk_big, "skein-512-512 rust scalar (hash)", op_rust_big,
             sizeof bigbuf, sizeof bigbuf);
#else
    row("skein-512-512 c scalar (hash)", op_sk_big, sizeof bigbuf, sizeof bigbuf);
#endif
#ifdef HAVE_BOTAN
    if (have_botan)
        row("skein-512-512 Botan", op_botan_big, sizeof bigbuf, sizeof bigbuf);
#endif
    unsetenv("THREEFISH_GEN_ISA");
    row("skein-512-512 c-simd tree (Yl 4, Yf 8, Ym 255) best path", op_tree, sizeof bigbuf, sizeof bigbuf);
    setenv("THREEFISH_GEN_ISA", "avx2", 1);
    row("skein-512-512 c-simd tree (Yl 4, Yf 8, Ym 255) avx2 (if the CPU has it)", op_tree, sizeof bigbuf,
        sizeof bigbuf);
    setenv("THREEFISH_GEN_ISA", "scalar", 1);
    row("skein-512-512 c tree (Yl 4, Yf 8, Ym 255) scalar", op_tree, sizeof bigbuf, sizeof bigbuf);
    unsetenv("THREEFISH_GEN_ISA");
    return 0;
}
