// BouncyCastle.Cryptography's Skein (independent of threefish-gen) with SkeinParameters, for
// tests/test_skein.py: one line per case on stdin,
//   <state bits> <digest bits> <key> <personalization> <public key> <key identifier> <nonce> <message>
// (hex, '-' = absent); prints "<digest hex> <path>" per line.
//
// path "api": SkeinDigest.Init(SkeinParameters), BouncyCastle's public API.  That API takes a
// parameter set only with a key of at least 16 bytes and with at most one argument besides the
// key: SkeinEngine.InitParams sorts its private Parameter objects, which are not comparable, so
// two or more throw.  path "fields": the other sets go through the same engine with the sorted
// arguments written into its fields by reflection (key, preMessageParameters in type order),
// then BouncyCastle's own CreateInitialState and UbiInit(message), which is what Init runs after
// InitParams.  Every set the API takes also runs the field path, and the two must agree (exit 3).
using System;
using System.Collections.Generic;
using System.Reflection;
using Org.BouncyCastle.Crypto.Digests;
using Org.BouncyCastle.Crypto.Parameters;

static class BouncySkein
{
    const BindingFlags Any = BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public;

    static byte[]? Hex(string s) => s == "-" ? null : Convert.FromHexString(s);

    static byte[] ViaApi(int state, int bits, byte[]? key, (int, byte[])[] args, byte[] msg)
    {
        var b = new SkeinParameters.Builder();
        if (key != null) b.SetKey(key);
        foreach (var (type, value) in args) b.Set(type, value);
        var d = new SkeinDigest(state, bits);
        d.Init(b.Build());
        return Finish(d, msg);
    }

    static byte[] ViaFields(int state, int bits, byte[]? key, (int, byte[])[] args, byte[] msg)
    {
        var d = new SkeinDigest(state, bits);
        var engine = (SkeinEngine)typeof(SkeinDigest).GetField("engine", Any)!.GetValue(d)!;
        var et = typeof(SkeinEngine);
        var ptype = et.GetField("preMessageParameters", Any)!.FieldType.GetElementType()!;   // SkeinEngine.Parameter
        var pre = Array.CreateInstance(ptype, args.Length);
        for (int i = 0; i < args.Length; i++)
            pre.SetValue(Activator.CreateInstance(ptype, Any, null, new object[] { args[i].Item1, args[i].Item2 }, null), i);
        et.GetField("key", Any)!.SetValue(engine, key);
        et.GetField("preMessageParameters", Any)!.SetValue(engine, pre);
        et.GetField("postMessageParameters", Any)!.SetValue(engine, Array.CreateInstance(ptype, 0));
        et.GetMethod("CreateInitialState", Any)!.Invoke(engine, null);
        et.GetMethod("UbiInit", Any)!.Invoke(engine, new object[] { 48 });
        return Finish(d, msg);
    }

    static byte[] Finish(SkeinDigest d, byte[] msg)
    {
        d.BlockUpdate(msg, 0, msg.Length);
        var outb = new byte[d.GetDigestSize()];
        d.DoFinal(outb, 0);
        return outb;
    }

    static int Main()
    {
        string? line;
        while ((line = Console.In.ReadLine()) != null)
        {
            var t = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (t.Length != 8) { Console.Error.WriteLine("bad line: " + line); return 2; }
            int state = int.Parse(t[0]), bits = int.Parse(t[1]);
            byte[]? key = Hex(t[2]);
            var args = new List<(int, byte[])>();
            int[] types = { SkeinParameters.PARAM_TYPE_PERSONALISATION, SkeinParameters.PARAM_TYPE_PUBLIC_KEY,
                            SkeinParameters.PARAM_TYPE_KEY_IDENTIFIER, SkeinParameters.PARAM_TYPE_NONCE };
            for (int i = 0; i < 4; i++)
                if (Hex(t[3 + i]) is byte[] v) args.Add((types[i], v));
            byte[] msg = Hex(t[7]) ?? Array.Empty<byte>();
            byte[] fields = ViaFields(state, bits, key, args.ToArray(), msg);
            string path = "fields";
            if (key != null && key.Length >= 16 && args.Count <= 1)
            {
                byte[] api = ViaApi(state, bits, key, args.ToArray(), msg);
                if (!api.AsSpan().SequenceEqual(fields)) { Console.Error.WriteLine("api and fields differ: " + line); return 3; }
                path = "api";
            }
            Console.WriteLine(Convert.ToHexString(fields).ToLowerInvariant() + " " + path);
        }
        return 0;
    }
}
