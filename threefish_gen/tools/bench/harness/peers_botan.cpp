/*
 * peers_botan.cpp -- Botan 2 Threefish-512 as a benchmark peer (see peers.h).
 *
 * Build:  g++ -std=c++17 -O2 -Wall -Wextra -isystem /usr/include/botan-2 -c bench/peers_botan.cpp
 * Link:   ... -lbotan-2        (bench.c must be compiled with -DHAVE_BOTAN)
 *
 * The cipher is obtained through the public factory
 * (BlockCipher::create_or_throw("Threefish-512")) and used through the
 * Tweakable_Block_Cipher interface; the concrete header threefish_512.h is
 * avoided because Botan marks it as a future-internal header.
 */
#include "peers.h"

#include <botan/block_cipher.h>
#include <botan/cpuid.h>
#include <botan/version.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

namespace {

// The cipher object lives until process exit and is deliberately never
// destroyed: a static unique_ptr would be destroyed after Botan's own
// secure-memory pool (constructed later, so destroyed earlier) and crash in
// ~Threefish_512 at exit.
Botan::BlockCipher *g_cipher = nullptr;
Botan::Tweakable_Block_Cipher *g_tf = nullptr;       // same object, tweakable view
uint8_t g_key[64];
bool g_have_key = false;
std::string g_version;
std::string g_provider;

// Re-run the key schedule only when the key bytes change (see peers.h).
inline void use_key(const uint8_t *key)
{
    if (!g_have_key || std::memcmp(g_key, key, 64) != 0) {
        g_tf->set_key(key, 64);
        std::memcpy(g_key, key, 64);
        g_have_key = true;
    }
}

} // namespace

extern "C" int bench_botan_init(char *msg, size_t msg_len)
{
    try {
        g_version = Botan::short_version_string();
        if (!g_cipher) g_cipher = Botan::BlockCipher::create_or_throw("Threefish-512").release();
        g_tf = dynamic_cast<Botan::Tweakable_Block_Cipher *>(g_cipher);
        if (!g_tf) {
            std::snprintf(msg, msg_len, "Threefish-512 is not a Tweakable_Block_Cipher");
            return 1;
        }
        g_have_key = false;
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(msg, msg_len, "%s", e.what());
        return 1;
    }
}

extern "C" const char *bench_botan_version(void) { return g_version.c_str(); }

// Botan dispatches on CPUID at every encrypt_n call, so these switch the
// global CPUID state; call the right one immediately before each row.
extern "C" const char *bench_botan_select_default(void)
{
    Botan::CPUID::initialize();
    g_provider = g_cipher->provider();
    return g_provider.c_str();
}

extern "C" const char *bench_botan_select_no_avx2(void)
{
    Botan::CPUID::initialize();
    Botan::CPUID::clear_cpuid_bit(Botan::CPUID::CPUID_AVX2_BIT);
    g_provider = g_cipher->provider();
    return g_provider.c_str();
}

extern "C" void bench_botan_tf512_encrypt(const uint8_t *key, const uint8_t *tweak,
                                          const uint8_t *in, uint8_t *out)
{
    use_key(key);
    g_tf->set_tweak(tweak, 16);
    g_tf->encrypt(in, out);
}

// One set_tweak + one-block encrypt per block: Botan's multi-block encrypt_n
// applies a single tweak to all blocks, and every block here has its own.
extern "C" void bench_botan_tf512_encrypt_blocks(const uint8_t *key, const uint8_t *tweaks,
                                                 const uint8_t *in, uint8_t *out, size_t n)
{
    use_key(key);
    for (size_t i = 0; i < n; i++) {
        g_tf->set_tweak(tweaks + 16 * i, 16);
        g_tf->encrypt(in + 64 * i, out + 64 * i);
    }
}
