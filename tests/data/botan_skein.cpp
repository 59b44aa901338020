// Botan 2's Skein-512 (v1.3) as an independent oracle for tests/test_skein.py: reads lines
// "OUTBITS PERS_HEX MSG_HEX" ('-' = empty) on stdin, prints the digest in hex per line.
#include <botan/skein_512.h>
#include <botan/hex.h>
#include <iostream>
#include <string>

int main()
{
    std::string outbits, pers, msg;
    while (std::cin >> outbits >> pers >> msg) {
        std::vector<uint8_t> p, m;
        if (pers != "-") p = Botan::hex_decode(pers);
        if (msg != "-") m = Botan::hex_decode(msg);
        Botan::Skein_512 h(std::stoul(outbits), std::string(p.begin(), p.end()));
        h.update(m.data(), m.size());
        std::cout << Botan::hex_encode(h.final(), false) << "\n";
    }
    return 0;
}
