/*
 * bench.c -- benchmark harness for generated Threefish variants and peer libraries.
 *
 * ---------------------------------------------------------------------------
 * VARIANT LIST
 * ---------------------------------------------------------------------------
 * The variants are chosen at compile time by a generated include file passed as
 *     -DBENCH_VARIANTS=\"/abs/path/variants.inc\"        (shell quoting; see BUILD)
 * containing only lines of the form (comments allowed, nothing else needed)
 *     BENCH_VARIANT("scalar-c gcc", "tf512_v13_c_", 64, tf512_v13_c_encrypt, tf512_v13_c_encrypt_blocks)
 * i.e. (row name, prefix string, block bytes 32/64/128, single-block encrypt,
 * multi-block encrypt).  bench.c includes the file twice: the first pass
 * declares the two prototypes of every line itself, so the .inc file needs no
 * #include of the generated headers; the second pass builds the row table.
 * Without BENCH_VARIANTS only peers are measured.
 *
 * Function shapes (the public contract of generated code, words little-endian):
 *     void Pencrypt(const uint8_t key[B], const uint8_t tweak[16], const uint8_t in[B], uint8_t out[B]);
 *     void Pencrypt_blocks(const uint8_t key[B], const uint8_t *tweaks, const uint8_t *in,
 *                          uint8_t *out, size_t n);          -- tweaks: n*16 bytes, one per block
 *
 * PEERS (optional): -DHAVE_BOTAN  + harness/peers_botan.cpp    + -lbotan-2
 *                   -DHAVE_CRYPTOPP + harness/peers_cryptopp.cpp + -lcryptopp
 * They export functions of the same shape (see peers.h) and go through the
 * same checks and measurement loop as the variants.
 *
 * ---------------------------------------------------------------------------
 * BUILD (argv lists; no shell or make needed; run from the repository root)
 * ---------------------------------------------------------------------------
 *   gcc -std=c11 -O2 -Wall -Wextra -DBENCH_VARIANTS="/abs/path/variants.inc" \
 *       [-DHAVE_BOTAN] [-DHAVE_CRYPTOPP] -c harness/bench.c -o bench.o
 *       The define is one argv element with the double quotes inside it.  Use
 *       an absolute path: a relative one is looked up next to bench.c and in
 *       -I directories, not in the current directory.
 *   g++ -std=c++17 -O2 -Wall -Wextra -isystem /usr/include/botan-2 -c harness/peers_botan.cpp -o peers_botan.o
 *   g++ -std=c++17 -O2 -Wall -Wextra -c harness/peers_cryptopp.cpp -o peers_cryptopp.o
 *   <each variant .c compiled with its own compiler/flags to an .o>
 *   g++ bench.o <variant .o files> [peers_botan.o -lbotan-2] [peers_cryptopp.o -lcryptopp] -o bench
 *       (link with gcc instead of g++ when no peer is used)
 *
 * ---------------------------------------------------------------------------
 * USAGE
 * ---------------------------------------------------------------------------
 *   bench [--samples K] [--quick] [--filter SUBSTR]... [--mode bulk|chained|both]
 *         [--cpu N] [--sample-ms MS] [--sequential] [--clock auto|perf|add-chain]
 *         [--check-only] [--list]
 *   --samples K    samples per row and mode (default 21, or env BENCH_SAMPLES)
 *   --quick        short run for tests: 5 samples of ~0.5 ms, short warm-up
 *   --filter S     only rows whose name or prefix contains S (repeatable: any match)
 *   --mode M       bulk, chained or both (default both)
 *   --cpu N        pin to CPU N (default: the lowest CPU the inherited affinity
 *                  allows, so `taskset -c 1 make bench` times on CPU 1); --cpu -1
 *                  leaves affinity alone
 *   --sample-ms X  target duration of one timed sample (default 3)
 *   --sequential   time all samples of a row before the next row (default: alternate, see METHOD)
 *   --clock C      perf: count core cycles with the hardware counter (perf_event_open; exit 2
 *                  where there is none); add-chain: the estimate of cycles.h; auto (default):
 *                  the counter where it works, else the estimate (CLOCKSRC says which)
 *   --check-only   run the correctness checks only
 *   --list         print the compiled-in rows and exit
 * Exit status: 0 ok; 2 usage error; 3 a generated variant failed its check
 * (a failing peer is reported with FAIL but does not change the status).
 *
 * ---------------------------------------------------------------------------
 * OUTPUT (stdout, one record per line, tab separated; parsers must ignore
 * unknown tags and lines starting with '#')
 * ---------------------------------------------------------------------------
 *   UNIT     cpb | ns/B              unit of the cpb columns (ns/B: no clock probe, non-x86)
 *   CPU      <model name>            from /proc/cpuinfo
 *   PIN      <cpu> | none <why>
 *   PEER     <lib> <version>         a peer library that initialised
 *   PEERFAIL <lib> <message>         a peer library that did not (its rows get FAIL)
 *   CHECK    <name> <bits> ok <version>     version matched by the all-zero vector: v1.1/v1.2/v1.3
 *   FAIL     <name> <bits> <reason>         row is not measured
 *   INFO     <name> <key>=<value>           e.g. provider=avx2 for Botan rows
 *   CLOCKSRC perf-cycles | add-chain | none   how cycles were obtained (none: ns/B)
 *   SAMPLE   <name> <bits> <bulk|chained> <round> <cpb> <GHz>   every accepted sample, in the
 *            order taken; samples of one round of different rows are the pairs of paired ratios
 *   ROW      <name> <bits> <bulk|chained> <cpb median> <cpb min> <GHz median>
 *   ROWSTAT  <name> <bits> <mode> <samples> <rejected> <GHz min> <GHz max> <cpb max> <reps/sample>
 *            <contention median>
 *   CLOCK    <GHz median over all probes>   (0 when no clock probe)
 *   CLOCKSTAT <GHz min> <GHz median> <GHz max> <number of probes> <contention median>
 *   "contention" = time of 3 independent add chains / time of 1 chain of the
 *   same length (cycles.h): ~1.00 on a core we have to ourselves; clearly
 *   above (say > 1.03) means another hardware thread (usually another VM on
 *   the host's SMT sibling) is eating execution slots, and throughput numbers
 *   are then lower than the clock alone explains -- compare runs with care.
 *
 * ---------------------------------------------------------------------------
 * METHOD
 * ---------------------------------------------------------------------------
 * - The process is pinned to one CPU and warmed up (clock probes for ~200 ms)
 *   before anything is timed, and every row is run for ~20 ms before its
 *   samples (this also calibrates the repetition count).
 * - Alternation: the rows of one block size and mode are timed together, in K
 *   rounds; round k takes sample k of every row, in the row order (A B A B ...
 *   for two rows).  Load from other processes that lasts longer than a round
 *   then hits every row of the round alike, and the ratio of two rows' samples
 *   of one round (tools/bench/paired.py) cancels it.  Every row is calibrated
 *   and warmed up first; --sequential restores the row-after-row order.
 * - bulk:    encrypt_blocks over a 4 KiB buffer (fits L1), every block with its
 *            own tweak, repeated so that one sample takes ~sample-ms.
 * - chained: single-block encrypt where each call's input is the previous
 *            call's output (ping-pong between two buffers, so in != out),
 *            same duration: this measures latency, not throughput.
 * - Cycles: the hardware cycle counter where perf_event_open gives one that
 *   counts (checked against an add chain; most VMs have none: CLOCKSRC says).
 *   Otherwise see cycles.h.  The core clock is probed (median of 5 short add-chain
 *   timings) immediately before and after every sample; the sample's clock is
 *   the mean of the two and cycles = elapsed_ns * GHz.  A sample whose two
 *   probes differ by more than 2% is discarded and retaken (counted in
 *   ROWSTAT), since the vCPU was evidently descheduled or re-clocked during
 *   it.  Reported figures are the median and the minimum over K samples.
 * - Limitation: the probe sees the clock of scalar integer code; a core that
 *   downclocks for wide vector code while the sample runs would be
 *   overestimated in cycles.  The per-row GHz column and CLOCKSTAT show how
 *   stable the clock was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "cycles.h"
#include "peers.h"

/* ------------------------------------------------------------------------ */
/* Row table                                                                 */
/* ------------------------------------------------------------------------ */

