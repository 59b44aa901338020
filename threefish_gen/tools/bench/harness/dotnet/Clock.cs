// The core-clock estimate both C# bench programs use (Bench.cs, SingleBench.cs; appended to each by
// tools/bench/dotnet.py and cs_single.py: the programs' own using lines cover it): a chain of
// dependent adds/xors, 1 cycle each, that the JIT cannot fold (the operands change between calls).
static partial class Bench
{
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

    // GHz: 16 x iters dependent operations over the time they took
    static double Ghz()
    {
        long t0 = Stopwatch.GetTimestamp();
        ulong r = AddChain(ClockIters, seedA, seedB);
        long t1 = Stopwatch.GetTimestamp();
        seedA ^= r & 1;   // keep the result alive
        return 16.0 * ClockIters / ((t1 - t0) * 1e9 / Stopwatch.Frequency);
    }
}
