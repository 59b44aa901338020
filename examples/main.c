/* Encrypts a fixed block with each backend and decrypts it back; prints the ciphertexts in hex
   (tests/test_examples.py compares them with the reference model). */
#include <stdio.h>
#include <string.h>

#include "tf_threefish512_csimd.h"
#include "tfa_threefish1024_nasmx64.h"

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + 7 * i);
}

static void hex(const char *name, const uint8_t *p, size_t n)
{
    size_t i;
    printf("%s ", name);
    for (i = 0; i < n; i++)
        printf("%02x", p[i]);
    printf("\n");
}

int main(void)
{
    uint8_t key[128], tweak[16], in[128], out[128], back[128];
    fill(key, sizeof key, 1);
    fill(tweak, sizeof tweak, 2);
    fill(in, sizeof in, 3);

    tf_encrypt(key, tweak, in, out);
    tf_decrypt(key, tweak, out, back);
    hex("512", out, TF_BLOCK_BYTES);
    if (memcmp(in, back, TF_BLOCK_BYTES) != 0)
        return 1;

    if (!tfa_cpu_supported()) {
        printf("1024 skipped: CPU lacks what the NASM object needs\n");
        return 0;
    }
    tfa_encrypt(key, tweak, in, out);
    tfa_decrypt(key, tweak, out, back);
    hex("1024", out, TFA_BLOCK_BYTES);
    return memcmp(in, back, TFA_BLOCK_BYTES) != 0;
}