typedef void (*enc1_fn)(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out);
typedef void (*encn_fn)(const uint8_t *key, const uint8_t *tweaks, const uint8_t *in, uint8_t *out,
                        size_t n);

enum { SRC_VARIANT, SRC_BOTAN, SRC_CRYPTOPP };

typedef struct {
    const char *name;
    const char *prefix;
    unsigned bytes;                 /* block bytes: 32, 64 or 128 */
    enc1_fn enc1;
    encn_fn encn;
    const char *(*select)(void);    /* peers only: set up the library state for this row
                                       before checking/measuring it; returns a provider note */
    int source;                     /* SRC_* */
} row_t;

/* Pass 1: prototypes of the variant functions. */
#ifdef BENCH_VARIANTS
#define BENCH_VARIANT(name, prefix, bytes, enc1, encn)                                   \
    void enc1(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out); \
    void encn(const uint8_t *key, const uint8_t *tweaks, const uint8_t *in, uint8_t *out, size_t n);
#include BENCH_VARIANTS
#undef BENCH_VARIANT
#endif

/* Pass 2: the rows (variants first, then peers). */
static const row_t g_rows[] = {
#ifdef BENCH_VARIANTS
#define BENCH_VARIANT(name, prefix, bytes, enc1, encn) {name, prefix, bytes, enc1, encn, NULL, SRC_VARIANT},
#include BENCH_VARIANTS
#undef BENCH_VARIANT
#endif
#ifdef HAVE_BOTAN
    {"botan", "botan:Threefish-512", 64, bench_botan_tf512_encrypt, bench_botan_tf512_encrypt_blocks,
     bench_botan_select_default, SRC_BOTAN},
    {"botan no-avx2", "botan:Threefish-512", 64, bench_botan_tf512_encrypt,
     bench_botan_tf512_encrypt_blocks, bench_botan_select_no_avx2, SRC_BOTAN},
#endif
#ifdef HAVE_CRYPTOPP
    {"crypto++", "cryptopp:Threefish256", 32, bench_cryptopp_tf256_encrypt,
     bench_cryptopp_tf256_encrypt_blocks, NULL, SRC_CRYPTOPP},
    {"crypto++", "cryptopp:Threefish512", 64, bench_cryptopp_tf512_encrypt,
     bench_cryptopp_tf512_encrypt_blocks, NULL, SRC_CRYPTOPP},
    {"crypto++", "cryptopp:Threefish1024", 128, bench_cryptopp_tf1024_encrypt,
     bench_cryptopp_tf1024_encrypt_blocks, NULL, SRC_CRYPTOPP},
#endif
    {NULL, NULL, 0, NULL, NULL, NULL, SRC_VARIANT} /* sentinel (keeps the array non-empty) */
};
#define N_ROWS (sizeof g_rows / sizeof g_rows[0] - 1)   /* loops stop at the sentinel */

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

