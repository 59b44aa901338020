/*
 * threefish-gen speed probe for `threefish-gen regalloc --bench`: bulk encrypt_blocks
 * cycles/byte of one variant, same method as `make bench`.
 *
 *   cc -O2 -DTF_HEADER='"tf.h"' -DTF_PREFIX=tf_ -DTF_BYTES=64 speed.c tf.o -o speed
 *   ./speed [blocks]        prints "cpb <median cycles/byte> ghz <estimated core GHz>"
 *
 * The core clock is estimated by timing a chain of dependent register adds (1 cycle
 * each); cycles = elapsed ns * GHz; the result is the median of 31 samples.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include TF_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define ENC_BLOCKS CAT(TF_PREFIX, encrypt_blocks)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
static void add_chain(unsigned long iters)
{
    unsigned long x = 0, y = 1;
    __asm__ volatile("1:\n\t.rept 32\n\tadd %[y], %[x]\n\t.endr\n\tdec %[n]\n\tjnz 1b\n\t"
                     : [x] "+r"(x), [n] "+r"(iters) : [y] "r"(y) : "cc");
}
#else
static void add_chain(unsigned long iters) { (void)iters; }
#endif

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ghz(void)
{
    double s[11];
    int i;
    for (i = 0; i < 11; i++) {
        uint64_t t0 = now_ns();
        add_chain(200000);
        s[i] = (200000.0 * 32) / (double)(now_ns() - t0);
    }
    qsort(s, 11, sizeof s[0], cmp);
    return s[5];
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 64, i;
    unsigned char key[TF_BYTES];
    unsigned char *tw = malloc(16 * n), *buf = malloc(TF_BYTES * n);
    double s[31], g;
    int k, reps;
    if (!tw || !buf) return 1;
    for (i = 0; i < TF_BYTES; i++) key[i] = (unsigned char)(i * 7 + 1);
    for (i = 0; i < 16 * n; i++) tw[i] = (unsigned char)i;
    for (i = 0; i < TF_BYTES * n; i++) buf[i] = (unsigned char)(i * 13);
    for (k = 0; k < 200; k++) ENC_BLOCKS(key, tw, buf, buf, n); /* warm up */
    reps = 20;
    g = ghz();
    for (k = 0; k < 31; k++) {
        uint64_t t0 = now_ns();
        int r;
        for (r = 0; r < reps; r++) ENC_BLOCKS(key, tw, buf, buf, n);
        s[k] = (double)(now_ns() - t0) * g / ((double)reps * n * TF_BYTES);
    }
    qsort(s, 31, sizeof s[0], cmp);
    printf("cpb %.3f ghz %.3f check %02x\n", s[15], g, buf[0]);
    free(tw);
    free(buf);
    return 0;
}
