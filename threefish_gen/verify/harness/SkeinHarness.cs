// threefish-gen verify harness for the C# Skein classes (--target csharp --primitive skein).
// Usage: skeinharness CLASS VECTORS [KERNEL]   (vector file of verify/skein_c_abi.py; see skein_harness.c)
// KERNEL: the UBI kernel HashMany and tree leaves must use here (the class's ManyKernel:
// vector512-lanes, vector256-lanes or scalar); the harness prints "kernel: NAME" either way.
// Every unkeyed H record (the golden ones included) also goes through HashMany as 9 copies (lanes
// groups and a scalar rest).
// H records: Hash / Mac (one-shot, output at offsets 0..7 between guard bytes) and Incremental in
// seven chunkings with the message at offsets 0..7; M records: HashMany; E: bad arguments throw;
// T records: HashTree and Incremental.Tree in seven chunkings; B records (bit lengths, any UBI
// arguments): HashBits / MacBits / HashWithParameters where the arguments allow, and Incremental
// (WithParameters, or the key/personalization constructor) with the whole bytes through Append or
// AppendBits in seven chunkings (or all in one AppendBits) and the partial byte through AppendBits; after a partial byte
// Append and AppendBits must throw and change nothing.
// Prints "harness: N passed, M failed"; exit 1 on a failure.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

delegate void HashFn(ReadOnlySpan<byte> message, Span<byte> output, ReadOnlySpan<byte> pers);
delegate void MacFn(ReadOnlySpan<byte> key, ReadOnlySpan<byte> message, Span<byte> output, ReadOnlySpan<byte> pers);
delegate void ManyFn(IReadOnlyList<byte[]> messages, Span<byte> outputs, int outputLength);
delegate void TreeFn(ReadOnlySpan<byte> message, Span<byte> output, int leaf, int fan, int maxHeight);
delegate void HashBitsFn(ReadOnlySpan<byte> message, long bitLength, Span<byte> output, ReadOnlySpan<byte> pers);
delegate void MacBitsFn(ReadOnlySpan<byte> key, ReadOnlySpan<byte> message, long bitLength, Span<byte> output,
                        ReadOnlySpan<byte> pers);
// the UBI arguments in order: key, personalization, public key, key identifier, nonce
delegate void ParamsFn(ReadOnlySpan<byte> message, Span<byte> output, byte[][] args);

interface IInc
{
    void Append(ReadOnlySpan<byte> data);
    void AppendBits(ReadOnlySpan<byte> data, long bitLength);
    void Final(Span<byte> output);
}

sealed record Entry(string Name, int StateBytes, HashFn Hash, MacFn Mac, ManyFn Many, Func<int, byte[], byte[], IInc> New,
                    TreeFn HashTree, Func<int, int, int, int, IInc> NewTree, HashBitsFn HashBits, MacBitsFn MacBits,
                    ParamsFn HashWithParameters, Func<int, byte[][], IInc> NewParams, Func<string> ManyKernel);

static partial class SkeinHarness
{
    static long passed, failed, line;

    static void Check(bool ok, string what)
    {
        if (ok) { passed++; return; }
        failed++;
        if (failed <= 20) Console.WriteLine($"FAIL line {line}: {what}");
    }

    static byte[] Hex(string s) => s == "-" ? Array.Empty<byte>() : Convert.FromHexString(s);

    static int Chunk(int k, int b, ref ulong seed)
    {
        int[] fixedSizes = { 1, 3, b - 1, b, b + 1, 2 * b + 3 };
        if (k < fixedSizes.Length) return fixedSizes[k];
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        return (int)((seed >> 33) % (ulong)(2 * b + 6));
    }

    static void Stream(Entry e, IInc x, byte[] msg, byte[] want, int k, int off)
    {
        var buf = new byte[msg.Length + 8];
        msg.CopyTo(buf, off);
        ulong seed = (ulong)line * 131 + (ulong)k;
        int pos = 0;
        while (pos < msg.Length)
        {
            int c = Math.Min(Chunk(k, e.StateBytes, ref seed), msg.Length - pos);
            x.Append(buf.AsSpan(off + pos, c));
            pos += c;
        }
        var outb = new byte[want.Length + 16 + off];
        Array.Fill(outb, (byte)0xA5);
        x.Final(outb.AsSpan(8 + off, want.Length));
        Check(outb.AsSpan(8 + off, want.Length).SequenceEqual(want), $"streamed digest (chunking {k}, offset {off})");
        Check(outb.Take(8 + off).All(v => v == 0xA5) && outb.Skip(8 + off + want.Length).All(v => v == 0xA5),
              "guard bytes");
        Check(buf.AsSpan(off, msg.Length).SequenceEqual(msg), "message unchanged");
    }