#define MAX_FILTERS 1024

static struct {
    int samples;
    double sample_ms;
    double warm_ms;          /* per-row warm-up */
    double start_warm_ms;    /* global warm-up before the first measurement */
    int bulk, chained;
    int cpu;
    int check_only, list;
    const char *filters[MAX_FILTERS];
    int n_filters;
    int sequential;          /* all samples of a row, then the next (default: alternated rounds) */
    int clock;               /* CLOCK_AUTO, CLOCK_PERF, CLOCK_ADDCHAIN */
} g_opt = {21, 3.0, 20.0, 200.0, 1, 1, -2 /* lowest allowed CPU */, 0, 0, {NULL}, 0, 0, 0};

enum { CLOCK_AUTO, CLOCK_PERF, CLOCK_ADDCHAIN };

static void usage(FILE *f)
{
    fprintf(f, "usage: bench [--samples K] [--quick] [--filter SUBSTR]... [--mode bulk|chained|both]\n"
               "             [--cpu N] [--sample-ms MS] [--sequential] [--clock auto|perf|add-chain]\n"
               "             [--check-only] [--list]\n");
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -1000000 || v > 1000000) return -1;
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    int samples_given = 0;   /* --samples wins over --quick, whatever the order */
    const char *env = getenv("BENCH_SAMPLES");
    if (env) samples_given = 1;
    if (env && parse_int(env, &g_opt.samples) != 0) {
        fprintf(stderr, "bench: bad BENCH_SAMPLES=%s\n", env);
        return -1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            if (!samples_given) g_opt.samples = 5;
            g_opt.sample_ms = 0.5;
            g_opt.warm_ms = 2.0;
            g_opt.start_warm_ms = 20.0;
        } else if (!strcmp(a, "--sequential")) {
            g_opt.sequential = 1;
        } else if (v && !strcmp(a, "--clock")) {
            if (!strcmp(v, "auto")) g_opt.clock = CLOCK_AUTO;
            else if (!strcmp(v, "perf")) g_opt.clock = CLOCK_PERF;
            else if (!strcmp(v, "add-chain")) g_opt.clock = CLOCK_ADDCHAIN;
            else return -1;
            i++;
        } else if (!strcmp(a, "--check-only")) {
            g_opt.check_only = 1;
        } else if (!strcmp(a, "--list")) {
            g_opt.list = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (v && !strcmp(a, "--samples")) {
            if (parse_int(v, &g_opt.samples) != 0) return -1;
            samples_given = 1;
            i++;
        } else if (v && !strcmp(a, "--cpu")) {
            if (parse_int(v, &g_opt.cpu) != 0 || g_opt.cpu < -1) return -1;
            i++;
        } else if (v && !strcmp(a, "--sample-ms")) {
            char *end;
            g_opt.sample_ms = strtod(v, &end);
            if (end == v || *end || !(g_opt.sample_ms > 0.0)) return -1;
            i++;
        } else if (v && !strcmp(a, "--filter")) {
            if (g_opt.n_filters == MAX_FILTERS) return -1;
            g_opt.filters[g_opt.n_filters++] = v;
            i++;
        } else if (v && !strcmp(a, "--mode")) {
            g_opt.bulk = !strcmp(v, "bulk") || !strcmp(v, "both");
            g_opt.chained = !strcmp(v, "chained") || !strcmp(v, "both");
            if (!g_opt.bulk && !g_opt.chained) return -1;
            i++;
        } else {
            return -1;
        }
    }
    if (g_opt.samples < 1) return -1;
    return 0;
}

