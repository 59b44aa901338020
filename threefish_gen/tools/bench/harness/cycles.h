/*
 * cycles.h -- wall-clock timer and core-clock estimator for the benchmark.
 *
 * The benchmark runs on VMs: no performance counters, and the TSC ticks at a
 * fixed reference rate, not at the core clock.  So cycles are derived as
 *
 *     cycles = elapsed_ns * GHz
 *
 * where GHz (= core cycles per ns) is measured directly by timing a chain of
 * dependent register adds, whose latency is exactly 1 core cycle on every
 * x86-64 core in use: 32 dependent `add reg, reg` per loop iteration, with the
 * `dec/jnz` loop control running in parallel, i.e. 32 cycles per iteration.
 * `add reg, reg` is used rather than `add reg, imm`/`inc` because some recent
 * cores can fold immediate adds in the renamer (zero latency), which would
 * make the chain shorter than it looks; a register source cannot be folded.
 *
 * bench_add3_chain() is a contention indicator, see below.
 *
 * On other architectures bench_ghz_once() returns 0 and the benchmark reports
 * ns/byte instead of cycles/byte.
 */
#ifndef BENCH_CYCLES_H
#define BENCH_CYCLES_H

#include <stdint.h>
#include <time.h>

/* Monotonic wall clock in nanoseconds (vDSO clock_gettime: ~20 ns per call). */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Dependent adds (= core cycles) per iteration of bench_add_chain(). */
#define BENCH_ADDS_PER_ITER 32

#if defined(__x86_64__)
#define BENCH_HAVE_CLOCK_PROBE 1

/* Run iters * 32 dependent adds: iters * 32 core cycles. */
static inline void bench_add_chain(uint64_t iters)
{
    uint64_t x = 0, y = 1;
    __asm__ volatile(
        "1:\n\t"
        ".rept 32\n\t"
        "add %[y], %[x]\n\t"
        ".endr\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [x] "+r"(x), [n] "+r"(iters)
        : [y] "r"(y)
        : "cc");
}

/*
 * Same number of cycles on an uncontended core, but three independent chains:
 * 3 adds per cycle, well within the 4+ integer ALUs of any current x86-64
 * core.  If this runs measurably slower than bench_add_chain(iters), execution
 * resources are being taken away from us -- typically by the host running
 * another vCPU on the SMT sibling of our physical core, which the 1-IPC clock
 * chain barely notices but throughput-bound cipher code does.
 */
static inline void bench_add3_chain(uint64_t iters)
{
    uint64_t x = 0, z = 0, w = 0, y = 1;
    __asm__ volatile(
        "1:\n\t"
        ".rept 32\n\t"
        "add %[y], %[x]\n\t"
        "add %[y], %[z]\n\t"
        "add %[y], %[w]\n\t"
        ".endr\n\t"
        "dec %[n]\n\t"
        "jnz 1b\n\t"
        : [x] "+r"(x), [z] "+r"(z), [w] "+r"(w), [n] "+r"(iters)
        : [y] "r"(y)
        : "cc");
}

/* Elapsed ns of bench_add3_chain(iters). */
static inline double bench_add3_ns(uint64_t iters)
{
    uint64_t t0 = bench_now_ns();
    bench_add3_chain(iters);
    return (double)(bench_now_ns() - t0);
}

/* One timing of the add chain; returns core cycles per ns (GHz). */
static inline double bench_ghz_once(uint64_t iters)
{
    uint64_t t0 = bench_now_ns();
    bench_add_chain(iters);
    uint64_t t1 = bench_now_ns();
    if (t1 <= t0) return 0.0;
    return (double)(iters * BENCH_ADDS_PER_ITER) / (double)(t1 - t0);
}

#else /* !__x86_64__ */
#define BENCH_HAVE_CLOCK_PROBE 0

static inline double bench_ghz_once(uint64_t iters)
{
    (void)iters;
    return 0.0;
}

static inline double bench_add3_ns(uint64_t iters)
{
    (void)iters;
    return 0.0;
}
#endif

#endif /* BENCH_CYCLES_H */