    static void RecordH(Entry e, string[] t)
    {
        int outlen = int.Parse(t[1]);
        byte[] key = Hex(t[2]), pers = Hex(t[3]), msg = Hex(t[4]), dig = Hex(t[5]);
        Check(dig.Length == outlen, "digest length");
        if (key.Length == 0 && pers.Length == 0)
            ManyCopies(e, msg, dig);
        for (int off = 0; off < 8; off += 3)
        {
            var outb = new byte[outlen + 16];
            if (key.Length == 0)
            {
                e.Hash(msg, outb.AsSpan(8 + off % 8, outlen), pers);
                Check(outb.AsSpan(8 + off % 8, outlen).SequenceEqual(dig), "Hash one-shot");
            }
            Array.Fill(outb, (byte)0);
            e.Mac(key, msg, outb.AsSpan(off, outlen), pers);
            Check(outb.AsSpan(off, outlen).SequenceEqual(dig), "Mac one-shot");
        }
        for (int k = 0; k < 7; k++)
            for (int off = 0; off < 8; off += k == 6 ? 1 : 3)
                Stream(e, e.New(outlen, key, pers), msg, dig, k, off);
        var again = e.New(outlen, key, pers);       // GetHashAndReset starts over: same result twice
        for (int r = 0; r < 2; r++)
            Stream(e, again, msg, dig, 3, 0);
    }

    // 9 copies of msg through HashMany: with 8 or 4 lanes, whole lane groups and a scalar rest.
    static void ManyCopies(Entry e, byte[] msg, byte[] dig)
    {
        const int n = 9;
        int outlen = dig.Length;
        var outs = new byte[n * outlen + 2];
        e.Many(Enumerable.Repeat(msg, n).ToList(), outs.AsSpan(1, n * outlen), outlen);
        for (int i = 0; i < n; i++)
            Check(outs.AsSpan(1 + i * outlen, outlen).SequenceEqual(dig), $"HashMany of {n} copies, digest {i}");
        Check(outs[0] == 0 && outs[n * outlen + 1] == 0, "HashMany guard bytes");
    }

    static void RecordT(Entry e, string[] t)
    {
        int outlen = int.Parse(t[1]), leaf = int.Parse(t[2]), fan = int.Parse(t[3]), height = int.Parse(t[4]);
        byte[] msg = Hex(t[5]), dig = Hex(t[6]);
        var outb = new byte[outlen];
        e.HashTree(msg, outb, leaf, fan, height);
        Check(outb.AsSpan().SequenceEqual(dig), "HashTree one-shot");
        for (int k = 0; k < 7; k++)
            for (int off = 0; off < 8; off += 5)
                Stream(e, e.NewTree(outlen, leaf, fan, height), msg, dig, k, off);
    }

    static void StreamBits(Entry e, IInc x, byte[] msg, long nbits, byte[] want, int k, int off)
    {
        int whole = (int)(nbits / 8), r = (int)(nbits % 8);
        var buf = new byte[msg.Length + 8];
        msg.CopyTo(buf, off);
        ulong seed = (ulong)line * 131 + (ulong)k;
        bool ok = true;
        if (k == 7)                   // the whole message in one call
            x.AppendBits(buf.AsSpan(off, msg.Length), nbits);
        else
        {
            int pos = 0;
            while (pos < whole)
            {
                int c = Math.Min(Chunk(k, e.StateBytes, ref seed), whole - pos);
                if (k % 2 == 1)
                    x.Append(buf.AsSpan(off + pos, c));
                else
                    x.AppendBits(buf.AsSpan(off + pos, c), 8L * c);
                pos += c;
            }
            x.AppendBits(buf.AsSpan(off + whole, msg.Length - whole), r);
        }
        if (r != 0)                   // the message has ended: nothing more goes in
        {
            ok &= ThrowsInvalid(() => x.AppendBits(buf.AsSpan(off, msg.Length), 8));
            ok &= ThrowsInvalid(() => x.AppendBits(buf.AsSpan(off, msg.Length), 0));
            ok &= ThrowsInvalid(() => x.Append(buf.AsSpan(off, msg.Length)));
        }
        Check(ok, "after a partial byte, Append and AppendBits throw");
        var outb = new byte[want.Length + 16 + off];
        Array.Fill(outb, (byte)0xA5);
        x.Final(outb.AsSpan(8 + off, want.Length));
        Check(outb.AsSpan(8 + off, want.Length).SequenceEqual(want), $"streamed digest, bits (chunking {k}, offset {off})");
        Check(outb.Take(8 + off).All(v => v == 0xA5) && outb.Skip(8 + off + want.Length).All(v => v == 0xA5),
              "guard bytes");
        Check(buf.AsSpan(off, msg.Length).SequenceEqual(msg), "message unchanged");
    }

    static bool ThrowsInvalid(Action a)
    {
        try { a(); return false; }
        catch (InvalidOperationException) { return true; }
    }