static int row_selected(const row_t *r)
{
    if (g_opt.n_filters == 0) return 1;
    for (int i = 0; i < g_opt.n_filters; i++)
        if (strstr(r->name, g_opt.filters[i]) || strstr(r->prefix, g_opt.filters[i])) return 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorts v in place). */
static double median(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Deterministic filler (xorshift64*), so runs are reproducible. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ULL;
static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        g_rng ^= g_rng >> 12;
        g_rng ^= g_rng << 25;
        g_rng ^= g_rng >> 27;
        p[i] = (uint8_t)((g_rng * 0x2545F4914F6CDD1DULL) >> 56);
    }
}

static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void print_cpu_model(void)
{
    char line[512], model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "model name", 10)) {
                const char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ' || *c == '\t') c++;
                    snprintf(model, sizeof model, "%s", c);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        }
        fclose(f);
    }
    printf("CPU\t%s\n", model);
}

static void pin_cpu(void)
{
    if (g_opt.cpu == -1) {
        printf("PIN\tnone\tdisabled\n");
        return;
    }
#ifdef __linux__
    cpu_set_t set;
    if (g_opt.cpu == -2) {              /* default: the lowest CPU the caller's affinity allows */
        g_opt.cpu = 0;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set)) { g_opt.cpu = c; break; }
    }
    CPU_ZERO(&set);
    CPU_SET(g_opt.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0)
        printf("PIN\t%d\n", g_opt.cpu);
    else
        printf("PIN\tnone\t%s\n", strerror(errno));
#else
    printf("PIN\tnone\tunsupported\n");
#endif
}

/* ------------------------------------------------------------------------ */
/* Core clock probe (see cycles.h)                                           */
/* ------------------------------------------------------------------------ */

#define PROBE_REPS 5
#define PROBE_TARGET_NS 40000.0     /* one add-chain timing: ~40 us */
#define MAX_CLOCK_LOG 65536

static uint64_t g_probe_iters = 1000;
static double g_clock_log[MAX_CLOCK_LOG];   /* every probe result, for CLOCK/CLOCKSTAT */
static size_t g_clock_n;

static double g_ilp_log[MAX_CLOCK_LOG];     /* contention ratio of every probe */

/*
 * One clock probe: the median of PROBE_REPS timings of the add chain (robust
 * to one interrupt), plus one timing of the 3-chain variant, giving the
 * contention ratio t(3 chains) / t(1 chain) = 3-chain-time * GHz / cycles:
 * ~1.00 when the core is ours alone, larger when an SMT sibling competes.
 */
static double probe_ghz(double *ilp)
{
    double v[PROBE_REPS];
    for (int i = 0; i < PROBE_REPS; i++) v[i] = bench_ghz_once(g_probe_iters);
    double g = median(v, PROBE_REPS);
    double cycles = (double)g_probe_iters * BENCH_ADDS_PER_ITER;
    *ilp = g > 0 ? bench_add3_ns(g_probe_iters) * g / cycles : 0.0;
    if (g_clock_n < MAX_CLOCK_LOG) {
        g_ilp_log[g_clock_n] = *ilp;
        g_clock_log[g_clock_n++] = g;
    }
    return g;
}

/* ------------------------------------------------------------------------ */
/* Hardware cycle counter (perf_event_open), where the machine has one       */
/* ------------------------------------------------------------------------ */

static int g_perf_fd = -1;      /* >= 0: samples are counted in core cycles (user mode) */

#ifdef __linux__
static uint64_t perf_cycles(void)
{
    uint64_t v = 0;
    if (read(g_perf_fd, &v, sizeof v) != (ssize_t)sizeof v) return 0;
    return v;
}

/* Open the CPU-cycles counter of this thread (user mode only: perf_event_paranoid <= 2 allows
 * it) and check that it counts: a chain of N dependent adds must read about N cycles.  VMs
 * without a virtual PMU fail to open it (or count 0): the add-chain estimate is used. */
static void perf_setup(void)
{
    if (g_opt.clock == CLOCK_ADDCHAIN) return;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    const char *why = NULL;
    if (fd < 0) {
        why = strerror(errno);
    }
#if BENCH_HAVE_CLOCK_PROBE
    else {
        const uint64_t iters = 100000;
        uint64_t c0 = 0, c1 = 0;
        if (read(fd, &c0, sizeof c0) != (ssize_t)sizeof c0) why = "read failed";
        bench_add_chain(iters);
        if (!why && read(fd, &c1, sizeof c1) != (ssize_t)sizeof c1) why = "read failed";
        double got = (double)(c1 - c0) / (double)(iters * BENCH_ADDS_PER_ITER);
        if (!why && (got < 0.8 || got > 1.5)) why = "the counter does not count core cycles (add-chain check)";
    }
#endif
    if (why) {
        if (fd >= 0) close(fd);
        printf("INFO\tclock\tperf cycles unavailable: %s\n", why);
        if (g_opt.clock == CLOCK_PERF) {
            fprintf(stderr, "bench: --clock perf: no cycle counter (%s)\n", why);
            exit(2);
        }
        return;
    }
    g_perf_fd = fd;
}
#else
static uint64_t perf_cycles(void) { return 0; }
static void perf_setup(void)
{
    if (g_opt.clock == CLOCK_PERF) {
        fprintf(stderr, "bench: --clock perf: not on this OS\n");
        exit(2);
    }
}
#endif

