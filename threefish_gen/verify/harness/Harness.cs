// threefish-gen verify harness for the C# target: checks generated classes against a vector file.
//
//   dotnet harness.dll CLASS VECTORS        CLASS = the full name of one registered class
//
// Same vector format and semantics as harness.c:
//   V <key> <tweak> <plaintext> <ciphertext>                       one block
//   B <n> <key> <tweaks n*16> <plaintext n*B> <ciphertext n*B>     EncryptBlocks batch
// For every record: encrypt and decrypt give the expected bytes, with every span a slice at
// offset 0..7 of a larger array (misaligned), guard bytes around the output unchanged, inputs
// unchanged, and in place (input and output the same span). Plus argument checks (wrong
// lengths, partial overlap -> ArgumentException naming the parameter).
// Prints the kernels that ran, "harness: N passed, M failed"; exit 1 on any failure.
using System;
using System.IO;
using System.Linq;

delegate void OneFn(ReadOnlySpan<byte> key, ReadOnlySpan<byte> tweak, ReadOnlySpan<byte> input, Span<byte> output);

sealed record Entry(string Name, int Bytes, OneFn Enc, OneFn Dec, OneFn EncBlocks, OneFn DecBlocks,
                    Func<string> BlockKernel, Func<string> BlocksKernel);

static partial class Harness
{
    const int Guard = 32;
    static long passed, failed;
    static long lineNo;

    static void Check(bool ok, string what, int off)
    {
        if (ok) { passed++; return; }
        failed++;
        if (failed <= 20)
            Console.Error.WriteLine($"FAIL line {lineNo}: {what} (misalignment {off})");
    }

    // A buffer with guard zones: data is arr[Guard+off .. Guard+off+len).
    static byte[] Buf(int len, byte fill) { var a = new byte[len + 2 * Guard + 8]; Array.Fill(a, fill); return a; }

    static bool GuardsOk(byte[] a, int start, int len, byte fill)
    {
        for (int i = 0; i < a.Length; i++)
            if ((i < start || i >= start + len) && a[i] != fill)
                return false;
        return true;
    }

    static void Run(OneFn f, string name, int B, byte[] key, byte[] tweak, byte[] src, byte[] want, string n = "")
    {
        int len = src.Length;
        for (int off = 0; off < 8; off++)
        {
            int ko = Guard + off, to = Guard + ((off + 3) & 7), io = Guard + ((off + 5) & 7), oo = Guard + ((off + 1) & 7);
            var gk = Buf(B, 0xA5); var gt = Buf(tweak.Length, 0xA5); var gi = Buf(len, 0xA5); var go = Buf(len, 0x5A);
            key.CopyTo(gk, ko); tweak.CopyTo(gt, to); src.CopyTo(gi, io);
            f(gk.AsSpan(ko, B), gt.AsSpan(to, tweak.Length), gi.AsSpan(io, len), go.AsSpan(oo, len));
            Check(go.AsSpan(oo, len).SequenceEqual(want), $"{name}{n}: result", off);
            Check(GuardsOk(go, oo, len, 0x5A), $"{name}{n}: guard bytes around the output", off);
            Check(gk.AsSpan(ko, B).SequenceEqual(key) && gt.AsSpan(to, tweak.Length).SequenceEqual(tweak)
                  && gi.AsSpan(io, len).SequenceEqual(src) && GuardsOk(gk, ko, B, 0xA5)
                  && GuardsOk(gt, to, tweak.Length, 0xA5) && GuardsOk(gi, io, len, 0xA5),
                  $"{name}{n}: inputs unchanged", off);
            if (len > 0)
            {
                src.CopyTo(go, oo);
                f(gk.AsSpan(ko, B), gt.AsSpan(to, tweak.Length), go.AsSpan(oo, len), go.AsSpan(oo, len));
                Check(go.AsSpan(oo, len).SequenceEqual(want) && GuardsOk(go, oo, len, 0x5A), $"{name}{n}: in place", off);
            }
        }
    }

    static void Throws(Action a, string param, string what)
    {
        try { a(); Check(false, what + ": no exception", 0); }
        catch (ArgumentException e) { Check(e.ParamName == param, $"{what}: ParamName {e.ParamName} (want {param})", 0); }
        catch (Exception e) { Check(false, $"{what}: {e.GetType().Name}", 0); }
    }

