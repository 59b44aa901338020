// threefish-gen C# benchmark: bulk (EncryptBlocks over 4 KiB, in L1) and chained single block
// (Encrypt in place, each block depends on the previous one) for every registered class, and,
// when built with -p:DefineConstants=BOUNCY and the BouncyCastle.Cryptography package, its
// ThreefishEngine.  Prints one line per measurement:
//   ROW <name> <bits> <mode> <ns/byte> <GHz> <kernel>
// GHz is the core clock estimated around each sample by a chain of dependent adds/xors
// (1 cycle each, which the JIT cannot fold: the operands come from the command line); c/B =
// ns/byte * GHz.  Medians of SAMPLES samples.
using System;
using System.Diagnostics;
using System.Linq;
using System.Runtime.CompilerServices;

delegate void OneFn(ReadOnlySpan<byte> key, ReadOnlySpan<byte> tweak, ReadOnlySpan<byte> input, Span<byte> output);

sealed record Entry(string Name, int Bytes, OneFn Enc, OneFn Dec, OneFn EncBlocks, OneFn DecBlocks,
                    Func<string> BlockKernel, Func<string> BlocksKernel);

static partial class Bench
{
    const int Samples = 9;
    static ulong seedA = 1, seedB = 3;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static ulong AddChain(long iters, ulong a, ulong b)
    {
        ulong x = a;
        for (long i = 0; i < iters; i++)
        {
            x += b; x ^= a; x += b; x ^= a; x += b; x ^= a; x += b; x ^= a;
            x += b; x ^= a; x += b; x ^= a; x += b; x ^= a; x += b; x ^= a;
        }
        return x;
    }

    static double Ghz()
    {
        const long iters = 1_000_000;
        long t0 = Stopwatch.GetTimestamp();
        ulong r = AddChain(iters, seedA, seedB);
        long t1 = Stopwatch.GetTimestamp();
        seedA ^= r & 1;   // keep the result alive
        double ns = (t1 - t0) * 1e9 / Stopwatch.Frequency;
        return 16.0 * iters / ns;
    }

    static double Median(double[] v) { var s = v.OrderBy(x => x).ToArray(); return s[s.Length / 2]; }

    // Runs body(reps) and returns (ns per byte, GHz) medians; bytesPerRep bytes per repetition.
    static (double, double) Measure(Action<int> body, int bytesPerRep)
    {
        int reps = 1;
        body(8);
        while (true)    // calibrate to ~10 ms per sample
        {
            long t0 = Stopwatch.GetTimestamp();
            body(reps);
            double ms = (Stopwatch.GetTimestamp() - t0) * 1e3 / Stopwatch.Frequency;
            if (ms > 10) break;
            reps *= 2;
        }
        var nsb = new double[Samples];
        var ghz = new double[Samples];
        for (int s = 0; s < Samples; s++)
        {
            double g0 = Ghz();
            long t0 = Stopwatch.GetTimestamp();
            body(reps);
            long t1 = Stopwatch.GetTimestamp();
            double g1 = Ghz();
            nsb[s] = (t1 - t0) * 1e9 / Stopwatch.Frequency / ((double)reps * bytesPerRep);
            ghz[s] = (g0 + g1) / 2;
        }
        return (Median(nsb), Median(ghz));
    }

    static void Row(string name, int bits, string mode, (double nsb, double ghz) m, string kernel) =>
        Console.WriteLine($"ROW {name} {bits} {mode} {m.nsb:F4} {m.ghz:F3} {kernel}");

    static int Main(string[] args)
    {
        if (args.Length > 0) { seedA = ulong.Parse(args[0]); }
        var filter = args.Skip(1).ToHashSet();
        var rng = new Random(1);
        foreach (var e in All.Where(x => filter.Count == 0 || filter.Contains(x.Name)))
        {
            int B = e.Bytes, n = 4096 / B;
            var key = new byte[B]; var tweaks = new byte[16 * n]; var buf = new byte[4096]; var tw = new byte[16];
            rng.NextBytes(key); rng.NextBytes(tweaks); rng.NextBytes(buf); rng.NextBytes(tw);
            Row(e.Name, B * 8, "bulk", Measure(reps => { for (int r = 0; r < reps; r++) e.EncBlocks(key, tweaks, buf, buf); }, 4096),
                e.BlocksKernel());
            var blk = buf.AsSpan(0, B).ToArray();
            Row(e.Name, B * 8, "chained", Measure(reps => { for (int r = 0; r < reps; r++) e.Enc(key, tw, blk, blk); }, B),
                e.BlockKernel());
        }
#if BOUNCY
        foreach (int bits in new[] { 256, 512, 1024 })
        {
            int B = bits / 8;
            var eng = new Org.BouncyCastle.Crypto.Engines.ThreefishEngine(bits);
            var key = new byte[B]; var tw = new byte[16]; var buf = new byte[4096];
            rng.NextBytes(key); rng.NextBytes(tw); rng.NextBytes(buf);
            eng.Init(true, new Org.BouncyCastle.Crypto.Parameters.TweakableBlockCipherParameters(
                new Org.BouncyCastle.Crypto.Parameters.KeyParameter(key), tw));
            // bulk: ProcessBlock over 4 KiB with one tweak (BouncyCastle has no per-block tweak batch)
            Row("BouncyCastle.ThreefishEngine", bits, "bulk", Measure(reps =>
            {
                for (int r = 0; r < reps; r++)
                    for (int o = 0; o < 4096; o += B)
                        eng.ProcessBlock(buf, o, buf, o);
            }, 4096), "managed");
            Row("BouncyCastle.ThreefishEngine", bits, "chained", Measure(reps =>
            {
                for (int r = 0; r < reps; r++)
                    eng.ProcessBlock(buf, 0, buf, 0);
            }, B), "managed");
            // agreement with the generated v1.3 class on one block (BouncyCastle implements Skein 1.3)
            var ours = All.FirstOrDefault(x => x.Bytes == B && x.Name.Contains("V13"));
            if (ours != null)
            {
                var a = new byte[B]; var b = new byte[B];
                eng.ProcessBlock(buf, 0, a, 0);
                ours.Enc(key, tw, buf.AsSpan(0, B), b);
                Console.WriteLine($"AGREE BouncyCastle {bits} {(a.AsSpan().SequenceEqual(b) ? "yes" : "NO")}");
            }
        }
#endif
        return 0;
    }
}