/* Size the add chain to ~PROBE_TARGET_NS and spin the core up for warm_ms. */
static void clock_setup(double warm_ms)
{
    if (!BENCH_HAVE_CLOCK_PROBE) return;
    uint64_t end = bench_now_ns() + (uint64_t)(warm_ms * 1e6);
    do {
        uint64_t t0 = bench_now_ns();
        bench_ghz_once(g_probe_iters);
        double dt = (double)(bench_now_ns() - t0);
        if (dt > 0) {
            double it = (double)g_probe_iters * PROBE_TARGET_NS / dt;
            g_probe_iters = it < 16 ? 16 : (uint64_t)it;
        }
    } while (bench_now_ns() < end);
}

/* ------------------------------------------------------------------------ */
/* Correctness checks                                                        */
/* ------------------------------------------------------------------------ */

/* All-zero key, tweak and plaintext -> ciphertext, per version and size
 * (first record of /work/shared/kat/threefish<bits>_v1.<x>.kat). */
static const struct {
    unsigned bytes;
    const char *version;
    const char *hex;
} g_zero_kat[] = {
    {32, "v1.3", "84da2a1f8beaee947066ae3e3103f1ad536db1f4a1192495116b9f3ce6133fd8"},
    {32, "v1.2", "eb373aaeb6f28d3f6343799c778aadae98c87a2888b43842b06295c7d76af54b"},
    {32, "v1.1", "e39756f9f3b6cf3ff91d2bc3d324ce618574ea1623b2367f88382e2a93afa858"},
    {64, "v1.3", "b1a2bbc6ef6025bc40eb3822161f36e375d1bb0aee3186fbd19e47c5d479947b"
                 "7bc2f8586e35f0cff7e7f03084b0b7b1f1ab3961a580a3e97eb41ea14a6d7bbe"},
    {64, "v1.2", "54c48fea2dac72222c0380d1a1a9f7684d47bd90fc491724dc599e1824b6b30a"
                 "e22db97e841482db209c0e6974c2111ad6c691984919c11f987fc2d132379fb4"},
    {64, "v1.1", "408be942494492eab19daa3e96ad19aedfc41f4e55f8a2626c1e46d54547a713"
                 "d43b21f0de1a10881ed5c4adefdad1c4172cd768c8fc28d0dde9df018042fe3e"},
    {128, "v1.3", "f05c3d0a3d05b304f785ddc7d1e036015c8aa76e2f217b06c6e1544c0bc1a90d"
                  "f0accb9473c24e0fd54fea68057f43329cb454761d6df5cf7b2e9b3614fbd5a2"
                  "0b2e4760b40603540d82eabc5482c171c832afbe68406bc39500367a592943fa"
                  "9a5b4a43286ca3c4cf46104b443143d560a4b230488311df4feef7e1dfe8391e"},
    {128, "v1.2", "71bdc133e22bdc347d4eb02d9a7535f82de8d4c32622e0fd492083aace875edc"
                  "6114e11fd928665e3a2947f2e92897d2f62a2afbb98d20a9e2a5ddfc6cdad498"
                  "644874786afe373b7853672a6da106725e946b45d48ed270ed4843f1a5ac7a23"
                  "97cc46f04d3736d8536612823db0ac1ffaa29e6fcc6eab4ff3f36cfaec59468a"},
    {128, "v1.1", "43cf2a34cb1668e38c2e19ea1757d6b31ac6dead02fea99459d8a0331bdc7273"
                  "a1f7e9495d60402d1f8b43e48a5ac4f9d9d30965835e07f5455b87f963fdbca6"
                  "df66b4446b91ffdd27634573f6e0e4c19633cf80da8fe11b890bcf639ac67b34"
                  "7f87c5daa1acc1b8cd0303f4a9168c0b9b7b78baa6fc68db2cbd3337b8519170"},
};

#define BULK_BYTES 4096
#define MAX_BLOCK 128
#define CANARY 64

/* Shared buffers (64-byte aligned; BULK_BYTES of data plus a canary zone). */
static _Alignas(64) uint8_t g_key[MAX_BLOCK];
static _Alignas(64) uint8_t g_tweaks[(BULK_BYTES / 32) * 16 + CANARY];
static _Alignas(64) uint8_t g_in[BULK_BYTES + CANARY];
static _Alignas(64) uint8_t g_out[BULK_BYTES + CANARY];
static _Alignas(64) uint8_t g_ref[BULK_BYTES];

