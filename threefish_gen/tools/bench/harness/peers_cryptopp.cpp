/*
 * peers_cryptopp.cpp -- Crypto++ Threefish-256/-512/-1024 as benchmark peers (see peers.h).
 *
 * Build:  g++ -std=c++17 -O2 -Wall -Wextra -c bench/peers_cryptopp.cpp
 * Link:   ... -lcryptopp        (bench.c must be compiled with -DHAVE_CRYPTOPP)
 *
 * Crypto++ takes the Threefish tweak as a NameValuePairs parameter
 * (Name::Tweak()), either with SetKey or with the public
 * Threefish_Base<BS>::SetTweak(const NameValuePairs&).  We key once (cached,
 * see peers.h) and call SetTweak per block.  To keep the per-block cost that
 * of the cipher rather than of the parameter machinery, the tweak is handed
 * over through TweakParam below, a minimal non-allocating NameValuePairs,
 * instead of MakeParameters(), which builds a heap-allocated list each time.
 */
#include "peers.h"

#include <cryptopp/config_ver.h>
#include <cryptopp/cryptlib.h>
#include <cryptopp/algparam.h>
#include <cryptopp/argnames.h>
#include <cryptopp/threefish.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <typeinfo>

namespace {

// A NameValuePairs that answers exactly one name, Name::Tweak(), with a
// non-owning ConstByteArrayParameter pointing at a 16-byte tweak.
class TweakParam : public CryptoPP::NameValuePairs {
public:
    explicit TweakParam(const uint8_t *tweak) : m_tweak(tweak) {}

    bool GetVoidValue(const char *name, const std::type_info &valueType, void *pValue) const override
    {
        if (std::strcmp(name, CryptoPP::Name::Tweak()) != 0)
            return false;
        ThrowIfTypeMismatch(name, typeid(CryptoPP::ConstByteArrayParameter), valueType);
        static_cast<CryptoPP::ConstByteArrayParameter *>(pValue)->Assign(m_tweak, 16, false);
        return true;
    }

private:
    const uint8_t *m_tweak;
};

// One keyed encryption object per block size, with its cached key.
template <class Cipher>
struct Peer {
    static constexpr size_t B = Cipher::BLOCKSIZE;
    typename Cipher::Encryption enc;
    uint8_t key[B];
    bool have_key = false;

    void use_key(const uint8_t *k, const uint8_t *tweak)
    {
        if (!have_key || std::memcmp(key, k, B) != 0) {
            enc.SetKey(k, B, TweakParam(tweak));
            std::memcpy(key, k, B);
            have_key = true;
        }
    }

    void encrypt(const uint8_t *k, const uint8_t *tweak, const uint8_t *in, uint8_t *out)
    {
        use_key(k, tweak);
        enc.SetTweak(TweakParam(tweak));
        enc.ProcessBlock(in, out);
    }

    void encrypt_blocks(const uint8_t *k, const uint8_t *tweaks, const uint8_t *in, uint8_t *out, size_t n)
    {
        use_key(k, tweaks);
        for (size_t i = 0; i < n; i++) {
            enc.SetTweak(TweakParam(tweaks + 16 * i));
            enc.ProcessBlock(in + B * i, out + B * i);
        }
    }
};

Peer<CryptoPP::Threefish256> *g_tf256;
Peer<CryptoPP::Threefish512> *g_tf512;
Peer<CryptoPP::Threefish1024> *g_tf1024;
char g_version[32];

} // namespace

extern "C" int bench_cryptopp_init(char *msg, size_t msg_len)
{
    try {
        // Allocated once and kept for the life of the process.
        if (!g_tf256) g_tf256 = new Peer<CryptoPP::Threefish256>;
        if (!g_tf512) g_tf512 = new Peer<CryptoPP::Threefish512>;
        if (!g_tf1024) g_tf1024 = new Peer<CryptoPP::Threefish1024>;
        const int v = CryptoPP::LibraryVersion();
        std::snprintf(g_version, sizeof g_version, "%d.%d.%d", v / 100, (v / 10) % 10, v % 10);
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(msg, msg_len, "%s", e.what());
        return 1;
    }
}

extern "C" const char *bench_cryptopp_version(void) { return g_version; }

#define CRYPTOPP_PEER_FUNCS(bits)                                                               \
    extern "C" void bench_cryptopp_tf##bits##_encrypt(const uint8_t *key, const uint8_t *tweak, \
                                                      const uint8_t *in, uint8_t *out)          \
    {                                                                                           \
        g_tf##bits->encrypt(key, tweak, in, out);                                               \
    }                                                                                           \
    extern "C" void bench_cryptopp_tf##bits##_encrypt_blocks(                                   \
        const uint8_t *key, const uint8_t *tweaks, const uint8_t *in, uint8_t *out, size_t n)   \
    {                                                                                           \
        g_tf##bits->encrypt_blocks(key, tweaks, in, out, n);                                    \
    }

CRYPTOPP_PEER_FUNCS(256)
CRYPTOPP_PEER_FUNCS(512)
CRYPTOPP_PEER_FUNCS(1024)
