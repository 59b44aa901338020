// threefish-gen C# benchmark: bulk (EncryptBlocks over 4 KiB, in L1) and chained single block
// (Encrypt in place, each block depends on the previous one) for every registered class, and,
// when built with -p:DefineConstants=BOUNCY and the BouncyCastle.Cryptography package, its
// ThreefishEngine.  Prints one line per measurement:
//   ROW <name> <bits> <mode> <ns/byte> <GHz> <kernel>
// GHz is the core clock estimated around each sample by a chain of dependent adds/xors
// (1 cycle each, which the JIT cannot fold: the operands come from the command line); c/B =
// ns/byte * GHz.  Medians of SAMPLES samples (TFBENCH_SAMPLES overrides); the generated classes of
// one size and mode are timed alternately, sample by sample, and every sample is printed too:
//   SAMPLE <name> <bits> <mode> <round> <c/B> <ns/B>
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
    const long ClockIters = 1_000_000;    // Ghz (Clock.cs)

    static double Median(double[] v) { var s = v.OrderBy(x => x).ToArray(); return s[s.Length / 2]; }

    // One sample: body(reps) timed, (ns per byte, GHz around it); bytesPerRep bytes per repetition.
    static (double, double) Sample(Action<int> body, int reps, int bytesPerRep)
    {
        double g0 = Ghz();
        long t0 = Stopwatch.GetTimestamp();
        body(reps);
        long t1 = Stopwatch.GetTimestamp();
        double g1 = Ghz();
        return ((t1 - t0) * 1e9 / Stopwatch.Frequency / ((double)reps * bytesPerRep), (g0 + g1) / 2);
    }

    // Runs body(reps) and returns (ns per byte, GHz) medians of Samples samples.
    static (double, double) Measure(Action<int> body, int bytesPerRep)
    {
        int reps = Calibrate(body);
        var nsb = new double[Samples];
        var ghz = new double[Samples];
        for (int s = 0; s < Samples; s++)
            (nsb[s], ghz[s]) = Sample(body, reps, bytesPerRep);
        return (Median(nsb), Median(ghz));
    }

    static void Row(string name, int bits, string mode, (double nsb, double ghz) m, string kernel) =>
        Console.WriteLine($"ROW {name} {bits} {mode} {m.nsb:F4} {m.ghz:F3} {kernel}");

    // Calibrates body to ~10 ms per sample: the repetitions to run.
    static int Calibrate(Action<int> body)
    {
        int reps = 1;
        body(8);
        while (true)
        {
            long t0 = Stopwatch.GetTimestamp();
            body(reps);
            double ms = (Stopwatch.GetTimestamp() - t0) * 1e3 / Stopwatch.Frequency;
            if (ms > 10) return reps;
            reps *= 2;
        }
    }

    // The rows of one block size and mode, timed alternately sample by sample (round k times
    // every row once, in the same order), so sample k of two rows saw the same load: besides
    // the ROW median, every sample is printed as  SAMPLE <name> <bits> <mode> <round> <c/B> <ns/B>
    // (tools/bench/dotnet.py takes per-round ratios of ns/B: the two samples of a round ran at the
    // same clock, and the clock estimate's own noise stays out of the ratio).
    static void Alternated(string mode, int bits, (Entry e, Action<int> body, int bytes, string kernel)[] rows)
    {
        var reps = rows.Select(r => Calibrate(r.body)).ToArray();
        int samples = SampleCount();
        var nsb = rows.Select(_ => new double[samples]).ToArray();
        var ghz = rows.Select(_ => new double[samples]).ToArray();
        for (int s = 0; s < samples; s++)
            for (int i = 0; i < rows.Length; i++)
                (nsb[i][s], ghz[i][s]) = Sample(rows[i].body, reps[i], rows[i].bytes);
        for (int i = 0; i < rows.Length; i++)
        {
            Row(rows[i].e.Name, bits, mode, (Median(nsb[i]), Median(ghz[i])), rows[i].kernel);
            for (int s = 0; s < samples; s++)
                Console.WriteLine($"SAMPLE {rows[i].e.Name} {bits} {mode} {s} {nsb[i][s] * ghz[i][s]:F4} {nsb[i][s]:F5}");
        }
    }

    // Samples per row: TFBENCH_SAMPLES (1..1001), else 9.
    static int SampleCount() =>
        int.TryParse(Environment.GetEnvironmentVariable("TFBENCH_SAMPLES"), out int n) && n >= 1 && n <= 1001 ? n : Samples;

    static int Main(string[] args)
    {
        if (args.Length > 0) { seedA = ulong.Parse(args[0]); }
        var filter = args.Skip(1).ToHashSet();
        var rng = new Random(1);
        foreach (var size in All.Where(x => filter.Count == 0 || filter.Contains(x.Name)).GroupBy(x => x.Bytes))
        {
            int B = size.Key, n = 4096 / B;
            var key = new byte[B]; var tweaks = new byte[16 * n]; var buf = new byte[4096]; var tw = new byte[16];
            rng.NextBytes(key); rng.NextBytes(tweaks); rng.NextBytes(buf); rng.NextBytes(tw);
            var blk = buf.AsSpan(0, B).ToArray();
            Alternated("bulk", B * 8, size.Select(e => (e, (Action<int>)(reps =>
                { for (int r = 0; r < reps; r++) e.EncBlocks(key, tweaks, buf, buf); }), 4096, e.BlocksKernel())).ToArray());
            Alternated("chained", B * 8, size.Select(e => (e, (Action<int>)(reps =>
                { for (int r = 0; r < reps; r++) e.Enc(key, tw, blk, blk); }), B, e.BlockKernel())).ToArray());
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