/*
 * Check one row; returns 0 and sets *version on success, else -1 with why.
 *  1. all-zero vector through the single-block function; the result must be
 *     the zero vector of one of the Skein versions (reported, e.g. v1.3);
 *  2. the same through the blocks function, 4 blocks at once;
 *  3. random key/tweaks/data over the whole 4 KiB: blocks function ==
 *     single-block function block by block, and no write past n blocks.
 */
static int check_row(const row_t *r, const char **version, char *why, size_t why_len)
{
    const unsigned B = r->bytes;
    uint8_t kat[MAX_BLOCK], zero[MAX_BLOCK * 4] = {0}, tw0[16 * 4] = {0};
    uint8_t out1[MAX_BLOCK], out4[MAX_BLOCK * 4];

    if (B != 32 && B != 64 && B != 128) {
        snprintf(why, why_len, "block bytes %u not in {32,64,128}", B);
        return -1;
    }

    r->enc1(zero, tw0, zero, out1);
    *version = NULL;
    for (size_t i = 0; i < sizeof g_zero_kat / sizeof g_zero_kat[0]; i++) {
        if (g_zero_kat[i].bytes != B) continue;
        hex_to_bytes(g_zero_kat[i].hex, kat, B);
        if (!memcmp(kat, out1, B)) {
            *version = g_zero_kat[i].version;
            break;
        }
    }
    if (!*version) {
        snprintf(why, why_len, "all-zero vector: no Skein version matches (single-block)");
        return -1;
    }

    r->encn(zero, tw0, zero, out4, 4);
    for (unsigned b = 0; b < 4; b++)
        if (memcmp(out4 + b * B, out1, B)) {
            snprintf(why, why_len, "all-zero vector: blocks function differs at block %u", b);
            return -1;
        }

    const size_t n = BULK_BYTES / B;
    fill_random(g_key, B);
    fill_random(g_tweaks, n * 16);
    fill_random(g_in, BULK_BYTES);
    memset(g_out, 0xA5, sizeof g_out);
    r->encn(g_key, g_tweaks, g_in, g_out, n);
    for (size_t b = 0; b < n; b++) r->enc1(g_key, g_tweaks + 16 * b, g_in + B * b, g_ref + B * b);
    for (size_t b = 0; b < n; b++)
        if (memcmp(g_out + B * b, g_ref + B * b, B)) {
            snprintf(why, why_len, "random data: blocks function != single-block at block %zu", b);
            return -1;
        }
    for (size_t i = 0; i < CANARY; i++)
        if (g_out[BULK_BYTES + i] != 0xA5) {
            snprintf(why, why_len, "blocks function wrote past the end of its output");
            return -1;
        }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Measurement                                                               */
/* ------------------------------------------------------------------------ */

enum { MODE_BULK, MODE_CHAINED };

#define CLOCK_TOLERANCE 0.02        /* max relative before/after clock disagreement */
#define MAX_REJECTS_PER_SAMPLE 4    /* stop rejecting after 4*K rejections */

/* Run the workload `reps` times; returns elapsed ns.  Bytes processed per rep:
 * BULK_BYTES (bulk) or 2 blocks (chained: one ping-pong pair). */
static uint64_t run_reps(const row_t *r, int mode, uint64_t reps)
{
    const unsigned B = r->bytes;
    uint64_t t0 = bench_now_ns();
    if (mode == MODE_BULK) {
        const size_t n = BULK_BYTES / B;
        for (uint64_t i = 0; i < reps; i++) r->encn(g_key, g_tweaks, g_in, g_out, n);
    } else {
        /* Dependent chain: g_in -> g_out -> g_in -> ... (one fixed tweak). */
        for (uint64_t i = 0; i < reps; i++) {
            r->enc1(g_key, g_tweaks, g_in, g_out);
            r->enc1(g_key, g_tweaks, g_out, g_in);
        }
    }
    return bench_now_ns() - t0;
}

static double bytes_per_rep(const row_t *r, int mode)
{
    return mode == MODE_BULK ? (double)BULK_BYTES : 2.0 * r->bytes;
}

/* Warm the row up for ~warm_ms and return the reps giving ~sample_ms. */
static uint64_t calibrate(const row_t *r, int mode)
{
    const double target_ns = g_opt.sample_ms * 1e6;
    uint64_t reps = 1, t;
    /* Grow until one timing is long enough to extrapolate from (~1/8 sample). */
    while ((t = run_reps(r, mode, reps)) < target_ns / 8 && reps < (1ull << 40)) reps *= 2;
    /* Keep running (warm-up) for the rest of warm_ms. */
    for (double spent = (double)t; spent < g_opt.warm_ms * 1e6;) spent += (double)run_reps(r, mode, reps);
    t = run_reps(r, mode, reps);
    double scaled = (double)reps * target_ns / (double)(t ? t : 1);
    return scaled < 1.0 ? 1 : (uint64_t)scaled;
}

/* One row of an alternated group: its repetitions per sample and its samples. */
typedef struct {
    const row_t *r;
    uint64_t reps;
    double bytes;
    int rejected;
    double *cpb, *ghz, *ilp;
} slot_t;

/* One timed sample of slot s: cycles/byte (ns/byte without a clock), its GHz and contention;
 * returns 0 when the sample is to be retaken (the clock probes around it disagree). */
static int take_sample(slot_t *s, int mode, double *cpb, double *ghz, double *ilp)
{
    if (s->r->select) s->r->select();          /* e.g. Botan's CPUID state for this row */
    if (g_perf_fd >= 0) {                       /* hardware cycles: no estimate needed */
        uint64_t c0 = perf_cycles();
        uint64_t t0 = bench_now_ns();
        run_reps(s->r, mode, s->reps);
        uint64_t ns = bench_now_ns() - t0;
        uint64_t c = perf_cycles() - c0;
        *cpb = (double)c / s->bytes;
        *ghz = ns ? (double)c / (double)ns : 0.0;
        *ilp = 0.0;
        if (g_clock_n < MAX_CLOCK_LOG) {
            g_ilp_log[g_clock_n] = 0.0;
            g_clock_log[g_clock_n++] = *ghz;
        }
        return 1;
    }
    double c0, c1;
    double g0 = probe_ghz(&c0);
    uint64_t ns = run_reps(s->r, mode, s->reps);
    double g1 = probe_ghz(&c1);
    double g = 0.5 * (g0 + g1);
    if (g > 0 && (g0 > g1 ? g0 - g1 : g1 - g0) > CLOCK_TOLERANCE * g &&
        s->rejected < MAX_REJECTS_PER_SAMPLE * g_opt.samples) {
        s->rejected++;
        return 0;
    }
    /* Cycles per byte; with no clock probe (g == 0) report ns per byte. */
    *cpb = (double)ns * (g > 0 ? g : 1.0) / s->bytes;
    *ilp = 0.5 * (c0 + c1);
    *ghz = g;
    return 1;
}

/*
 * Time the n rows of one block size and mode.  Alternated (default): K rounds, each timing
 * every row once in the same order (A B A B ... for two rows), so sample k of every row ran
 * within one round of the others' sample k (SAMPLE records carry k: tools/bench/paired.py
 * pairs them).  --sequential: all K samples of a row, then the next row (the old order).
 * A rejected sample is retaken at once, in its place in the round.
 */
static void measure_group(const row_t **rows, int n, int mode)
{
    const int K = g_opt.samples;
    const char *mname = mode == MODE_BULK ? "bulk" : "chained";
    slot_t *slots = calloc((size_t)n, sizeof *slots);
    if (!slots) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    /* Fixed, distinct per-block tweaks and random data for the workload (one block size). */
    fill_random(g_key, rows[0]->bytes);
    for (size_t b = 0; b < BULK_BYTES / 32; b++) {
        memset(g_tweaks + 16 * b, 0, 16);
        for (int i = 0; i < 8; i++) g_tweaks[16 * b + i] = (uint8_t)((b * 64) >> (8 * i));
        g_tweaks[16 * b + 15] = 0x70;       /* e.g. a Skein "type" byte, same for all */
    }
    fill_random(g_in, BULK_BYTES);
    for (int j = 0; j < n; j++) {
        slot_t *s = &slots[j];
        s->r = rows[j];
        s->cpb = malloc(sizeof(double) * (size_t)K);
        s->ghz = malloc(sizeof(double) * (size_t)K);
        s->ilp = malloc(sizeof(double) * (size_t)K);
        if (!s->cpb || !s->ghz || !s->ilp) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        if (s->r->select) s->r->select();
        s->reps = calibrate(s->r, mode);
        s->bytes = bytes_per_rep(s->r, mode) * (double)s->reps;
    }
    const int outer = g_opt.sequential ? n : K, inner = g_opt.sequential ? K : n;
    for (int a = 0; a < outer; a++)
        for (int b = 0; b < inner; b++) {
            const int j = g_opt.sequential ? a : b, k = g_opt.sequential ? b : a;
            slot_t *s = &slots[j];
            while (!take_sample(s, mode, &s->cpb[k], &s->ghz[k], &s->ilp[k])) {
            }
            printf("SAMPLE\t%s\t%u\t%s\t%d\t%.4f\t%.4f\n", s->r->name, s->r->bytes * 8, mname, k, s->cpb[k],
                   s->ghz[k]);
        }
    for (int j = 0; j < n; j++) {
        slot_t *s = &slots[j];
        double med = median(s->cpb, (size_t)K);   /* sorted: cpb[0] is the minimum */
        double ghz_med = median(s->ghz, (size_t)K);
        printf("ROW\t%s\t%u\t%s\t%.3f\t%.3f\t%.3f\n", s->r->name, s->r->bytes * 8, mname, med, s->cpb[0], ghz_med);
        printf("ROWSTAT\t%s\t%u\t%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%llu\t%.3f\n", s->r->name, s->r->bytes * 8, mname,
               K, s->rejected, s->ghz[0], s->ghz[K - 1], s->cpb[K - 1], (unsigned long long)s->reps,
               median(s->ilp, (size_t)K));
        free(s->cpb);
        free(s->ghz);
        free(s->ilp);
    }
    fflush(stdout);
    free(slots);
}

/* ------------------------------------------------------------------------ */
/* Main                                                                      */
/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0) {
        usage(stderr);
        return 2;
    }

    if (g_opt.list) {
        for (size_t i = 0; g_rows[i].name; i++)
            printf("LIST\t%s\t%u\t%s\n", g_rows[i].name, g_rows[i].bytes * 8, g_rows[i].prefix);
        return 0;
    }

    printf("# threefish-gen bench: tab-separated records, format documented in harness/bench.c\n");
    printf("UNIT\t%s\n", BENCH_HAVE_CLOCK_PROBE ? "cpb" : "ns/B");
    print_cpu_model();
    pin_cpu();

    /* Peer libraries: initialise; a failure marks all that library's rows failed. */
    int src_ok[3] = {1, 1, 1};
    char msg[256];
    (void)msg;
