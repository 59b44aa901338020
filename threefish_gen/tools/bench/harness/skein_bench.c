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
 * HAVE_PAIRED (-DTFA_HEADER/-DTFA_PREFIX: Threefish-512 c-simd avx512 lanes fly/full/i1,
 * -DTFB_HEADER/-DTFB_PREFIX: the same in avx2): the paired rounds (below) after the rows.
 * Run: skein_bench [--quick | --check-only | --paired [--quick]]   (--check-only: the CHECK
 * lines, no timing; --paired: the paired rounds only)
 * Output lines (tab separated): CLOCK ghz | ROW name bytes cpb min | SAMPLE name bytes k cpb (every
 * sample, for the spread tools/bench/skein_rows.py shows) | PAIR name bytes round cpb (a paired
 * round's sample) | CHECK ok|FAIL what | INFO text
 *
 * Paired rounds (issue 27: Skein at the Threefish rate): round k times, one after the other,
 * hash_many of 8 x 64 KiB and the Threefish-512 lanes bulk row (encrypt_blocks over 4 KiB, as
 * harness/bench.c) of the same ISA, then tree hashing of 1 MiB on that ISA; per ISA (avx512,
 * avx2) the CPU has.  tools/bench/skein_rows.py takes the ratio of each Skein row to the
 * Threefish row per round (paired.py), so load that hits a round hits both rows of the ratio.
 * These samples are timed on thread CPU time (descheduled time is not counted: on a shared
 * machine it would fall on one row of a pair) with one clock estimate for the run.
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
#ifdef HAVE_PAIRED
#include TFA_HEADER
#include TFB_HEADER
#define TFA(n) CAT(TFA_PREFIX, n)
#define TFB(n) CAT(TFB_PREFIX, n)
#endif

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

#ifdef HAVE_PAIRED
/* ---- paired rounds (see the header comment) */
#define PAIR_BULK 4096
#define PAIR_ROWS 6
typedef void (*blocks_fn)(const uint8_t *, const uint8_t *, const uint8_t *, uint8_t *, size_t);
static uint8_t pkey[64], ptweaks[(PAIR_BULK / 64) * 16], pin[PAIR_BULK], pout[PAIR_BULK];
static blocks_fn pair_tf;
static void op_tf_bulk(size_t len)
{
    (void)len;
    pair_tf(pkey, ptweaks, pin, pout, PAIR_BULK / 64);
}
struct pair_row {
    const char *name;
    const char *isa;      /* $THREEFISH_GEN_ISA while it runs (the Skein dispatcher reads it per call) */
    op_fn op;
    blocks_fn tf;         /* op_tf_bulk's kernel */
    size_t len, bytes;
};

/* Thread CPU time in ns: the paired rounds share this machine with other processes, and time
   spent descheduled (which wall time counts) would land in one row of a pair, not both. */
static uint64_t cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The core clock (GHz) on thread CPU time: the best of 5 add chains of 2^20 x 32 cycles (0 where
   cycles.h has no probe: then the figures are ns/B). */
static double pair_ghz(void)
{
    double best = 0;
#ifdef BENCH_HAVE_CLOCK_PROBE
    int i;
    for (i = 0; i < 5; i++) {
        uint64_t t0 = cpu_now_ns(), t1;
        double g;
        bench_add_chain(1u << 20);
        t1 = cpu_now_ns();
        g = (double)(1u << 20) * BENCH_ADDS_PER_ITER / (double)(t1 - t0 ? t1 - t0 : 1);
        best = g > best ? g : best;
    }
#endif
    return best;
}

/* One sample of op(len): ~ns of thread CPU time of calls (3 ms; 1 ms with --quick), cycles (ghz:
   one clock for the whole run, so a pair's ratio is a ratio of times) per byte of `bytes` per call.
   The clock (a system call) is read once per batch of ~100 us of calls. */
static double one_sample(op_fn op, size_t len, size_t bytes, double ns, double ghz)
{
    uint64_t t0 = cpu_now_ns(), t1;
    unsigned long calls = 0, batch, b;
    op(len);
    t1 = cpu_now_ns();
    batch = t1 - t0 >= 100000 ? 1 : (unsigned long)(100000 / (t1 - t0 ? t1 - t0 : 1));
    t0 = cpu_now_ns();
    do {
        for (b = 0; b < batch; b++)
            op(len);
        calls += batch;
        t1 = cpu_now_ns();
    } while ((double)(t1 - t0) < ns);
    return (double)(t1 - t0) / ((double)calls * (double)bytes) * (ghz > 0 ? ghz : 1.0);
}

/* The three rows of one ISA (hash_many, its Threefish lanes row, tree) from rows[n]; the new n. */
static int isa_rows(struct pair_row *rows, int n, const char *isa, blocks_fn tf)
{
    static char names[PAIR_ROWS / 3][3][96];
    char (*nm)[96] = names[n / 3];
    snprintf(nm[0], sizeof nm[0], "skein-512-512 c-simd hash_many %dx %s", MANY, isa);
    snprintf(nm[1], sizeof nm[1], "threefish-512 c-simd %s lanes fly/full/i1 bulk", isa);
    snprintf(nm[2], sizeof nm[2], "skein-512-512 c-simd tree (Yl 4, Yf 8, Ym 255) %s", isa);
    rows[n++] = (struct pair_row){nm[0], isa, op_many, NULL, 65536, MANY * 65536};
    rows[n++] = (struct pair_row){nm[1], NULL, op_tf_bulk, tf, 0, PAIR_BULK};
    rows[n++] = (struct pair_row){nm[2], isa, op_tree, NULL, sizeof bigbuf, sizeof bigbuf};
    return n;
}

static void paired_rounds(int rounds)
{
    struct pair_row rows[PAIR_ROWS];
    int n = 0, k, i, w;
    size_t j;
    double ghz = pair_ghz();
    for (j = 0; j < sizeof pin; j++)
        pin[j] = (uint8_t)(j * 5 + 1);
    for (j = 0; j < sizeof ptweaks; j++)
        ptweaks[j] = (uint8_t)j;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
        n = isa_rows(rows, n, "avx512", TFA(encrypt_blocks));
    else
        printf("INFO\tpaired avx512 rows skipped: the CPU lacks avx512f/avx512vl\n");
    if (__builtin_cpu_supports("avx2"))
        n = isa_rows(rows, n, "avx2", TFB(encrypt_blocks));
    else
        printf("INFO\tpaired avx2 rows skipped: the CPU lacks avx2\n");
    for (k = -1; k < rounds; k++) {      /* round -1: warm-up, not reported */
        for (i = 0; i < n; i++) {
            double cpb;
            if (rows[i].isa)
                setenv("THREEFISH_GEN_ISA", rows[i].isa, 1);
            else
                unsetenv("THREEFISH_GEN_ISA");
            pair_tf = rows[i].tf;
            for (w = 0; w < 2; w++)
                rows[i].op(rows[i].len);
            cpb = one_sample(rows[i].op, rows[i].len, rows[i].bytes, sample_ns < 3e6 ? 1e6 : 3e6, ghz);
            if (k >= 0)
                printf("PAIR\t%s\t%zu\t%d\t%.4f\n", rows[i].name, rows[i].bytes, k, cpb);
        }
    }
    unsetenv("THREEFISH_GEN_ISA");
    printf("INFO\tpaired rounds: %d rounds of %d rows, thread CPU time, clock %.3f GHz (add chain on thread CPU "
           "time)\n", rounds, n, ghz);
    sink = outbuf[0] ^ pout[0];
}
#endif

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
    int paired_only = argc > 1 && strcmp(argv[1], "--paired") == 0;
    int quick = (argc > 1 && strcmp(argv[1], "--quick") == 0) || (argc > 2 && strcmp(argv[2], "--quick") == 0);
    if (quick) {
        sample_ns = 5e5;
        nsamples = 3;
        npaired = 9;
    }
    for (i = 0; i < MANY; i++)
        for (j = 0; j < MAXLEN; j++)
            msgbuf[i][j] = (uint8_t)(j * 7 + i);
    for (j = 0; j < sizeof bigbuf; j++)
        bigbuf[j] = (uint8_t)(j * 13);
    printf("CLOCK\t%.4f\n", bench_ghz_once(2000000));
    if (paired_only) {
#ifdef HAVE_PAIRED
        paired_rounds(quick ? 5 : 21);
#else
        printf("INFO\tno paired rounds: built without HAVE_PAIRED\n");
#endif
        return 0;
    }
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
#ifdef HAVE_PAIRED
    paired_rounds(quick ? 5 : 21);
#endif
    return 0;
}
