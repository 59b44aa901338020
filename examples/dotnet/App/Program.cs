// Encrypts the same fixed block as examples/main.c and decrypts it back; prints the ciphertext in hex.
using System;
using ThreefishGen;

static class Program
{
    static byte[] Fill(int n, int seed)
    {
        var b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte)(seed + 7 * i);
        return b;
    }

    static int Main()
    {
        byte[] key = Fill(64, 1), tweak = Fill(16, 2), input = Fill(64, 3);
        var output = new byte[64];
        var back = new byte[64];
        Threefish512V13Lanes.Encrypt(key, tweak, input, output);
        Threefish512V13Lanes.Decrypt(key, tweak, output, back);
        Console.WriteLine("512 " + Convert.ToHexString(output).ToLowerInvariant());
        return back.AsSpan().SequenceEqual(input) ? 0 : 1;
    }
}