#ifdef HAVE_BOTAN
    if (bench_botan_init(msg, sizeof msg) == 0)
        printf("PEER\tbotan\t%s\n", bench_botan_version());
    else {
        printf("PEERFAIL\tbotan\t%s\n", msg);
        src_ok[SRC_BOTAN] = 0;
    }
#endif
#ifdef HAVE_CRYPTOPP
    if (bench_cryptopp_init(msg, sizeof msg) == 0)
        printf("PEER\tcrypto++\t%s\n", bench_cryptopp_version());
    else {
        printf("PEERFAIL\tcrypto++\t%s\n", msg);
        src_ok[SRC_CRYPTOPP] = 0;
    }
#endif

    /* Phase 1: correctness of every selected row. */
    int ok[N_ROWS + 1], variant_failed = 0;
    for (size_t i = 0; g_rows[i].name; i++) {
        const row_t *r = &g_rows[i];
        const char *version = NULL;
        char why[160];
        ok[i] = 0;
        if (!row_selected(r)) continue;
        if (!src_ok[r->source]) {
            printf("FAIL\t%s\t%u\tpeer library failed to initialise\n", r->name, r->bytes * 8);
            continue;
        }
        if (r->select) printf("INFO\t%s\tprovider=%s\n", r->name, r->select());
        if (check_row(r, &version, why, sizeof why) == 0) {
            printf("CHECK\t%s\t%u\tok\t%s\n", r->name, r->bytes * 8, version);
            ok[i] = 1;
        } else {
            printf("FAIL\t%s\t%u\t%s\n", r->name, r->bytes * 8, why);
            if (r->source == SRC_VARIANT) variant_failed = 1;
        }
    }
    fflush(stdout);
    if (g_opt.check_only) return variant_failed ? 3 : 0;

    /* Phase 2: measurement. */
    clock_setup(g_opt.start_warm_ms);
    perf_setup();
    printf("CLOCKSRC\t%s\n", g_perf_fd >= 0 ? "perf-cycles" : BENCH_HAVE_CLOCK_PROBE ? "add-chain" : "none");
    if (g_perf_fd >= 0) printf("UNIT\tcpb\n");        /* counted cycles, whatever the clock probe */
    static const unsigned sizes[] = {32, 64, 128};
    const row_t *group[N_ROWS + 1];
    for (int m = 0; m < 2; m++) {
        if (!(m == MODE_BULK ? g_opt.bulk : g_opt.chained)) continue;
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int n = 0;
            for (size_t i = 0; g_rows[i].name; i++)
                if (ok[i] && g_rows[i].bytes == sizes[z]) group[n++] = &g_rows[i];
            if (n) measure_group(group, n, m);
        }
    }

    double c_med = 0, c_min = 0, c_max = 0, ilp_med = 0;
    if (g_clock_n) {
        ilp_med = median(g_ilp_log, g_clock_n);
        c_med = median(g_clock_log, g_clock_n);   /* sorts the log */
        c_min = g_clock_log[0];
        c_max = g_clock_log[g_clock_n - 1];
    }
    printf("CLOCK\t%.4f\n", c_med);
    printf("CLOCKSTAT\t%.4f\t%.4f\t%.4f\t%zu\t%.3f\n", c_min, c_med, c_max, g_clock_n, ilp_med);
    return variant_failed ? 3 : 0;
}