    static void RecordB(Entry e, string[] t)
    {
        int outlen = int.Parse(t[1]);
        long nbits = long.Parse(t[2]);
        byte[][] args = Enumerable.Range(3, 5).Select(i => Hex(t[i])).ToArray();
        byte[] msg = Hex(t[8]), dig = Hex(t[9]);
        bool others = args[2].Length + args[3].Length + args[4].Length != 0;
        Check(dig.Length == outlen && msg.Length == (nbits + 7) / 8, "digest and message lengths");
        var outb = new byte[outlen + 8];
        if (!others && args[0].Length == 0)
        {
            e.HashBits(msg, nbits, outb.AsSpan(3, outlen), args[1]);
            Check(outb.AsSpan(3, outlen).SequenceEqual(dig), "HashBits one-shot");
        }
        if (!others)
        {
            e.MacBits(args[0], msg, nbits, outb.AsSpan(5, outlen), args[1]);
            Check(outb.AsSpan(5, outlen).SequenceEqual(dig), "MacBits one-shot");
        }
        if (nbits % 8 == 0)
        {
            e.HashWithParameters(msg, outb.AsSpan(1, outlen), args);
            Check(outb.AsSpan(1, outlen).SequenceEqual(dig), "HashWithParameters one-shot");
        }
        for (int k = 0; k < 8; k++)
            for (int off = 0; off < 8; off += 3)
                StreamBits(e, !others && (k + off) % 2 == 1 ? e.New(outlen, args[0], args[1]) : e.NewParams(outlen, args),
                           msg, nbits, dig, k, off);
        var again = e.NewParams(outlen, args);      // GetHashAndReset starts over: same result twice
        for (int r = 0; r < 2; r++)
            StreamBits(e, again, msg, nbits, dig, 3, 0);
    }

    static void RecordM(Entry e, string[] t)
    {
        int outlen = int.Parse(t[1]), n = int.Parse(t[2]);
        var msgs = new List<byte[]>();
        var want = new byte[n * outlen];
        for (int i = 0; i < n; i++)
        {
            msgs.Add(Hex(t[3 + 2 * i]));
            Hex(t[4 + 2 * i]).CopyTo(want, i * outlen);
        }
        var outs = new byte[n * outlen + 2];
        e.Many(msgs, outs.AsSpan(1, n * outlen), outlen);
        Check(outs.AsSpan(1, n * outlen).SequenceEqual(want), $"HashMany of {n}");
    }

    static void Throws(Action a, string what)
    {
        try { a(); Check(false, what); }
        catch (ArgumentException) { Check(true, what); }
    }

    static void RecordE(Entry e)
    {
        Throws(() => e.Hash(new byte[1], Span<byte>.Empty, default), "Hash with an empty output throws");
        Throws(() => e.Mac(new byte[3], new byte[1], Span<byte>.Empty, default), "Mac with an empty output throws");
        Throws(() => e.Many(new List<byte[]> { new byte[1] }, new byte[4], 0), "HashMany with outputLength 0 throws");
        Throws(() => e.Many(new List<byte[]> { new byte[1], new byte[1] }, new byte[4], 4), "HashMany with short outputs throws");
        Throws(() => e.New(0, Array.Empty<byte>(), Array.Empty<byte>()), "Incremental with length 0 throws");
        Throws(() => e.NewTree(32, 0, 1, 2), "a tree with leaf 0 throws");
        Throws(() => e.NewTree(32, 1, 1, 1), "a tree with height 1 throws");
        Throws(() => e.HashBits(new byte[1], 9, new byte[4], default), "HashBits with bitLength past the data throws");
        Throws(() => e.HashBits(new byte[1], -1, new byte[4], default), "HashBits with a negative bitLength throws");
        Throws(() => e.HashBits(new byte[1], 3, Span<byte>.Empty, default), "HashBits with an empty output throws");
        var tree = e.NewTree(4, 1, 1, 2);
        var z = new byte[2];
        tree.AppendBits(z, 8);
        Check(ThrowsInvalid(() => tree.AppendBits(z, 7)), "AppendBits of a partial byte on a tree throws");
        tree.AppendBits(z.AsSpan(1), 8);
        var got = new byte[4];
        tree.Final(got);
        var want = new byte[4];
        e.HashTree(z, want, 1, 1, 2);
        Check(got.AsSpan().SequenceEqual(want), "the refused AppendBits on a tree changed nothing");
    }

    static int Main(string[] args)
    {
        if (args.Length != 2 && args.Length != 3) { Console.WriteLine("usage: skeinharness CLASS VECTORS [KERNEL]"); return 2; }
        var e = All.FirstOrDefault(x => x.Name == args[0]);
        if (e == null) { Console.WriteLine($"unknown class {args[0]}"); return 2; }
        Console.WriteLine($"kernel: {e.ManyKernel()}");
        if (args.Length == 3)
            Check(e.ManyKernel() == args[2], $"ManyKernel is {e.ManyKernel()}, expected {args[2]}");
        foreach (var raw in File.ReadLines(args[1]))
        {
            line++;
            var t = raw.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (t.Length == 0 || t[0].StartsWith('#')) continue;
            switch (t[0])
            {
                case "H": RecordH(e, t); break;
                case "M": RecordM(e, t); break;
                case "E": RecordE(e); break;
                case "T": RecordT(e, t); break;
                case "B": RecordB(e, t); break;
                default: Check(false, "unknown record kind"); break;
            }
        }
        Console.WriteLine($"harness: {passed} passed, {failed} failed");
        return failed == 0 ? 0 : 1;
    }
}
