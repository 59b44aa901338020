/*
 * peers_botan_skein.cpp -- Botan 2's Skein-512 (512-bit output) as the peer of bench/skein_bench.c.
 *
 * Build:  g++ -std=c++17 -O2 -Wall -Wextra -isystem /usr/include/botan-2 -c bench/peers_botan_skein.cpp
 * Link:   ... -lbotan-2        (skein_bench.c compiled with -DHAVE_BOTAN)
 *
 * The hash object comes from the public factory (HashFunction::create_or_throw("Skein-512")) and
 * lives until exit (see peers_botan.cpp for why it is never destroyed).
 */
#include <botan/hash.h>
#include <botan/version.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

namespace {
Botan::HashFunction *g_skein = nullptr;
std::string g_version;
}

extern "C" int bench_botan_skein512_init(char *msg, size_t msg_len)
{
    try {
        g_version = Botan::short_version_string();
        if (!g_skein) g_skein = Botan::HashFunction::create_or_throw("Skein-512").release();
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(msg, msg_len, "%s", e.what());
        return 1;
    }
}

extern "C" const char *bench_botan_skein512_version(void) { return g_version.c_str(); }

/* Skein-512-512 of msg into out[64]. */
extern "C" void bench_botan_skein512(const uint8_t *msg, size_t len, uint8_t *out)
{
    g_skein->update(msg, len);
    g_skein->final(out);
}
