/*
 * peers.h -- C interface between bench.c and the optional third-party peers
 * (peers_botan.cpp, peers_cryptopp.cpp).
 *
 * Every peer exports functions with exactly the shape of a generated variant,
 * so bench.c drives peers and variants through the same measurement loop:
 *
 *   single block:  f(key[B], tweak[16], in[B], out[B])
 *   many blocks:   f(key[B], tweaks[n*16], in[n*B], out[n*B], n)   (one tweak per block)
 *
 * Conventions shared by all peer wrappers:
 *   - The library's key schedule is kept in a static cipher object and redone
 *     only when the key bytes change (memcmp against the cached key).  A
 *     generated variant re-derives its key words on every call, but that is a
 *     handful of loads and XORs; re-running a library's set_key (allocation,
 *     virtual calls) per block would measure the API, not the cipher.
 *   - The tweak IS set on every call (every block, in the _blocks functions),
 *     because the libraries only accept one tweak per set_tweak/SetTweak and
 *     the benchmark gives every block its own tweak.
 *   - None of these functions throws; library exceptions are caught inside the
 *     *_init functions, which are the only ones that can meet one.
 *   - Not thread safe (static state); the benchmark is single threaded.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Botan 2 (peers_botan.cpp; link -lbotan-2) ---------------------------
 * Botan's Threefish_512::encrypt_n tests CPUID::has_avx2() on every call
 * (checked by disassembling libbotan-2.so.19: it reads the global CPUID state
 * each call), so the code path is chosen at call time, not at object creation.
 * The two "select" functions therefore switch the process-wide CPUID state and
 * must be called right before measuring the corresponding row:
 *   bench_botan_select_default(): CPUID::initialize() -> Botan's own choice
 *   bench_botan_select_no_avx2(): CPUID::initialize() + clear the AVX2 bit
 * Both return Botan's provider() string for the chosen path ("avx2", "base").
 */
int         bench_botan_init(char *msg, size_t msg_len);   /* 0 = ok, else msg says why */
const char *bench_botan_version(void);
const char *bench_botan_select_default(void);
const char *bench_botan_select_no_avx2(void);
void bench_botan_tf512_encrypt(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out);
void bench_botan_tf512_encrypt_blocks(const uint8_t *key, const uint8_t *tweaks,
                                      const uint8_t *in, uint8_t *out, size_t n);

/* ---- Crypto++ (peers_cryptopp.cpp; link -lcryptopp) ----------------------
 * Crypto++'s Threefish is portable C++ with no run-time dispatch. */
int         bench_cryptopp_init(char *msg, size_t msg_len); /* 0 = ok */
const char *bench_cryptopp_version(void);
void bench_cryptopp_tf256_encrypt(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out);
void bench_cryptopp_tf256_encrypt_blocks(const uint8_t *key, const uint8_t *tweaks,
                                         const uint8_t *in, uint8_t *out, size_t n);
void bench_cryptopp_tf512_encrypt(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out);
void bench_cryptopp_tf512_encrypt_blocks(const uint8_t *key, const uint8_t *tweaks,
                                         const uint8_t *in, uint8_t *out, size_t n);
void bench_cryptopp_tf1024_encrypt(const uint8_t *key, const uint8_t *tweak, const uint8_t *in, uint8_t *out);
void bench_cryptopp_tf1024_encrypt_blocks(const uint8_t *key, const uint8_t *tweaks,
                                          const uint8_t *in, uint8_t *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_PEERS_H */