    static void ArgumentChecks(Entry e)
    {
        int B = e.Bytes;
        var k = new byte[B]; var t = new byte[16]; var buf = new byte[4 * B + 8];
        Throws(() => e.Enc(k.AsSpan(1), t, buf.AsSpan(0, B), new byte[B]), "key", "short key");
        Throws(() => e.Enc(k, t.AsSpan(1), buf.AsSpan(0, B), new byte[B]), "tweak", "short tweak");
        Throws(() => e.Dec(k, t, buf.AsSpan(0, B - 1), new byte[B]), "input", "short input");
        Throws(() => e.Dec(k, t, buf.AsSpan(0, B), new byte[B + 1]), "output", "long output");
        Throws(() => e.Enc(k, t, buf.AsSpan(0, B), buf.AsSpan(8, B)), "output", "partial overlap");
        Throws(() => e.EncBlocks(k, new byte[32], buf.AsSpan(0, B + 1), new byte[B + 1]), "input", "ragged input");
        Throws(() => e.EncBlocks(k, new byte[16], buf.AsSpan(0, 2 * B), new byte[2 * B]), "tweaks", "short tweaks");
        Throws(() => e.DecBlocks(k, new byte[32], buf.AsSpan(0, 2 * B), new byte[B]), "output", "short output");
        Throws(() => e.DecBlocks(k, new byte[32], buf.AsSpan(0, 2 * B), buf.AsSpan(8, 2 * B)), "output", "partial overlap (blocks)");
    }

    static byte[] Hex(string s) => Convert.FromHexString(s);

    static int Main(string[] args)
    {
        if (args.Length != 2)
        {
            Console.Error.WriteLine("usage: harness CLASS VECTORS   (classes: " + string.Join(", ", All.Select(x => x.Name)) + ")");
            return 2;
        }
        var e = All.FirstOrDefault(x => x.Name == args[0]);
        if (e is null) { Console.Error.WriteLine($"unknown class {args[0]}"); return 2; }
        int B = e.Bytes;
        Console.WriteLine($"kernel: block={e.BlockKernel()} blocks={e.BlocksKernel()}");
        ArgumentChecks(e);
        long records = 0, batches = 0;
        foreach (var raw in File.ReadLines(args[1]))
        {
            lineNo++;
            var line = raw.Trim();
            if (line.Length == 0 || line[0] == '#') continue;
            var p = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (p[0] == "V" && p.Length == 5)
            {
                byte[] key = Hex(p[1]), tw = Hex(p[2]), pt = Hex(p[3]), ct = Hex(p[4]);
                if (key.Length != B || tw.Length != 16 || pt.Length != B || ct.Length != B) { Console.Error.WriteLine($"malformed vector line {lineNo}"); return 2; }
                Run(e.Enc, "encrypt", B, key, tw, pt, ct);
                Run(e.Dec, "decrypt", B, key, tw, ct, pt);
                records++;
            }
            else if (p[0] == "B")
            {
                int n = int.Parse(p[1]);
                byte[] key = Hex(p[2]);
                byte[] tw = n > 0 ? Hex(p[3]) : Array.Empty<byte>(), pt = n > 0 ? Hex(p[4]) : Array.Empty<byte>(), ct = n > 0 ? Hex(p[5]) : Array.Empty<byte>();
                if (key.Length != B || tw.Length != 16 * n || pt.Length != B * n || ct.Length != B * n) { Console.Error.WriteLine($"malformed batch line {lineNo}"); return 2; }
                Run(e.EncBlocks, "EncryptBlocks", B, key, tw, pt, ct, $" n={n}");
                Run(e.DecBlocks, "DecryptBlocks", B, key, tw, ct, pt, $" n={n}");
                batches++;
            }
            else { Console.Error.WriteLine($"unknown line {lineNo}"); return 2; }
        }
        Console.WriteLine($"harness: {records} vectors, {batches} block batches");
        Console.WriteLine($"harness: {passed} passed, {failed} failed");
        return failed > 0 ? 1 : (records == 0 ? 2 : 0);
    }
}
