// threefish-gen C# single-block bench (threefish_gen/tools/bench/cs_single.py): BouncyCastle's
// ThreefishEngine and generated classes (this tree's and, rendered by an older revision, its own
// under another namespace) timed in one process, sample by sample in rotating order; every call
// direct (no delegate).  Per row: ns/B min, q10 and median of the rounds, and the median (q10..q90)
// of the per-round ratios of its ns/B to BouncyCastle's (the first row).  c/B: min ns/B x the
// median clock of the add-chain estimate (under load that estimate reads low: compare ns/B).
using System;
using System.Diagnostics;
using System.Linq;
using System.Runtime.CompilerServices;

static partial class Bench
{
    const long ClockIters = 500_000;    // Ghz (Clock.cs)
    static Random rng = new Random(1);
    static double TargetMs = double.TryParse(Environment.GetEnvironmentVariable("MB_MS"), out var ms) ? ms : 5;
    static byte[] Rnd(int n) { var b = new byte[n]; rng.NextBytes(b); return b; }

    static int Calibrate(Action<int> body)
    {
        int reps = 1; body(8);
        while (true)
        {
            long t0 = Stopwatch.GetTimestamp(); body(reps);
            if ((Stopwatch.GetTimestamp() - t0) * 1e3 / Stopwatch.Frequency > TargetMs) return reps;
            reps *= 2;
        }
    }

    static double Med(double[] v) { var s = v.OrderBy(x => x).ToArray(); return s.Length % 2 == 1 ? s[s.Length / 2] : (s[s.Length / 2 - 1] + s[s.Length / 2]) / 2; }
    static double Q(double[] v, double q) { var s = v.OrderBy(x => x).ToArray(); return s[(int)Math.Round(q * (s.Length - 1))]; }

    static void Run(string title, int bytes, int samples, (string name, Action<int> body)[] rows)
    {
        var reps = rows.Select(r => Calibrate(r.body)).ToArray();
        var nsb = rows.Select(_ => new double[samples]).ToArray();
        var ghz = new double[samples];
        for (int s = 0; s < samples; s++)
        {
            double g0 = Ghz();
            for (int i0 = 0; i0 < rows.Length; i0++)
            {
                int i = (i0 + s) % rows.Length;       // rotate the order each round
                long t0 = Stopwatch.GetTimestamp(); rows[i].body(reps[i]); long t1 = Stopwatch.GetTimestamp();
                nsb[i][s] = (t1 - t0) * 1e9 / Stopwatch.Frequency / ((double)reps[i] * bytes);
            }
            ghz[s] = (g0 + Ghz()) / 2;
        }
        double g = Med(ghz);
        Console.WriteLine($"== {title}  (GHz median {g:F2}, {samples} rounds; c/B = ns/B x GHz; ratio = per-round ns ratio to BC: median [q10..q90])");
        for (int i = 0; i < rows.Length; i++)
        {
            var ratio = Enumerable.Range(0, samples).Select(s => nsb[i][s] / nsb[0][s]).ToArray();
            var cpb = Enumerable.Range(0, samples).Select(s => nsb[i][s] * ghz[s]).ToArray();
            var ns = nsb[i];
            Console.WriteLine($"  {rows[i].name,-28} ns/B min {ns.Min(),7:F3} q10 {Q(ns, 0.1),7:F3} med {Med(ns),7:F3}  c/B(min x GHz med) {ns.Min() * g,6:F2}  ratio {Med(ratio):F3} [{Q(ratio, 0.1):F3}..{Q(ratio, 0.9):F3}]");
        }
    }

    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "all";
        int samples = args.Length > 1 ? int.Parse(args[1]) : 15;
        All(mode, samples);
        return 0;
    }
}
